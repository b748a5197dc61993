// What the phone pages of kent-ops serve do alike: the deputy's gate view (gate.js) and
// the inspector's page (inspector.js) load this script first.
//
// Both keep what the person did in the phone's storage (localStorage), each item with a
// random id, until the server has it, and send it again, in order, whenever the link
// returns: the server takes each id once, so a lost signal, a reload or a reopened tab
// loses nothing and sends nothing twice. Both hold one websocket to their hub: pinged
// every few seconds, dropped when silent, opened again with a growing wait, and ended
// (and said so) when the server closes it because the sign-in ended. What is kept and
// how it is drawn is each page's own.
"use strict";

window.kentPhone = (() => {
  const RESEND_MS = 5000;
  const PING_MS = 5000;
  const SILENT_MS = 12000;
  const SIGNED_OUT = 4001;

  function newId() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID().replaceAll("-", "");
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function load(key) {
    // What the page kept under ``key``, or null: nothing kept, or unreadable (start again).
    try {
      return JSON.parse(localStorage.getItem(key));
    } catch (e) {
      return null;
    }
  }

  function save(key, value) {
    localStorage.setItem(key, JSON.stringify(value));
  }

  function timeIn(zone, moment, seconds) {
    // In the event's zone, as the server writes its own times.
    const parts = { hour: "2-digit", minute: "2-digit", hour12: false };
    if (seconds) parts.second = "2-digit";
    try {
      return new Intl.DateTimeFormat("en-GB", { timeZone: zone || "UTC", ...parts }).format(moment);
    } catch (e) {
      return moment.toTimeString().slice(0, seconds ? 8 : 5);
    }
  }

  function tagged(text, tag) {
    // One piece of the view's tagged text: its tag is a t-* class of the page's sheet.
    const span = document.createElement("span");
    if (tag) span.className = `t-${tag}`;
    span.textContent = text;
    return span;
  }

  function link({ url, page, opened, message, changed, tick }) {
    // The websocket to the page's hub. ``opened`` runs on each new connection (send what
    // is kept), ``message`` with each message the hub sends, ``changed`` when the link
    // goes down or ends (redraw), ``tick`` every few seconds while it is up (send what
    // is due again). ``page`` is the page's own address: asked when a websocket is
    // refused at once, it says whether the sign-in ran out.
    const state = {
      ws: null, open: false, since: null, backoff: 1000, heard: 0, ping: 0,
      ended: "", timer: null, connect, due, forget, sendChunks,
    };
    const sentAt = new Map();

    function due(id, now) {
      // Whether the item is to go out now (not sent on this connection in the last few
      // seconds); if so it counts as sent now.
      if (now - (sentAt.get(id) || 0) < RESEND_MS) return false;
      sentAt.set(id, now);
      return true;
    }

    function forget(id) {
      sentAt.delete(id);
    }

    function sendChunks(key, entries, { most = Infinity, chars = Infinity } = {}) {
      // ``entries`` in order, as ``{key: [...]}`` messages within the hub's bounds: at
      // most ``most`` entries or ``chars`` characters of them each.
      let chunk = [];
      let size = 0;
      const flush = () => {
        if (chunk.length) state.ws.send(JSON.stringify({ [key]: chunk }));
        chunk = [];
        size = 0;
      };
      for (const entry of entries) {
        const length = chars === Infinity ? 0 : JSON.stringify(entry).length;
        if (chunk.length && (chunk.length >= most || size + length > chars)) flush();
        chunk.push(entry);
        size += length;
      }
      flush();
    }

    function connect() {
      clearTimeout(state.timer);
      if (state.ended || state.ws) return;
      let ws;
      try {
        ws = new WebSocket(url);
      } catch (e) {
        lost(false);
        return;
      }
      state.ws = ws;
      let wasOpen = false;
      ws.onopen = () => {
        wasOpen = true;
        state.open = true;
        state.since = null;
        state.backoff = 1000;
        state.heard = Date.now();
        sentAt.clear();
        opened();
      };
      ws.onmessage = (event) => {
        state.heard = Date.now();
        let parsed;
        try { parsed = JSON.parse(event.data); } catch (e) { return; }
        message(parsed);
      };
      ws.onclose = (event) => {
        if (state.ws !== ws) return;
        if (event.code === SIGNED_OUT) state.ended = event.reason || "your sign-in ended";
        lost(!wasOpen);
      };
    }

    function lost(neverOpened) {
      if (state.ws) {
        state.ws.onclose = null;
        try { state.ws.close(); } catch (e) { /* already closed */ }
      }
      state.ws = null;
      state.open = false;
      if (state.since === null) state.since = new Date();
      changed();
      if (state.ended) return;
      const wait = state.backoff;
      state.backoff = Math.min(state.backoff * 2, 5000);
      state.timer = setTimeout(() => (neverOpened ? checkSignedIn() : connect()), wait);
    }

    async function checkSignedIn() {
      // A websocket refused at once may mean the sign-in ran out: the page would redirect.
      try {
        const answer = await fetch(page, { redirect: "manual", cache: "no-store" });
        if (answer.type === "opaqueredirect" || answer.status === 401 || answer.status === 403) {
          state.ended = "your sign-in ended";
          changed();
          return;
        }
      } catch (e) { /* no network: try the websocket again */ }
      connect();
    }

    setInterval(() => {
      if (!state.open) return;
      if (Date.now() - state.heard > SILENT_MS) { lost(false); return; }
      state.ping += 1;
      state.ws.send(JSON.stringify({ ping: state.ping }));
      tick();
    }, PING_MS);

    window.addEventListener("offline", () => { if (state.ws) lost(false); });
    window.addEventListener("online", () => { state.backoff = 1000; connect(); });
    return state;
  }

  return { newId, load, save, timeIn, tagged, link };
})();
