// The inspector's (and the Clerk's) page on a phone (kent-ops serve): draws the view the
// event's hub sends, and sends what the person does by touch, each confirmed with Send.
//
// What the page shows (the figures, their order, how each reads, each alert in full) is
// decided on the server, by the same functions as the terminal's dashboard; this
// script only draws it. What only the phone knows it says itself: that its link is
// down, and which of the person's actions are not yet recorded. Each action gets a
// random id and the moment it was confirmed (on the event's clock, which the hub
// sends), and is kept in localStorage until the aggregator has recorded it; what the
// broker does not have yet is sent again, in order, whenever the link returns (the
// hub publishes each id once), so a lost signal, a reload or a reopened tab loses
// nothing and sends nothing twice. The keeping, the sending again and the link to the
// hub are phone.js's, shared with the deputy's gate view.
"use strict";

(() => {
  const phone = window.kentPhone;
  const body = document.body;
  const $ = (id) => document.getElementById(id);
  const STORE = body.dataset.store;
  const ACCOUNT = body.dataset.account;
  const CLERK = body.dataset.role === "clerk";
  const USER = `${CLERK ? "clerk" : "inspector"}-${ACCOUNT}`;
  const CHUNK_CHARS = 40000;
  const FINISHED_KEPT = 8;
  const FINISHED_SHOWN_MS = 3 * 60 * 1000;
  const RANK = { kept: 0, held: 0, sent: 1, delivered: 2, refused: 3, recorded: 3 };

  const drawn = new Map();
  let view = null;
  let clock = null;
  let account = null;
  let screen = { name: "main" };
  let followed = false;  // the delivered actions followed on this connection

  // -- what this phone keeps ----------------------------------------------------------

  function read() {
    const kept = phone.load(STORE);
    if (kept && Array.isArray(kept.actions)) return kept;
    return { actions: [], clock: null };
  }

  function write(kept) {
    const finished = kept.actions.filter((a) => a.state === "recorded" || a.state === "refused");
    const drop = new Set(finished.slice(0, Math.max(0, finished.length - FINISHED_KEPT)));
    kept.actions = kept.actions.filter((a) => !drop.has(a));
    phone.save(STORE, kept);
  }

  function stamp() {
    // One clock: the hub's, which is the aggregator's when it runs on its sensors'.
    let base = clock;
    if (!base) {
      const saved = read().clock;
      if (saved) base = { now: saved.sensor ? saved.now : Date.now() + saved.offset,
                          sensor: saved.sensor, at: performance.now() };  // prettier-ignore
    }
    if (!base) return new Date().toISOString();
    const ms = base.sensor ? base.now : base.now + (performance.now() - base.at);
    return new Date(ms).toISOString();
  }

  function record(kind, fields, what) {
    const kept = read();
    kept.actions.push({ id: phone.newId(), kind, ...fields, ts: stamp(), made: Date.now(),
                        state: "kept", what });  // prettier-ignore
    write(kept);
    if (navigator.vibrate) navigator.vibrate(12);
    drawPending();
    drawBanner();
    send();
  }

  function answered(answers) {
    const kept = read();
    for (const answer of answers) {
      const action = kept.actions.find((a) => a.id === answer.id);
      if (!action || !(answer.state in RANK)) continue;
      if (RANK[answer.state] < RANK[action.state]) continue;
      action.state = answer.state;
      action.why = answer.why || "";
      if (answer.at) action.at = answer.at;
      if (RANK[answer.state] >= RANK.delivered) link.forget(action.id);
    }
    write(kept);
    drawPending();
    drawBanner();
  }

  function wireAction(action, delivered) {
    const out = { id: action.id, kind: action.kind, ts: action.ts };
    for (const name of ["alert", "comment", "text", "attendance", "reason", "item", "result",
                        "note", "status", "resolution"]) {  // prettier-ignore
      if (action[name] !== undefined) out[name] = action[name];
    }
    if (delivered) out.delivered = true;
    return out;
  }

  function send() {
    if (!link.open) return;
    const now = Date.now();
    const actions = read().actions;
    const batch = [];
    if (!followed) {
      // Delivered before (perhaps to a hub before a restart): followed to their record.
      for (const a of actions) if (a.state === "delivered") batch.push(wireAction(a, true));
      followed = true;
    }
    for (const a of actions) {
      if (RANK[a.state] > RANK.sent) continue;
      if (link.due(a.id, now)) batch.push(wireAction(a, false));
    }
    link.sendChunks("actions", batch, { chars: CHUNK_CHARS });
  }

  // -- the link to the command post -----------------------------------------------------

  const link = phone.link({
    url: body.dataset.websocket,
    page: "/inspector",
    opened: () => {
      followed = false;
      drawBanner();
      drawPending();
      send();
    },
    message: (message) => {
      if (message.now) takeClock(message);
      if (message.view) { view = message.view; draw(); }
      if (message.actions) answered(message.actions);
      if (message.account) { account = message.account; drawBanner(); }
    },
    changed: () => { drawBanner(); drawPending(); },
    tick: () => send(),
  });

  window.addEventListener("storage", (event) => { if (event.key === STORE) drawPending(); });

  function takeClock(message) {
    const now = Date.parse(message.now);
    if (Number.isNaN(now)) return;
    clock = { now, sensor: message.sensor === true, at: performance.now() };
    const kept = read();
    kept.clock = { now, sensor: clock.sensor, offset: now - Date.now() };
    write(kept);
  }

  // -- drawing helpers ------------------------------------------------------------------

  function el(tag, props, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === undefined || value === null || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  function spans(line, props) {
    const node = el("span", props);
    for (const [text, tag] of line || []) node.append(phone.tagged(text, tag));
    return node;
  }

  function span(pair) {
    return pair ? phone.tagged(pair[0], pair[1]) : null;
  }

  function plain(line) {
    return (line || []).map((pair) => pair[0]).join("");
  }

  function changed(key, data) {
    // Redraw a part only when what it shows changed: a finger on a button keeps it.
    const text = JSON.stringify(data === undefined ? null : data);
    if (drawn.get(key) === text) return false;
    drawn.set(key, text);
    return true;
  }

  function clockText(moment) {
    return phone.timeIn(view && view.timezone, moment, false);
  }

  function section(id, label, ...children) {
    // Each part has its place in the page already, in the first screen's order.
    const fresh = el("section", { id, "aria-label": label }, ...children);
    $(id).replaceWith(fresh);
    return fresh;
  }

  function drop(id) {
    $(id).replaceWith(el("section", { id, hidden: true }));
  }

  // -- the main screen --------------------------------------------------------------------

  function drawHeader() {
    if (!view || !changed("header", [view.clock, view.name])) return;
    $("header").replaceChildren(
      el("span", { class: "t-strong", text: view.clock }), " ",
      el("span", { class: "name", text: view.name }),
    );
  }

  function drawAttendance() {
    const a = view.attendance;
    if (!changed("attendance", a)) return;
    const bar = el("div", { class: "bar", "aria-hidden": "true" },
      el("div", { class: `fill lvl-${a.level}`, style: `width:${Math.min(100, a.bar.fill * 100)}%` }),
      a.bar.mark === null ? null : el("div", { class: "mark", style: `left:${a.bar.mark * 100}%` }));
    section("attendance", "Attendance",
      el("div", { class: "figure-row" },
        el("div", { class: "figure-box" },
          el("div", { class: "label", text: "Attendance" }),
          el("div", { id: "figure", class: `figure lvl-${a.level}`, text: a.figure })),
        el("div", { id: "order", class: `order order-${a.order.toLowerCase()}`, text: a.order })),
      spans(a.limits, { class: "limits" }),
      bar,
      a.forecast ? el("div", { class: "forecast", text: a.forecast }) : null,
      spans(a.flags, { class: "flags" }));
  }

  function drawPermit() {
    const p = view.permit;
    if (!changed("permit", [p, view.assembly])) return;
    if (p.alarm) {
      section("permit", "Permit", spans(p.alarm, { class: "permit-alarm" }));
      return;
    }
    section("permit", "Permit",
      el("span", { class: "label", text: "Permit " }), spans(p.words),
      p.outside ? el("span", { text: " · " }) : null, span(p.outside));
  }

  function alertButton(item) {
    if (item.pending) {
      return el("li", { class: "alert pending" },
        el("div", { class: "mark" }, span(item.mark)), spans(item.head, { class: "head" }));
    }
    const classes = ["alert", `sev-${item.severity}`, item.active ? "" : "done",
                     item.flashing ? "flashing" : ""].join(" ");  // prettier-ignore
    return el("li", {},
      el("button", { type: "button", class: classes, "data-key": item.key,
                     onclick: () => openDetail(item.key) },  // prettier-ignore
        el("div", { class: "mark" }, span(item.mark)),
        spans(item.head, { class: "head" }),
        el("div", { class: "body", text: item.body })));
  }

  function drawAlerts() {
    const a = view.alerts;
    if (!changed("alerts", [a.title, a.items, a.more])) return;
    const list = el("ul", { class: "alerts" }, ...a.items.map(alertButton));
    const none = a.items.length ? null : el("p", { class: "t-dim", text: "No alerts." });
    const more = a.more ? el("p", { class: "t-dim",
      text: `and ${a.more} older cleared alerts: see the full dashboard` }) : null;  // prettier-ignore
    section("alerts", "Alerts", el("h2", { text: a.title }), none, list, more);
  }

  function drawStaffing() {
    const s = view.staffing;
    if (!changed("staffing", s)) return;
    const rows = s.rows.map((r) => el("tr", { class: r.tag ? `t-${r.tag}` : null },
      el("th", { scope: "row", text: r.label }),
      el("td", { class: "num", text: r.have }),
      el("td", { class: "limit", text: r.limit })));
    section("staffing", "Staffing and parking", el("h2", { text: s.title }),
      el("table", { class: "staffing" }, el("tbody", {}, ...rows)));
  }

  function table(id, label, data) {
    if (!changed(id, data)) return;
    const head = el("tr", {}, ...data.headings.map(([text, numeric]) =>
      el("th", { scope: "col", class: numeric ? "num" : null, text })));
    const rows = data.rows.map((row) => el("tr", { class: row.down ? "down" : null },
      ...row.cells.map(([text, tag], i) => el("td", {
        class: [data.headings[i] && data.headings[i][1] ? "num" : "", tag ? `t-${tag}` : ""]
          .join(" ").trim() || null, text }))));  // prettier-ignore
    section(id, label, el("h2", { text: data.title }),
      data.rows.length ? el("div", { class: "scroll-x" },
        el("table", { class: "site" }, el("thead", {}, head), el("tbody", {}, ...rows)))
        : el("p", { class: "t-dim", text: "None in the status." }));  // prettier-ignore
  }

  function drawProperties() {
    const props = view.properties || [];
    if (!changed("properties", props)) return;
    if (!props.length) { drop("properties"); return; }
    const rows = props.map((p) => el("tr", {}, el("th", { scope: "row", text: p.name }),
      el("td", { text: p.owner }), el("td", { class: "num", text: p.persons })));
    section("properties", "Properties", el("h2", { text: "Properties" }),
      el("table", { class: "site" }, el("tbody", {}, ...rows)));
  }

  function drawNotes() {
    const notes = view.notes || [];
    if (!changed("notes", notes)) return;
    if (!notes.length) { drop("notes"); return; }
    section("notes", "Latest notes", el("h2", { text: "Latest notes" }),
      el("ul", { class: "notes" }, ...notes.slice(0, 10).map((n) => el("li", {},
        el("span", { class: "t-dim", text: `${n.at} ${n.by}${n.alert ? ` on ${n.alert}` : ""}: ` }),
        el("span", { text: n.text })))));
  }

  function drawMain() {
    const waiting = $("waiting");
    if (!view.figures) {
      waiting.hidden = false;
      waiting.textContent = view.problem || "Waiting for the aggregator's first status…";
      return;
    }
    waiting.hidden = true;
    drawAttendance();
    drawPermit();
    drawAlerts();
    drawStaffing();
    table("gates", "Gates", view.gates);
    table("lots", "Lots", view.lots);
    drawProperties();
    drawNotes();
  }

  // -- the action bar -------------------------------------------------------------------

  function drawActions() {
    const nav = $("actions");
    nav.hidden = screen.name !== "main";
    const permit = view && view.permit;
    const key = [CLERK, permit ? permit.issued : null];
    if (!changed("actions", key)) return;
    const buttons = [];
    if (CLERK) {
      if (permit) {
        buttons.push(permit.issued
          ? el("button", { type: "button", class: "danger", text: "Revoke permit",
                           onclick: () => openPermitForm("revoked") })
          : el("button", { type: "button", text: "Reinstate permit",
                           onclick: () => openPermitForm("issued") }));  // prettier-ignore
      }
    } else {
      buttons.push(
        el("button", { type: "button", text: "Add note", onclick: () => openNoteForm(null) }),
        el("button", { type: "button", text: "Adjust attendance", onclick: openAdjustForm }),
        el("button", { type: "button", text: "Checklist", onclick: openChecklist }),
      );
    }
    nav.replaceChildren(...buttons);
    nav.className = `count-${buttons.length}`;
  }

  // -- screens --------------------------------------------------------------------------

  function show(next, push) {
    screen = next;
    if (push) history.pushState({ screen: next }, "");
    for (const name of ["main", "detail", "checklist", "form"]) {
      $(`screen-${name}`).hidden = name !== next.name;
    }
    drawActions();
    drawScreen(true);
    drawPending();
    const shown = $(`screen-${next.name}`);
    shown.scrollTop = 0;
    if (next.name !== "main") {
      const first = shown.querySelector("textarea, input, h2");
      if (first && first.focus) first.focus({ preventScroll: true });
    }
  }

  window.addEventListener("popstate", (event) => {
    const state = event.state && event.state.screen;
    show(state && state.name !== "form" ? state : { name: "main" }, false);
  });

  function back() {
    if (history.state && history.state.screen && history.state.screen.name !== "main") {
      history.back();
    } else {
      show({ name: "main" }, false);
    }
  }

  function backButton(label) {
    return el("button", { type: "button", class: "back", "aria-label": "Back", onclick: back },
      `‹ ${label || "Back"}`);
  }

  function openDetail(key) { show({ name: "detail", key }, true); }
  function openChecklist() { show({ name: "checklist" }, true); }

  function drawDetail(force) {
    const holder = $("screen-detail");
    const detail = view && view.alerts.details[screen.key];
    const item = view && view.alerts.items.find((i) => i.key === screen.key);
    if (!changed("detail", [screen.key, detail, item && item.flashing]) && !force) return;
    if (!detail) {
      holder.replaceChildren(backButton(), el("p", { class: "t-dim",
        text: "This alert is no longer published." }));  // prettier-ignore
      return;
    }
    const facts = el("dl", { class: "facts" });
    for (const fact of detail.facts) {
      const value = el("dd", { class: fact.fold ? "fold" : null });
      fact.lines.forEach((line, i) => {
        if (i) value.append(el("br"));
        value.append(spans(line));
      });
      facts.append(el("dt", { text: fact.label }), value);
    }
    const history_ = el("ol", { class: "history" }, ...detail.history.map(([at, what]) =>
      el("li", {}, el("span", { class: "t-dim", text: `${at} ` }), el("span", { text: what }))));
    const buttons = CLERK ? null : el("div", { class: "detail-actions" },
      el("button", { type: "button", text: "Acknowledge",
                     onclick: () => openAckForm(screen.key) }),  // prettier-ignore
      el("button", { type: "button", text: "Add note",
                     onclick: () => openNoteForm(screen.key) }));  // prettier-ignore
    holder.replaceChildren(backButton(), spans(detail.title, { class: "title", role: "heading",
      "aria-level": "2" }), buttons, facts, el("h3", { text: "History" }), history_);
  }

  function drawChecklist(force) {
    const holder = $("screen-checklist");
    const data = view && view.checklist;
    if (!changed("checklist", data) && !force) return;
    const parts = [backButton(), el("h2", { text: data ? data.summary : "Checklist" })];
    if (!data || !data.groups.length) {
      parts.push(el("p", { class: "t-dim",
        text: "Waiting for the aggregator's status, which lists the items that apply…" }));
    }
    for (const group of (data && data.groups) || []) {
      parts.push(el("h3", {}, el("span", { text: group.paragraph }), group.deficient
        ? el("span", { class: "t-alarm", text: `  ${group.deficient} deficient` }) : null));
      for (const item of group.items) {
        const mark = (result, word, cls) => el("button", {
          type: "button", class: `${cls}${item.result === result ? " chosen" : ""}`, text: word,
          "aria-pressed": item.result === result ? "true" : "false",
          onclick: () => openMarkForm(item, result) });  // prettier-ignore
        parts.push(el("div", { class: "item", role: "group", "aria-label": `${item.item} ${item.text}` },
          el("div", { class: "item-head" }, span(item.mark), " ",
            el("strong", { text: item.item }), " ", el("span", { text: item.text }), " ",
            el("span", { class: "t-cite", text: item.cite })),
          item.who ? el("div", { class: "t-dim who", text: `marked by ${item.who}` }) : null,
          item.note ? el("div", { class: "note" }, span(item.note)) : null,
          item.alert ? el("div", { class: "t-alarm", text: `${item.alert}: breach held until it is marked OK or N/A` }) : null,
          el("div", { class: "marks" }, mark("ok", "OK", "ok"),
            mark("deficient", "Deficient", "deficient"), mark("n/a", "N/A", "na"))));
      }
    }
    holder.replaceChildren(...parts);
  }

  function drawScreen(force) {
    if (screen.name === "detail") drawDetail(force);
    else if (screen.name === "checklist") drawChecklist(force);
  }

  // -- the forms: each action is confirmed with Send --------------------------------------

  function field(id, label, control) {
    return el("div", { class: "field" }, el("label", { for: id, text: label }), control);
  }

  function openForm({ title, context, fields, validate, make, help }) {
    const holder = $("screen-form");
    const error = el("p", { class: "error", role: "alert", hidden: true });
    const submit = () => {
      const problem = validate();
      if (problem) {
        error.textContent = problem.text;
        error.hidden = false;
        if (problem.field) $(problem.field).focus();
        return;
      }
      const [kind, values, what] = make();
      record(kind, values, what);
      back();
    };
    holder.replaceChildren(
      el("h2", { text: title }),
      ...(context || []),
      ...fields,
      error,
      el("p", { class: "t-dim who-sends",
        text: help || `Sent as ${ACCOUNT}, with your own broker account (${USER}). Kept on ` +
          "this phone until the aggregator has recorded it." }),  // prettier-ignore
      el("div", { class: "form-actions" },
        el("button", { type: "button", class: "send", text: "Send", onclick: submit }),
        el("button", { type: "button", class: "cancel", text: "Cancel", onclick: back })),
    );
    show({ name: "form" }, true);
  }

  const value = (id) => $(id).value.trim();
  const required = (id, text) => (value(id) ? null : { field: id, text });

  function alertLine(key) {
    const detail = view && view.alerts.details[key];
    return detail ? spans(detail.title, { class: "context" }) : null;
  }

  function openAckForm(key) {
    const item = view.alerts.items.find((i) => i.key === key);
    const id = item ? item.id : key;
    openForm({
      title: `Acknowledge ${id}`,
      context: [alertLine(key)],
      fields: [field("f-comment", "Comment (required)",
        el("textarea", { id: "f-comment", rows: "3", maxlength: "4000" }))],
      validate: () => required("f-comment", "Write a comment: what you saw or did."),
      make: () => ["ack", { alert: id, comment: value("f-comment") },
        `acknowledge ${id}: “${value("f-comment")}”`],
    });
  }

  function openNoteForm(key) {
    const item = key && view.alerts.items.find((i) => i.key === key);
    const id = item ? item.id : null;
    openForm({
      title: id ? `Add note about ${id}` : "Add note",
      context: id ? [alertLine(key)] : [],
      fields: [field("f-text", "Note (required)",
        el("textarea", { id: "f-text", rows: "4", maxlength: "4000" }))],
      validate: () => required("f-text", "Write the note."),
      make: () => ["note", id ? { text: value("f-text"), alert: id } : { text: value("f-text") },
        `note${id ? ` about ${id}` : ""}: “${value("f-text")}”`],
    });
  }

  function openAdjustForm() {
    const current = view && view.attendance ? view.attendance.figure : "—";
    openForm({
      title: "Adjust attendance",
      context: [el("p", { class: "context", text: `The counters say ${current}. Attendance ` +
        "becomes the figure you counted; the gates count on from it." })],  // prettier-ignore
      fields: [
        field("f-attendance", "Counted attendance (required)",
          el("input", { id: "f-attendance", type: "number", inputmode: "numeric", min: "0",
                        step: "1", autocomplete: "off" })),  // prettier-ignore
        field("f-reason", "Reason (required)",
          el("textarea", { id: "f-reason", rows: "3", maxlength: "4000" })),
      ],
      validate: () => {
        const text = value("f-attendance");
        if (!/^\d{1,9}$/.test(text)) {
          return { field: "f-attendance", text: "Give the counted attendance, a whole number." };
        }
        return required("f-reason", "Give the reason: how it was counted.");
      },
      make: () => {
        const figure = Number(value("f-attendance"));
        return ["adjust", { attendance: figure, reason: value("f-reason") },
          `set attendance to ${figure.toLocaleString("en-US")}: “${value("f-reason")}”`];
      },
    });
  }

  const RESULT_WORDS = { ok: "OK", deficient: "Deficient", "n/a": "N/A" };

  function openMarkForm(item, result) {
    const deficient = result === "deficient";
    openForm({
      title: `Mark ${item.item} ${RESULT_WORDS[result]}`,
      context: [el("p", { class: "context" }, el("span", { text: `${item.text} ` }),
        el("span", { class: "t-cite", text: item.cite }))],
      fields: [field("f-note", deficient ? "What was found (required)" : "Note (optional)",
        el("textarea", { id: "f-note", rows: "3", maxlength: "4000" }))],
      validate: () => (deficient
        ? required("f-note", "Say what was found: a deficient mark needs a note.") : null),
      make: () => ["inspection", { item: item.item, result, note: value("f-note") },
        `mark ${item.item} ${result}${value("f-note") ? `: “${value("f-note")}”` : ""}`],
    });
  }

  function openPermitForm(status) {
    const permit = view.permit;
    const revoke = status === "revoked";
    const number = permit.number || "(no number)";
    openForm({
      title: `${revoke ? "Revoke" : "Reinstate"} permit ${number}`,
      context: [
        el("p", { class: "context" }, el("span", { text: "Now: " }), spans(permit.words)),
        el("p", { class: "context", text: revoke
          ? "From then on the permit counts as not issued: above 500 persons permit-required " +
            "holds, and every gate is told to HOLD at 500 or more (permit:G, permit:A)."
          : "From then on the permit counts as issued again (permit:G)." }),  // prettier-ignore
      ],
      fields: [
        field("f-resolution", "Town Board resolution (required)",
          el("input", { id: "f-resolution", type: "text", autocomplete: "off",
                        placeholder: "e.g. TB-2027-41", maxlength: "200" })),  // prettier-ignore
        field("f-reason", "Reason", el("textarea", { id: "f-reason", rows: "3", maxlength: "2000" })),
      ],
      help: `Takes effect when the command post receives it. Sent as the Town Clerk ${ACCOUNT}, ` +
        `with your own broker account (${USER}).`,
      validate: () => required("f-resolution",
        "Name the Town Board's resolution: it is the authority for the change."),
      make: () => ["clerk-permit",
        { status, resolution: value("f-resolution"), reason: value("f-reason") },
        `${revoke ? "revoke" : "reinstate"} the permit by resolution ${value("f-resolution")}`],
    });
  }

  // -- what is not yet recorded, and the banner -------------------------------------------

  function stateWords(action) {
    switch (action.state) {
      case "recorded": return [`✓ recorded${action.at ? ` ${action.at}` : ""}`, "good"];
      case "refused": return [`✗ ${action.why || "not sent"}`, "alarm"];
      case "delivered": return ["delivered, not yet recorded by the aggregator", "warn"];
      case "sent": return ["sent, waiting for the broker", "warn"];
      case "held": return [`kept on this phone: ${action.why || "not sent yet"}`, "warn"];
      default:
        return link.open ? ["sending…", "warn"] : ["kept on this phone (no link)", "alarm"];
    }
  }

  function drawPending() {
    // Every action not yet recorded, and the last three finished (for a few minutes).
    const holder = $("pending");
    const actions = read().actions;
    const open = actions.filter((a) => RANK[a.state] < RANK.recorded);
    const finished = actions.filter((a) => RANK[a.state] === RANK.recorded)
      .filter((a) => Date.now() - (a.made || 0) < FINISHED_SHOWN_MS).slice(-3);
    const shown = [...open, ...finished].sort((x, y) => (x.made || 0) - (y.made || 0));
    holder.hidden = !shown.length || screen.name === "form";
    if (holder.hidden) return;
    holder.replaceChildren(
      open.length ? el("h2", { text: `Not yet recorded: ${open.length}` }) : "",
      el("ul", {}, ...shown.map((a) => {
        const [words, tag] = stateWords(a);
        return el("li", { class: `state-${a.state}`, "data-id": a.id, title: a.what },
          el("span", { class: `t-${tag}`, text: words }), el("span", { text: ` · ${a.what}` }));
      })),
    );
  }

  function drawBanner() {
    const holder = $("banner");
    const open = read().actions.filter((a) => RANK[a.state] < RANK.delivered).length;
    const kept = open ? `; ${open} action${open === 1 ? "" : "s"} kept on this phone` : "";
    let text = "";
    let alarm = false;
    if (link.ended) {
      text = `Signed out (${link.ended}): the figures are no longer shown`;
      alarm = true;
    } else if (!link.open) {
      const since = link.since ? ` since ${clockText(link.since)}` : "";
      text = `No link to the command post${since}: the figures may be old${kept}`;
      alarm = true;
    } else if (account && account.problem) {
      text = `${account.problem}: what you send is kept on this phone`;
      alarm = true;
    } else if (view && view.problem) {
      text = view.problem;
    }
    holder.hidden = !text;
    holder.classList.toggle("alarm", alarm);
    holder.replaceChildren(text);
    if (link.ended) {
      holder.append(" ", el("a", { href: "/signin", text: "Sign in again" }));
    }
    body.classList.toggle("stale", Boolean(link.ended || !link.open || (view && view.problem)));
  }

  function draw() {
    drawHeader();
    drawBanner();
    drawMain();
    drawActions();
    drawScreen(false);
  }

  history.replaceState({ screen: { name: "main" } }, "");
  drawPending();
  drawBanner();
  link.connect();
})();
