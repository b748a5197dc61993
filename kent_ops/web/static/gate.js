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
// sent 15 s ago and is still not counted: in words, never a tick. The keeping, the
// sending again and the link to the hub are phone.js's, shared with the inspector's page.
"use strict";

(() => {
  const phone = window.kentPhone;
  const body = document.body;
  const $ = (id) => document.getElementById(id);
  const STORE = body.dataset.store;
  const CHUNK = 200;

  let note = "";
  let view = null;

  // -- the taps kept on this phone ---------------------------------------------------

  const NOT_COUNTED = "not counted by the aggregator: tell the command post";
  const MOST_SENT = 2000;  // sent, not yet counted taps remembered (a long refusal's)

  function read() {
    const kept = phone.load(STORE);
    if (kept && Array.isArray(kept.pending)) {
      return {
        pending: kept.pending,
        sent: Array.isArray(kept.sent) ? kept.sent : [],
        counted: Number.isInteger(kept.counted) ? kept.counted : 0,
      };
    }
    return { pending: [], sent: [], counted: 0 };
  }

  function tap(direction) {
    const kept = read();  // read again: another tab of this phone may have added some
    kept.pending.push({ id: phone.newId(), d: direction, t: Date.now() });
    phone.save(STORE, kept);
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
    phone.save(STORE, kept);
    for (const id of ids) link.forget(id);
    note = "";
    draw();
  }

  function send(everything) {
    // The taps not yet sent, again every few seconds until the broker has them; on a
    // new connection also the sent ones not yet counted, so the server follows them.
    if (!link.open) return;
    const now = Date.now();
    const kept = read();
    const due = kept.pending.filter((t) => link.due(t.id, now));
    const all = everything ? kept.sent.concat(due) : due;
    link.sendChunks("taps", all.map((t) => ({ id: t.id, d: t.d })), { most: CHUNK });
  }

  // -- the link to the command post -------------------------------------------------------

  const link = phone.link({
    url: body.dataset.websocket,
    page: "/gate",
    opened: () => { draw(); send(true); },
    message: (message) => {
      if (message.view) { view = message.view; draw(); }
      for (const word of ["sent", "late", "counted"]) {
        if (Array.isArray(message[word])) heard(word, message[word]);
      }
      if (message.refused) { note = `Not counted: ${message.refused}.`; draw(); }
      if (message.held) { note = `Kept: ${message.held}.`; draw(); }
    },
    changed: () => draw(),
    tick: () => send(false),
  });

  window.addEventListener("storage", (event) => { if (event.key === STORE) draw(); });
  window.addEventListener("resize", () => fit());

  // -- drawing ------------------------------------------------------------------------

  function lines(element, rows) {
    element.replaceChildren(...(rows || []).map((row) => {
      const line = document.createElement("div");
      for (const [text, tag] of row) line.append(phone.tagged(text, tag));
      return line;
    }));
  }

  function clock(moment) {
    return phone.timeIn(view && view.timezone, moment, true);
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
    if (note) parts.push(note);
    element.textContent = parts.join(" · ");
    element.className = late ? "t-alarm" : n || waiting ? "t-warn" : "t-dim";
    element.hidden = !(kept.counted || n || kept.sent.length || note);
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
  link.connect();
})();
