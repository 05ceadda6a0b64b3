// Filter chips over the session timeline: show only prompts, edits, commands, reads, web, errors
// or sub-agents (any chips pressed: rows matching any of them), and "Next error". A row matches
// when its item, its result or any sub-agent item nested under it does. What is shown is
// announced (aria-live) so a screen reader hears the effect of a chip.

import { h } from "../lib/page/dom.js";

const WEB_TOOL = /^(WebFetch|WebSearch|web_search|fetch)$|^mcp__.*(playwright|chrome|browser|puppeteer)/i;

/** Categories: label and whether one item falls in it (`row` for its result). */
export const CATEGORIES = Object.freeze([
  { id: "prompts", label: "Prompts", test: (item) => item.type === "user" },
  {
    id: "edits",
    label: "Edits",
    test: (item) => item.type === "tool_use" && (item.kind === "edit" || item.kind === "write"),
  },
  { id: "commands", label: "Commands", test: (item) => item.type === "tool_use" && item.kind === "execute" },
  {
    id: "reads",
    label: "Reads",
    test: (item) => item.type === "tool_use" && (item.kind === "read" || item.kind === "search"),
  },
  {
    id: "web",
    label: "Web",
    test: (item) => item.type === "tool_use" && (item.kind === "fetch" || WEB_TOOL.test(item.name || "")),
  },
  { id: "errors", label: "Errors", test: (item, row) => isError(item, row) },
  {
    id: "subagents",
    label: "Sub-agents",
    test: (item, row) => item.type === "tool_use" && (item.kind === "task" || Boolean(row.children?.length)),
  },
]);

/** Whether a row's own item (or its result) is an error. */
export function isError(item, row) {
  if (item.type === "error") return true;
  if (item.type === "system" && /error/.test(item.subtype || "")) return true;
  if (item.type === "turn_complete" && item.status === "failed") return true;
  if (item.type === "tool_result" && item.is_error) return true;
  return Boolean(row?.result?.is_error);
}

function rowMatches(row, tests) {
  if (tests.some((t) => t(row.item, row))) return true;
  return (row.children || []).some((child) => rowMatches(child, tests));
}

export class FilterChips {
  /**
   * @param {import("./timeline.js").Timeline} timeline
   */
  constructor(timeline) {
    this.timeline = timeline;
    this.onChange = null; // a chip was pressed or released
    this.on = new Set();
    this.status = h("span", { class: "visually-hidden", attrs: { role: "status", "aria-live": "polite" } });
    this.chips = CATEGORIES.map((c) =>
      h("button", {
        type: "button",
        class: "filter-chip",
        text: c.label,
        dataset: { filter: c.id },
        attrs: { "aria-pressed": "false" },
        on: { click: () => this.toggle(c.id) },
      }),
    );
    this.clear = h("button", {
      type: "button",
      class: "filter-chip clear",
      text: "All",
      hidden: true,
      on: { click: () => this.set([]) },
    });
    this.nextError = h("button", {
      type: "button",
      class: "link-button next-error",
      text: "Next error",
      title: "Jump to the next error (e; E: previous)",
      on: { click: () => this.jumpToError(1) },
    });
    this.el = h(
      "div",
      { class: "filter-bar", attrs: { role: "group", "aria-label": "Show only" } },
      this.chips,
      this.clear,
      this.nextError,
      this.status,
    );
  }

  toggle(id) {
    const next = new Set(this.on);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    this.set([...next]);
  }

  /** Show only rows in any of the categories `ids` (none: everything). */
  set(ids) {
    this.on = new Set(ids);
    for (const chip of this.chips) chip.setAttribute("aria-pressed", String(this.on.has(chip.dataset.filter)));
    this.clear.hidden = this.on.size === 0;
    const tests = CATEGORIES.filter((c) => this.on.has(c.id)).map((c) => c.test);
    const names = CATEGORIES.filter((c) => this.on.has(c.id)).map((c) => c.label.toLowerCase());
    const shown = this.timeline.setFilter(tests.length ? (row) => rowMatches(row, tests) : null, names.join(", "));
    this.status.textContent = names.length
      ? `Showing ${shown.toLocaleString()} of ${this.timeline.rows.length.toLocaleString()} items: ${names.join(", ")}`
      : `Showing all ${shown.toLocaleString()} items`;
    this.onChange?.();
  }

  /** The labels of the chips pressed, in their order. */
  onLabels() {
    return CATEGORIES.filter((c) => this.on.has(c.id)).map((c) => c.label);
  }

  /** Focus the next (dir 1) or previous (-1) error after the focused item, loading nothing. */
  jumpToError(dir) {
    const { timeline } = this;
    const view = timeline.view;
    const focused = document.activeElement?.closest?.("article");
    let from = dir > 0 ? -1 : view.length;
    if (focused) {
      const k = timeline.vlist.mounted.findIndex((r) => r.el?.contains(focused));
      if (k >= 0) from = timeline.vlist.mountedFrom + k;
    } else {
      // Nothing focused: from the first row on screen.
      const i = Math.max(0, view.indexOf(timeline.vlist.firstOnScreen()));
      from = dir > 0 ? i - 1 : i;
    }
    const errorTests = [(item, row) => isError(item, row)];
    for (let i = from + dir; i >= 0 && i < view.length; i += dir) {
      if (rowMatches(view[i], errorTests)) {
        const row = view[i];
        const nested = firstError(row);
        timeline.reveal((nested && nested !== row ? nested.item.id : row.item.id) || row.item.id, "center");
        this.status.textContent = "Error";
        return true;
      }
    }
    this.status.textContent = dir > 0 ? "No error after this item" : "No error before this item";
    return false;
  }
}

function firstError(row) {
  if (isError(row.item, row)) return row;
  for (const child of row.children || []) {
    const hit = firstError(child);
    if (hit) return hit;
  }
  return null;
}
