// The `?` overlay: the timeline's keys (keyboard-nav.js KEYS), in a modal dialog. A native
// <dialog> opened with showModal: the browser gives it role=dialog, keeps focus inside it and
// closes it on Escape; focus goes back to where it was when it closes.

import { h } from "../lib/page/dom.js";
import { KEYS } from "./keyboard-nav.js";

export class KeysHelp {
  constructor() {
    this.returnTo = null;
    const title = h("h2", { id: "keys-help-title", text: "Keyboard shortcuts" });
    const rows = KEYS.map(([keys, what]) =>
      h("tr", {}, h("th", { attrs: { scope: "row" } }, h("kbd", { text: keys })), h("td", { text: what })),
    );
    this.close = h("button", { type: "button", class: "button", text: "Close", on: { click: () => this.hide() } });
    this.el = h(
      "dialog",
      { class: "keys-help", attrs: { "aria-labelledby": "keys-help-title", "aria-modal": "true" } },
      title,
      h("p", { class: "hint", text: "In the session timeline, with an item or anything in it focused." }),
      h("table", {}, h("tbody", {}, ...rows)),
      h("div", { class: "keys-help-actions" }, this.close),
    );
    this.el.addEventListener("close", () => {
      this.returnTo?.focus({ preventScroll: true });
      this.returnTo = null;
    });
  }

  show() {
    if (this.el.open) return;
    if (!this.el.isConnected) document.body.append(this.el);
    this.returnTo = /** @type {HTMLElement | null} */ (document.activeElement);
    this.el.showModal();
    this.close.focus();
  }

  hide() {
    if (this.el.open) this.el.close();
  }
}
