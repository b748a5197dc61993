// The deputy's gate view (kent-ops serve): draws the view its gate's hub sends, and
// keeps the manual tally's taps on the phone until the broker has them.
//
// What the view shows (the order, its colour, the figures, why they may be old) is
// decided on the server, by the same function as the terminal's gate view; this script
// only draws it. What only the phone knows it says itself: that its link is down, and
// what became of its own taps. Each tap gets a random id and is kept in localStorage
// until the server says the broker has it ("sent"); whatever is not sent is sent again,
// in order, whenever the link returns (the server counts each id once), so a lost
// signal, a reload or a reopened tab loses no tap and counts none twice. A sent tap
// reads "counted" only once the server says the aggregator's status counts it, and
// "not counted by the aggregator: tell the command post" when the server says it was
// sent 15 s ago and is still not counted: in words, never a tick.
"use strict";

(() => {
  const body = document.body;
  const $ = (id) => document.getElementById(id);
  const STORE = body.dataset.store;
  const URL_ = body.dataset.websocket;
  const RESEND_MS = 5000;
  const PING_MS = 5000;
  const SILENT_MS = 12000;
  const CHUNK = 200;
  const SIGNED_OUT = 4001;

  const link = {
    ws: null, open: false, since: null, backoff: 1000, heard: 0, ping: 0,
    ended: "", note: "", timer: null,
  };
  const sentAt = new Map();
  let view = null;

  // -- the taps kept on this phone ---------------------------------------------------

  const NOT_COUNTED = "not counted by the aggregator: tell the command post";
  const MOST_SENT = 2000;  // sent, not yet counted taps remembered (a long refusal's)

  function read() {
    try {
      const kept = JSON.parse(localStorage.getItem(STORE));
      if (kept && Array.isArray(kept.pending)) {
        return {
          pending: kept.pending,
          sent: Array.isArray(kept.sent) ? kept.sent : [],
          counted: Number.isInteger(kept.counted) ? kept.counted : 0,
        };
      }
    } catch (e) { /* unreadable: start again */ }
    return { pending: [], sent: [], counted: 0 };
  }

  function write(kept) {
    localStorage.setItem(STORE, JSON.stringify(kept));
  }

  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID().replaceAll("-", "");
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function tap(direction) {
    const kept = read();  // read again: another tab of this phone may have added some
    kept.pending.push({ id: newId(), d: direction, t: Date.now() });
    write(kept);
    if (navigator.vibrate) navigator.vibrate(12);
    draw();
    send(false);
  }

  function heard(word, ids) {
    // The server's word on some of this phone's taps: sent (the broker has them), late
    // (sent long ago and still not counted), counted (the aggregator's status shows them).
    const these = new Set(ids);
    const kept = read();
    const moved = kept.pending.filter((t) => these.has(t.id));
    kept.pending = kept.pending.filter((t) => !these.has(t.id));
    if (word === "counted") {
      const before = kept.sent.length;
      kept.sent = kept.sent.filter((t) => !these.has(t.id));
      kept.counted += moved.length + before - kept.sent.length;
    } else {
      for (const t of moved) kept.sent.push(t);
      for (const t of kept.sent) if (these.has(t.id)) t.late = word === "late";
      kept.sent = kept.sent.slice(-MOST_SENT);
    }
    write(kept);
    for (const id of ids) sentAt.delete(id);
    link.note = "";
    draw();
  }

  function send(everything) {
    // The taps not yet sent, again every few seconds until the broker has them; on a
    // new connection also the sent ones not yet counted, so the server follows them.
    if (!link.open) return;
    const now = Date.now();
    const kept = read();
    const due = kept.pending.filter((t) => !(now - (sentAt.get(t.id) || 0) < RESEND_MS));
    const all = everything ? kept.sent.concat(due) : due;
    for (let i = 0; i < all.length; i += CHUNK) {
      const chunk = all.slice(i, i + CHUNK);
      link.ws.send(JSON.stringify({ taps: chunk.map((t) => ({ id: t.id, d: t.d })) }));
      for (const t of chunk) sentAt.set(t.id, now);
    }
  }

  // -- the link to the command post -------------------------------------------------------

  function connect() {
    clearTimeout(link.timer);
    if (link.ended || link.ws) return;
    let ws;
    try {
      ws = new WebSocket(URL_);
    } catch (e) {
      lost(false);
      return;
    }
    link.ws = ws;
    let opened = false;
    ws.onopen = () => {
      opened = true;
      link.open = true;
      link.since = null;
      link.backoff = 1000;
      link.heard = Date.now();
      sentAt.clear();
      draw();
      send(true);
    };
    ws.onmessage = (event) => {
      link.heard = Date.now();
      let message;
      try { message = JSON.parse(event.data); } catch (e) { return; }
      if (message.view) { view = message.view; draw(); }
      for (const word of ["sent", "late", "counted"]) {
        if (Array.isArray(message[word])) heard(word, message[word]);
      }
      if (message.refused) { link.note = `Not counted: ${message.refused}.`; draw(); }
      if (message.held) { link.note = `Kept: ${message.held}.`; draw(); }
    };
    ws.onclose = (event) => {
      if (link.ws !== ws) return;
      if (event.code === SIGNED_OUT) {
        link.ended = event.reason || "your sign-in ended";
      }
      lost(!opened);
    };
  }

  function lost(neverOpened) {
    if (link.ws) {
      link.ws.onclose = null;
      try { link.ws.close(); } catch (e) { /* already closed */ }
    }
    link.ws = null;
    link.open = false;
    if (link.since === null) link.since = new Date();
    draw();
    if (link.ended) return;
    const wait = link.backoff;
    link.backoff = Math.min(link.backoff * 2, 5000);
    link.timer = setTimeout(() => (neverOpened ? checkSignedIn() : connect()), wait);
  }

  async function checkSignedIn() {
    // A websocket refused at once may mean the sign-in ran out: the page would redirect.
    try {
      const answer = await fetch("/gate", { redirect: "manual", cache: "no-store" });
      if (answer.type === "opaqueredirect" || answer.status === 401 || answer.status === 403) {
        link.ended = "your sign-in ended";
        draw();
        return;
      }
    } catch (e) { /* no network: try the websocket again */ }
    connect();
  }

  setInterval(() => {
    if (!link.open) return;
    if (Date.now() - link.heard > SILENT_MS) { lost(false); return; }
    link.ping += 1;
    link.ws.send(JSON.stringify({ ping: link.ping }));
    send(false);
  }, PING_MS);

  window.addEventListener("offline", () => { if (link.ws) lost(false); });
  window.addEventListener("online", () => { link.backoff = 1000; connect(); });
  window.addEventListener("storage", (event) => { if (event.key === STORE) draw(); });
  window.addEventListener("resize", () => fit());

  // -- drawing ------------------------------------------------------------------------

  function lines(element, rows) {
    element.replaceChildren(...(rows || []).map((row) => {
      const line = document.createElement("div");
      for (const [text, tag] of row) {
        const span = document.createElement("span");
        if (tag) span.className = `t-${tag}`;
        span.textContent = text;
        line.append(span);
      }
      return line;
    }));
  }

  function clock(moment) {
    // In the event's zone, as the server writes its own times.
    try {
      return new Intl.DateTimeFormat("en-GB", {
        timeZone: (view && view.timezone) || "UTC", hour: "2-digit", minute: "2-digit",
        second: "2-digit", hour12: false,
      }).format(moment);
    } catch (e) {
      return moment.toTimeString().slice(0, 8);
    }
  }

  function taps(n) {
    return n === 1 ? "1 tap" : `${n} taps`;
  }

  function banner(kept) {
    const element = $("banner");
    let text = "";
    let alarm = false;
    if (link.ended) {
      text = `Signed out (${link.ended}): the order is no longer shown`;
      alarm = true;
    } else if (!link.open) {
      const since = link.since ? ` since ${clock(link.since)}` : "";
      const keep = kept.pending.length ? `; ${taps(kept.pending.length)} kept on this phone` : "";
      text = `No link to the command post${since}: the order may have changed${keep}`;
      alarm = true;
    } else if (view && view.problem) {
      text = view.problem;
    }
    element.hidden = !text;
    element.classList.toggle("alarm", alarm);
    element.replaceChildren();
    if (link.ended) {
      element.append(`${text}. `);
      const again = document.createElement("a");
      again.href = "/signin";
      again.textContent = "Sign in again";
      again.style.color = "#fff";
      element.append(again);
    } else {
      element.textContent = text;
    }
    return Boolean(text);
  }

  function pendingLine(kept) {
    // This phone's own taps: counted, sent and waiting for the aggregator, not counted
    // in time (say so, in words), not yet sent (kept here).
    const element = $("pending");
    const parts = [];
    const n = kept.pending.length;
    const late = kept.sent.filter((t) => t.late).length;
    const waiting = kept.sent.length - late;
    parts.push(`This phone: ${taps(kept.counted)} counted`);
    if (late) parts.push(`${taps(late)} ${NOT_COUNTED}`);
    if (waiting) parts.push(`${waiting} sent, not yet counted`);
    if (n) {
      const shown = kept.pending.slice(0, 12).map((t) => (t.d === "in" ? "+" : "−")).join(" ");
      const more = n > 12 ? " …" : "";
      parts.push(`${n} not yet sent (kept here): ${shown}${more}`);
    }
    if (link.note) parts.push(link.note);
    element.textContent = parts.join(" · ");
    element.className = late ? "t-alarm" : n || waiting ? "t-warn" : "t-dim";
    element.hidden = !(kept.counted || n || kept.sent.length || link.note);
  }

  function draw() {
    const kept = read();
    const stale = banner(kept);
    body.classList.toggle("stale", stale);
    if (!view) { pendingLine(kept); return; }
    lines($("header"), [view.header]);
    const order = $("order");
    order.className = `tone-${view.tone}`;
    order.style.background = view.colour;
    $("word").textContent = view.word;
    lines($("details"), view.details);
    lines($("counts"), [view.counts]);
    const counting = view.can_count === true;
    $("tally").hidden = view.can_count === null && !kept.pending.length;
    $("keys").hidden = !counting;
    lines($("tally-lines"), view.tally);
    pendingLine(kept);
    fit();
  }

  function fit() {
    // The word as large as the sign allows, whole: never wrapped, never cut.
    const order = $("order");
    const word = $("word");
    const details = $("details");
    const width = order.clientWidth * 0.92;
    const height = (order.clientHeight - details.offsetHeight) * 0.8;
    word.style.fontSize = "100px";
    const ratio = Math.min(width / word.scrollWidth, height / word.offsetHeight);
    word.style.fontSize = `${Math.max(12, Math.floor(100 * ratio))}px`;
  }

  $("tap-in").addEventListener("click", () => tap("in"));
  $("tap-out").addEventListener("click", () => tap("out"));
  draw();
  connect();
})();
