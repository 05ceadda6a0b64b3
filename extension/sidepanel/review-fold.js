// The review tools, folded behind one row above the timeline: search, the Changes view, the
// pinned plan and the filter chips. At 420 px they took nine lines and, with Changes open,
// pushed the feed down to a third of the panel. The row says what is folded ("Search, changes ·
// Plan 3/7 · Filters", or which filters are on, so a filtered feed is never a surprise) and
// opens it; "Next error" and the filters' announcements stay in the row, so they work folded.
// Open, the tools scroll within a sixth of the panel's height: the feed keeps the rest.
// Folded by default; the reader's choice is remembered across panels.
//
// The button is a disclosure (aria-expanded, aria-controls): a screen reader says "collapsed" /
// "expanded" as it toggles, and it is reached with Tab like any button.

import { h } from "../lib/page/dom.js";

const STORE_KEY = "sidemirror.reviewTools"; // localStorage: "open" or absent (folded)
let nextId = 0;

export class ReviewFold {
  /**
   * @param {object} parts
   * @param {import("./plan-pin.js").PlanPin} parts.plan
   * @param {import("./filter-chips.js").FilterChips} parts.filters
   * @param {HTMLElement[]} parts.tools  shown first in the fold: search and the Changes view
   */
  constructor({ plan, filters, tools }) {
    this.plan = plan;
    this.filters = filters;
    this.body = h("div", { class: "review-more", id: `review-more-${++nextId}` }, tools, plan.el, filters.el);
    this.label = h("span", { class: "review-fold-label" });
    this.button = h(
      "button",
      {
        type: "button",
        class: "review-fold-toggle",
        attrs: { "aria-expanded": "false", "aria-controls": this.body.id },
        on: { click: () => this.setOpen(!this.open, true) },
      },
      h("span", { class: "fold-mark", attrs: { "aria-hidden": "true" }, text: "▸" }),
      this.label,
    );
    // Kept outside the fold: a live region inside a hidden element is never read out.
    this.row = h("div", { class: "review-fold" }, this.button, filters.nextError, filters.status);
    this.setOpen(remembered(), false);
    this.update();
  }

  /** Open or fold; `remember`: the reader chose it (kept for the next panel). */
  setOpen(open, remember) {
    this.open = open;
    this.body.hidden = !open;
    this.button.setAttribute("aria-expanded", String(open));
    if (!remember) return;
    try {
      if (open) localStorage.setItem(STORE_KEY, "open");
      else localStorage.removeItem(STORE_KEY);
    } catch {
      /* storage unavailable: the choice lasts for this panel */
    }
  }

  /** The row's words follow the plan's progress and the filters that are on. */
  update() {
    const parts = ["Search, changes"];
    if (!this.plan.el.hidden) parts.push(`Plan ${this.plan.progress.textContent}`);
    const on = this.filters.onLabels();
    parts.push(on.length ? `Showing ${on.join(", ").toLowerCase()}` : "Filters");
    const text = parts.join(" · ");
    if (this.label.textContent !== text) this.label.textContent = text;
    this.button.classList.toggle("filtered", on.length > 0);
  }
}

function remembered() {
  try {
    return localStorage.getItem(STORE_KEY) === "open";
  } catch {
    return false;
  }
}
