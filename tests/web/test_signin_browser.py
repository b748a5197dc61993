"""Sign-in attacks that need a browser, in Debian's chromium against a real ``kent-ops serve``.

A page on another site (``http://localhost:…``, another site than ``127.0.0.1``) that
posts the sign-in form by itself must not sign the visitor's browser in to the page
author's account. And the Content-Security-Policy that keeps other sites' scripts out
must let the gate view itself work: drawn, tapped, counted, with no violation.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from browser_support import IPHONE_14, device_context, sign_in
from field_support import TOPICS, Field, password
from live_support import wait_until
from playwright.sync_api import Browser

pytestmark = [pytest.mark.integration, pytest.mark.browser, pytest.mark.timeout(180)]

DEPUTY_PW = password("deputy-north")
_NOTE_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
  (e) => window.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`));
"""


class _AttackerPage(BaseHTTPRequestHandler):
    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def attacker_site(served: tuple[str, subprocess.Popen[bytes]]) -> Iterator[str]:
    """Another site whose page posts the sign-in form, with its author's account, at once."""
    base, _ = served
    handler = type("Page", (_AttackerPage,), {"page": f"""<!DOCTYPE html>
<html><body><p>Free festival wristbands!</p>
<form id="f" method="post" action="{base}/signin">
<input name="name" value="jsmith"><input name="password" value="{DEPUTY_PW}">
</form>
<script>document.getElementById("f").submit();</script>
</body></html>""".encode()})  # fmt: skip
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://localhost:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_a_page_elsewhere_cannot_sign_a_phone_in_to_its_authors_account(
    served: tuple[str, subprocess.Popen[bytes]], iphone: Browser, attacker_site: str
) -> None:
    base, _ = served
    context = device_context(iphone, IPHONE_14)
    page = context.new_page()
    with page.expect_response(f"{base}/signin") as posted:
        page.goto(attacker_site)
    assert posted.value.status == 403
    page.wait_for_load_state()
    assert "another site" in page.inner_text("#message")
    assert not [c for c in context.cookies() if c["name"] == "kent_ops_session"]
    page.goto(f"{base}/")  # the victim opens kent-ops later: not signed in as anyone
    assert page.url == f"{base}/signin"
    context.close()


def test_the_content_security_policy_lets_the_gate_view_work(
    field: Field, served: tuple[str, subprocess.Popen[bytes]], iphone: Browser
) -> None:
    base, _ = served
    context = device_context(iphone, IPHONE_14)
    context.add_init_script(_NOTE_VIOLATIONS)
    page = context.new_page()
    with page.expect_response(f"{base}/gate") as opened:
        sign_in(page, base, "jsmith", DEPUTY_PW)
    headers = opened.value.headers
    csp = headers["content-security-policy"]
    assert "frame-ancestors 'none'" in csp
    assert "default-src 'none'" in csp
    assert f"connect-src 'self' wss://{base.removeprefix('https://')}" in csp
    assert headers["strict-transport-security"] == "max-age=31536000"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["x-frame-options"] == "DENY"
    assert headers["referrer-policy"] == "same-origin"
    assert headers["server"] == "kent-ops"

    page.wait_for_selector("#tap-in", state="visible", timeout=30_000)
    before = (field.watcher.json(TOPICS.status) or {}).get("gates", {}).get("north-manual") or {}
    page.tap("#tap-in")
    wait_until(lambda: page.inner_text("#pending").startswith("This phone: 1 tap counted"),
               15, "the tap counted")  # fmt: skip

    def counted() -> bool:
        status = field.watcher.json(TOPICS.status) or {}
        manual = status.get("gates", {}).get("north-manual") or {}
        return manual.get("in") == before.get("in", 0) + 1

    wait_until(counted, 15, "the aggregator to count the tap")
    assert page.evaluate("window.__violations") == []
    # The page runs no inline script at all: the policy needs no hash for it.
    assert page.evaluate("[...document.scripts].every((s) => s.src)")
    context.close()
