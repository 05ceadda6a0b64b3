// Search: this session's whole text (`/workspace/{id}/search`, the part never loaded included),
// or every session on the machine (`/api/search`). Hits list newest first with their snippet;
// choosing one jumps to the item (loading history as needed) or switches to its session.
// `/` focuses the box (keyboard-nav.js). The count is announced; results are buttons. What the
// user types is matched literally by the server; each hit's `matches` ([start, end) UTF-16
// offsets into its snippet, which is what JavaScript string indexes count) are shown as <mark>s,
// built as nodes like every other text (never HTML). When the server found more than it sent, the
// count says so ("50 of 147 results") and "Show more" asks for the next page's worth; the item a
// hit opens shows the search's words highlighted (search-highlight.js).

import { api } from "../lib/page/client.js";
import { h } from "../lib/page/dom.js";
import { dayClock, fullTime } from "../lib/page/format.js";
import { searchAllPath, searchPath } from "./review-api.js";
import { clearSearchHighlight, highlightSearch } from "./search-highlight.js";

const DEBOUNCE_MS = 250;
const PAGE = 50; // hits asked for at first, and added by each "Show more"
const FIND_FRAMES = 30; // frames to wait for an opened item's row to be built
const TYPE_LABELS = {
  user: "Prompt",
  assistant: "Reply",
  thinking: "Thinking",
  tool_use: "Tool call",
  tool_result: "Tool output",
  system: "Notice",
  plan: "Plan",
};

export class SearchView {
  /**
   * @param {object} opts
   * @param {() => {ws: string, session: string} | null} opts.where  the session shown
   * @param {(hit: object) => Promise<boolean>} opts.open  go to a hit (same or other session)
   * @param {(ws: string, session: string) => string} opts.label  "workspace · session" for a hit
   */
  constructor({ where, open, label }) {
    this.where = where;
    this.open = open;
    this.label = label;
    this.gen = 0;
    this.input = h("input", {
      type: "search",
      id: "session-search",
      placeholder: "Search (/)",
      autocomplete: "off",
      attrs: { "aria-label": "Search text", "aria-controls": "search-results" },
    });
    this.scope = h(
      "select",
      { id: "search-scope", attrs: { "aria-label": "Search in" }, on: { change: () => this.run() } },
      h("option", { value: "session", text: "This session" }),
      h("option", { value: "all", text: "All sessions" }),
    );
    this.status = h("p", { class: "search-status", attrs: { role: "status", "aria-live": "polite" } });
    this.results = h("ul", {
      class: "search-results",
      id: "search-results",
      hidden: true,
      attrs: { "aria-label": "Search results" },
    });
    this.input.addEventListener("input", () => {
      clearTimeout(this.timer);
      this.timer = setTimeout(() => this.run(), DEBOUNCE_MS);
    });
    this.input.addEventListener("keydown", (ev) => {
      if (ev.key === "Escape") {
        this.clear();
        this.input.blur();
      } else if (ev.key === "ArrowDown") {
        ev.preventDefault();
        this.results.querySelector("button")?.focus();
      }
    });
    this.form = h(
      "form",
      {
        class: "search-form",
        attrs: { role: "search", "aria-label": "Search sessions" },
        on: { submit: (ev) => (ev.preventDefault(), this.run(true)) },
      },
      this.input,
      this.scope,
    );
    this.limit = PAGE;
    this.more = h("button", {
      type: "button",
      class: "search-more",
      hidden: true,
      text: "Show more results",
      on: { click: () => this.showMore() },
    });
    this.el = h("div", { class: "search-view" }, this.form, this.status, this.results, this.more);
  }

  /** The next page's worth of hits: the same search asked again with a larger limit. */
  showMore() {
    this.limit += PAGE;
    this.run(false, { keepLimit: true });
  }

  focus() {
    this.input.focus();
    this.input.select();
  }

  clear() {
    this.gen += 1;
    this.input.value = "";
    this.results.hidden = true;
    this.results.replaceChildren();
    this.more.hidden = true;
    this.status.textContent = "";
    clearSearchHighlight();
  }

