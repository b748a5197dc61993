"""The server's few HTML pages: sign in, the dashboard's page, the gate view, the
inspector's page, refusals.

The dashboard's page is textual-serve's own front end (``textual.js``, xterm.js),
served from the textual-serve package with no outside fonts or scripts, so it works on
an event network with no internet. The deputy's gate view is a small page of our own
(``static/gate.js`` and ``gate.css``, no framework) that draws the view its gate's hub
sends; the inspector's page (``static/inspector.js`` and ``inspector.css``) is too, fed
by the event's inspectors' hub; what the two do alike (keeping what the person did on
the phone until the server has it, the link to the hub, the page's column) is
``static/phone.js`` and ``phone.css``, which both load first. All are sized for a phone
held in one hand as well as a tablet or a laptop. The sign-in form says how wide the
screen is (``signin.js``), so an inspector on a phone lands on their page and at a desk
on the full dashboard.
Everything that comes from outside (a name, an error) is escaped. The one inline
script is :data:`INLINE_SCRIPTS`' own, which the Content-Security-Policy allows by its
hash (:mod:`kent_ops.web.guard`); nothing else inline may run.
"""

from __future__ import annotations

from html import escape

__all__ = [
    "INLINE_SCRIPTS",
    "PHONE_BELOW",
    "app_page",
    "gate_page",
    "inspector_page",
    "message_page",
    "on_a_phone",
    "sign_in_page",
]

PHONE_BELOW = 600
"""A screen narrower than this many CSS pixels is a phone's: an inspector's page, not
the full dashboard."""


def on_a_phone(width: object) -> bool:
    """Whether the sign-in form's ``width`` (the screen's CSS pixels) is a phone's."""
    text = str(width or "").strip()
    return text.isascii() and text.isdigit() and 0 < int(text[:6]) < PHONE_BELOW


