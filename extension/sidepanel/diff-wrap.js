// Whether diffs wrap their long lines at the panel's width (the default: at 420 px a line of
// 45 characters ran off the edge) or keep each line on one row and scroll sideways, as some
// readers want for code. One choice for every diff, remembered across panels; each diff has
// the switch (a toggle button), and all of them follow the one choice.

import { h } from "../lib/page/dom.js";

const STORE_KEY = "sidemirror.diffWrap"; // localStorage: "off" or absent (wrap)
const NO_WRAP = "diff-nowrap"; // on <html>: review.css keeps diff lines whole there

let wrap = remembered();
document.documentElement.classList.toggle(NO_WRAP, !wrap);

/** The switch, for one diff's tools row. */
export function wrapToggle() {
  return h("button", {
    type: "button",
    class: "diff-wrap-toggle",
    text: "Wrap lines",
    title: "Wrap long lines at the panel's width, or keep each line whole and scroll sideways",
    attrs: { "aria-pressed": String(wrap) },
    on: { click: () => setWrap(!wrap) },
  });
}

function setWrap(on) {
  wrap = on;
  document.documentElement.classList.toggle(NO_WRAP, !on);
  for (const button of document.querySelectorAll(".diff-wrap-toggle")) {
    button.setAttribute("aria-pressed", String(on));
  }
  try {
    if (on) localStorage.removeItem(STORE_KEY);
    else localStorage.setItem(STORE_KEY, "off");
  } catch {
    /* storage unavailable: the choice lasts for this panel */
  }
}

function remembered() {
  try {
    return localStorage.getItem(STORE_KEY) !== "off";
  } catch {
    return true;
  }
}