  async run(openFirst = false, { keepLimit = false } = {}) {
    clearTimeout(this.timer);
    const q = this.input.value.trim();
    const gen = ++this.gen;
    if (!keepLimit) this.limit = PAGE;
    if (!q) {
      this.clear();
      return;
    }
    const here = this.where();
    const all = this.scope.value === "all";
    if (!all && !here) return;
    this.status.textContent = "Searching…";
    let data;
    try {
      data = await api(
        all
          ? searchAllPath({ q, limit: this.limit })
          : searchPath(here.ws, { q, session: here.session, limit: this.limit }),
      );
    } catch (err) {
      if (gen !== this.gen) return;
      this.status.textContent =
        err.status === 404
          ? "This server cannot search (update it)"
          : err.status === 503
            ? "The search index is opening or being rebuilt; try again in a moment"
            : `Search failed: ${err.message}`;
      return;
    }
    if (gen !== this.gen) return;
    const hits = Array.isArray(data?.hits) ? data.hits : [];
    this.status.textContent = resultCount(hits.length, data?.total);
    this.results.replaceChildren(...hits.map((hit) => this._hit(hit, all)));
    this.results.hidden = hits.length === 0;
    this.more.hidden = !(Number.isInteger(data?.total) && data.total > hits.length && this.limit < 10000);
    if (openFirst && hits.length) this._go(hits[0]);
  }

  _hit(hit, all) {
    const btn = h(
      "button",
      { type: "button", class: "search-hit", on: { click: () => this._go(hit) } },
      h("span", { class: "hit-type", text: TYPE_LABELS[hit.type] || hit.type || "Item" }),
      all ? h("span", { class: "hit-where", text: this.label(hit.workspace, hit.session) }) : null,
      hit.ts ? h("time", { class: "ts", dateTime: hit.ts, title: fullTime(hit.ts), text: dayClock(hit.ts) }) : null,
      h("span", { class: "hit-snippet" }, highlighted(hit.snippet || "", hit.matches)),
    );
    btn.addEventListener("keydown", (ev) => {
      const li = btn.parentElement;
      const next =
        ev.key === "ArrowDown" ? li.nextElementSibling : ev.key === "ArrowUp" ? li.previousElementSibling : null;
      if (ev.key === "ArrowUp" && !li.previousElementSibling) {
        ev.preventDefault();
        this.input.focus();
      } else if (next) {
        ev.preventDefault();
        next.querySelector("button")?.focus();
      }
    });
    return h("li", {}, btn);
  }

  async _go(hit) {
    this.status.textContent = "Opening…";
    const q = this.input.value;
    const ok = await this.open(hit);
    this.status.textContent = ok ? "Shown in the timeline" : "That item could not be shown";
    if (ok) highlightSearch(await itemElement(hit.item_id), q);
  }
}

/** The opened item's element, once the timeline has built its row (null if it never does). */
async function itemElement(itemId) {
  const selector = `.session-tab .feed [data-item-id="${CSS.escape(String(itemId))}"]`;
  for (let i = 0; i < FIND_FRAMES; i += 1) {
    const el = document.querySelector(selector);
    if (el) return el;
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }
  return null;
}

/** "3 results", or "50 of 1,234 results" when the server found more than it sent. */
function resultCount(shown, total) {
  if (!shown) return "No results";
  const noun = (n) => (n === 1 ? "result" : "results");
  if (!Number.isInteger(total) || total <= shown) return `${shown} ${noun(shown)}`;
  const more = total >= 10000 ? "10,000+" : total.toLocaleString("en-US");
  return `${shown} of ${more} ${noun(total)}`;
}

/** The snippet as text pieces, the matched ones in <mark>: spans that are not well formed
 * (outside the text, overlapping, out of order) are ignored, never trusted. */
export function highlighted(snippet, matches) {
  const parts = [];
  let at = 0;
  for (const span of Array.isArray(matches) ? matches : []) {
    const [start, end] = Array.isArray(span) ? span : [];
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < at || end <= start || end > snippet.length)
      continue;
    if (start > at) parts.push(snippet.slice(at, start));
    parts.push(h("mark", { class: "hit-match", text: snippet.slice(start, end) }));
    at = end;
  }
  if (at < snippet.length) parts.push(snippet.slice(at));
  return parts;
}
