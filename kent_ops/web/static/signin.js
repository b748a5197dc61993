// The sign-in form says how wide the screen is, so an inspector on a phone lands on the
// page made for one (kent-ops serve), and at a desk or on a tablet on the full dashboard.
"use strict";

(() => {
  const width = document.getElementById("width");
  const say = () => { if (width) width.value = String(Math.round(window.innerWidth)); };
  say();
  window.addEventListener("resize", say);
  const form = width && width.form;
  if (form) form.addEventListener("submit", say);
})();