_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="referrer" content="same-origin">
<title>{title}</title>
<style>
  @font-face {{ font-family: "Roboto Mono"; font-weight: 100 700;
    src: url("/static/fonts/RobotoMono-VariableFont_wght.ttf") format("truetype"); }}
  html, body {{ margin: 0; height: 100%; background: #0c181f; color: #f0f0f0;
    font-family: system-ui, sans-serif; }}
  main {{ max-width: 26rem; margin: 0 auto; padding: 2rem 1.25rem; }}
  h1 {{ font-size: 1.4rem; margin: 0 0 .25rem; }}
  p.event {{ margin: 0 0 1.5rem; color: #a8b3ba; }}
  label {{ display: block; margin: 1rem 0 .35rem; font-size: 1.05rem; }}
  input {{ box-sizing: border-box; width: 100%; font-size: 1.2rem; padding: .7rem;
    border-radius: .4rem; border: 1px solid #587080; background: #12232d; color: #fff; }}
  button, a.button {{ display: block; box-sizing: border-box; width: 100%; margin-top: 1.5rem;
    padding: .9rem; font-size: 1.2rem; border: 0; border-radius: .4rem; background: #1f6feb;
    color: #fff; text-align: center; text-decoration: none; cursor: pointer; }}
  .error {{ background: #5c1a1f; border-left: .3rem solid #f85149; padding: .7rem; }}
</style>
</head>
"""


def sign_in_page(event_id: str, *, error: str = "", name: str = "") -> str:
    """The sign-in form: a name and the person's broker password."""
    error_html = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    return (
        _HEAD.format(title="Sign in · kent-ops")
        + f"""<body>
<main>
<h1>kent-ops</h1>
<p class="event">{escape(event_id)}</p>
{error_html}
<form method="post" action="/signin" autocomplete="on">
<label for="name">Name</label>
<input id="name" name="name" value="{escape(name)}" autocapitalize="none" autocorrect="off"
 autocomplete="username" required autofocus>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<input type="hidden" id="width" name="width" value="">
<button type="submit" id="signin">Sign in</button>
</form>
</main>
<script src="/assets/signin.js"></script>
</body>
</html>
"""
    )


def message_page(title: str, text: str, *, link: tuple[str, str] | None = None) -> str:
    """A page that says one thing (a refusal, a sign-out), with one way on."""
    more = f'<a class="button" href="{escape(link[0])}">{escape(link[1])}</a>' if link else ""
    return (
        _HEAD.format(title=f"{escape(title)} · kent-ops")
        + f"""<body>
<main>
<h1>{escape(title)}</h1>
<p id="message">{escape(text)}</p>
{more}
</main>
</body>
</html>
"""
    )


_APP_STYLE = """<link rel="stylesheet" href="/static/css/xterm.css">
<link rel="preload" href="/static/fonts/RobotoMono-VariableFont_wght.ttf" as="font"
 type="font/ttf" crossorigin>
<script src="/static/js/textual.js"></script>
<style>
  body { overflow: hidden; }
  #terminal { position: absolute; inset: 0; }
  .closed { display: none; position: absolute; inset: 0; z-index: 10; background: #0c181fee;
    align-items: center; justify-content: center; }
  body.-closed .closed { display: flex; }
  .closed main { text-align: center; }
  .closed h1, .closed p { background: transparent; color: #f0f0f0; }
  form.signout button { background: #39444c; }
</style>
"""


_NO_KEYBOARD = """
window.addEventListener("load", () => {
  for (const area of document.querySelectorAll("textarea")) area.setAttribute("inputmode", "none");
});
"""
INLINE_SCRIPTS = (_NO_KEYBOARD,)
"""Every inline script a page may carry, exactly as written into it."""


def app_page(*, title: str, websocket_url: str, font_size: int, keyboard: bool) -> str:
    """The page that runs one app: textual-serve's terminal, and a notice when it ends.

    ``keyboard=False`` keeps a phone's on-screen keyboard away (the gate view is all
    buttons); the dashboard needs one for comments and notes.
    """
    no_keyboard = f"<script>{_NO_KEYBOARD}</script>\n" if not keyboard else ""
    return (
        _HEAD.format(title=f"{escape(title)} · kent-ops")
        + _APP_STYLE
        + no_keyboard
        + f"""<body>
<div id="terminal" class="textual-terminal"
 data-session-websocket-url="{escape(websocket_url)}" data-font-size="{int(font_size)}"></div>
<div class="closed" id="closed">
<main>
<h1>Session ended</h1>
<p>The app was closed, or your sign-in ran out.</p>
<a class="button" id="again" href="/">Open again</a>
<form class="signout" method="post" action="/signout"><button type="submit">Sign out</button></form>
</main>
</div>
</body>
</html>
"""
    )


def _phone_head(*, title: str, theme: str, page: str) -> str:
    """The head of a page of our own for a phone: ``title`` (escaped already), the
    browser's colour around it, and what it loads: phone.css and phone.js, which both
    such pages share, then ``page``'s own sheet and script."""
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="referrer" content="same-origin">
<meta name="theme-color" content="{theme}">
<title>{title}</title>
<link rel="stylesheet" href="/assets/phone.css">
<link rel="stylesheet" href="/assets/{page}.css">
<script src="/assets/phone.js" defer></script>
<script src="/assets/{page}.js" defer></script>
</head>
"""


def gate_page(*, event_id: str, gate: str, account: str, websocket_url: str) -> str:
    """The deputy's gate view: the order, the figures and the tally, drawn by ``gate.js``.

    The page keeps the deputy's taps in the browser's storage under a key of its own
    (event, gate and account), so a reload or a reopened tab finds the ones the broker
    does not have yet, and those it has that the aggregator has not counted.
    """
    store = f"kent-ops:{event_id}:{gate}:{account}"
    head = _phone_head(title=f"Gate {escape(gate)} · kent-ops", theme="#0c181f", page="gate")
    return f"""{head}<body data-websocket="{escape(websocket_url)}" data-store="{escape(store)}"
 data-gate="{escape(gate)}">
<header id="header"><span class="t-strong">Gate {escape(gate)}</span></header>
<div id="banner" role="status" hidden></div>
<section id="order" class="tone-none" aria-live="polite">
<div id="word">…</div>
<div id="details"></div>
</section>
<div id="counts"></div>
<section id="tally" hidden>
<div id="tally-lines"></div>
<div id="pending" hidden></div>
<div id="keys">
<button type="button" id="tap-in">+ in</button>
<button type="button" id="tap-out">− out</button>
</div>
</section>
<footer>
<span id="who">{escape(account)} · {escape(event_id)}</span>
<form class="signout" method="post" action="/signout"><button type="submit">Sign out</button></form>
</footer>
</body>
</html>
"""


def inspector_page(*, event_id: str, account: str, role: str, websocket_url: str) -> str:
    """The inspector's (or the Clerk's) page: what the event's hub sends, drawn by
    ``inspector.js``, with the person's actions by touch.

    What the person sent and is not yet recorded is kept in the browser's storage
    under a key of its own (event and account), so a reload or a reopened tab finds it.
    """
    store = f"kent-ops:{event_id}:inspector:{account}"
    who = f"clerk {account}" if role == "clerk" else account
    head = _phone_head(title=f"{escape(event_id)} · kent-ops", theme="#0b1419", page="inspector")
    return f"""{head}<body data-websocket="{escape(websocket_url)}" data-store="{escape(store)}"
 data-account="{escape(account)}" data-role="{escape(role)}" data-event="{escape(event_id)}">
<header id="top">
<div id="header"><span class="t-strong">{escape(event_id)}</span></div>
<div id="banner" role="status" hidden></div>
</header>
<main id="screen-main" class="screen">
<p id="waiting" class="t-dim">Waiting for the command post…</p>
<section id="attendance" hidden></section>
<section id="permit" hidden></section>
<section id="alerts" hidden></section>
<section id="staffing" hidden></section>
<section id="gates" hidden></section>
<section id="lots" hidden></section>
<section id="properties" hidden></section>
<section id="notes" hidden></section>
</main>
<section id="screen-detail" class="screen" hidden aria-label="Alert"></section>
<section id="screen-checklist" class="screen" hidden aria-label="Checklist"></section>
<section id="screen-form" class="screen" hidden aria-label="Action"></section>
<section id="pending" aria-live="polite" hidden></section>
<nav id="actions" aria-label="Actions"></nav>
<footer>
<span id="who">{escape(who)} · {escape(event_id)}</span>
<a id="full" href="/dashboard">Full dashboard</a>
<form class="signout" method="post" action="/signout"><button type="submit">Sign out</button></form>
</footer>
</body>
</html>
"""
