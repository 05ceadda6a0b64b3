// "Show element refs on <site>": the page overlay's switches, one per site, in the Activity tab.
//
// The overlay is off everywhere until the user turns it on for a site. The sites offered are the
// one the agent acted on last (from activity entries: the panel sees no tabs, since it holds no
// `tabs` permission) and every site where it is on. Turning one on asks Chrome for that origin
// right inside the click (chrome.permissions.request needs the user's gesture); only once Chrome
// grants it does the worker register and inject the overlay (lib/worker/overlay-sites.js).

import { send } from "../lib/page/client.js";
import { KEYS, MSG } from "../lib/shared/config.js";
import { originOf, patternOf } from "../lib/shared/sites.js";
import { h, setText } from "../lib/page/dom.js";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

export class OverlayToggles {
  constructor() {
    this.latest = null; // origin of the latest page the agent acted on
    this.sites = []; // origins where the overlay is on
    this.busy = new Set(); // origins waiting for Chrome or the worker
    this.list = h("ul", { class: "overlay-sites" });
    this.note = h("p", { class: "overlay-note muted", attrs: { role: "status" } });
    this.el = h(
      "div",
      { class: "overlay-toggles", hidden: true, attrs: { role: "group", "aria-label": "Page overlay" } },
      this.list,
      this.note,
    );
    chrome.storage.local.get(KEYS.overlaySites).then((got) => this._setSites(got[KEYS.overlaySites]));
    chrome.storage.onChanged.addListener((changes, area) => {
      if (area === "local" && changes[KEYS.overlaySites]) this._setSites(changes[KEYS.overlaySites].newValue);
    });
  }

  /** An activity entry's URL: its site becomes the one offered first. */
  noteUrl(url) {
    const origin = originOf(url);
    if (!origin || origin === this.latest) return;
    this.latest = origin;
    this._render();
  }

  _setSites(sites) {
    this.sites = Array.isArray(sites) ? sites : [];
    this._render();
  }

  _render() {
    const origins = [...new Set([this.latest, ...this.sites].filter(Boolean))];
    this.el.hidden = origins.length === 0;
    this.list.replaceChildren(...origins.map((origin) => this._row(origin)));
  }

  _row(origin) {
    const site = new URL(origin).host;
    const on = this.sites.includes(origin);
    const input = h("input", {
      type: "checkbox",
      checked: on,
      disabled: this.busy.has(origin),
      attrs: { role: "switch" },
      on: { change: () => this._toggle(origin, input) },
    });
    return h(
      "li",
      { class: "overlay-site", dataset: { origin } },
      h("label", { class: "switch-label", title: origin }, input, h("span", { text: `Show element refs on ${site}` })),
    );
  }

  /** Runs inside the change event: permissions.request must be the first thing it calls. */
  _toggle(origin, input) {
    const on = input.checked;
    const site = new URL(origin).host;
    // Loopback sites are covered by the install-time permission: Chrome asks nothing for them.
    const granting = on ? chrome.permissions.request({ origins: [patternOf(origin)] }) : Promise.resolve(true);
    this.busy.add(origin);
    input.disabled = true;
    input.checked = this.sites.includes(origin); // the switch shows what is, not what is asked
    if (on && !LOOPBACK.has(new URL(origin).hostname))
      setText(this.note, `Chrome is asking whether Sidemirror may show element refs on ${site}…`);
    granting
      .then(async (granted) => {
        if (!granted) {
          setText(this.note, `Not turned on: Chrome did not give access to ${site}.`);
          return;
        }
        await send(MSG.setOverlay, { origin, on });
        const loopback = LOOPBACK.has(new URL(origin).hostname);
        const done = on
          ? `Element refs show on ${site}.`
          : `Element refs no longer show on ${site}${loopback ? "." : "; Sidemirror gave its access back."}`;
        setText(this.note, done);
      })
      .catch((err) => setText(this.note, `Could not turn the overlay ${on ? "on" : "off"} for ${site}: ${err.message}`))
      .finally(() => {
        this.busy.delete(origin);
        this._render();
      });
  }
}
