// The session timeline: the list of projected session items (docs/api.md) in the side panel.
// This file keeps what is shown (snapshots, live items, history pages, the filter, going to an
// item); where each item goes among the rows (dedupe, results on their cards, nesting, partial
// text) is timeline-model.js, rows and how they are built timeline-rows.js, what each item looks
// like item-renderers.js, and which rows are in the DOM at all virtual-list.js (only those near
// the viewport).
//
// Every element built carries `data-item-id` per item, so what is rendered can be counted
// against the server's log. Tool results attach to their tool card, sub-agent items nest under
// their Task card (via parent_tool_use_id).

import { h } from "../lib/page/dom.js";
import { byteSize } from "../lib/page/format.js";
import { RewindFolds, buildGroup, isRewind, setOpen } from "./rewinds.js";
import { buildRow, estimateHeight, isBuilt, noteHeight, topOf } from "./timeline-rows.js";
import { TimelineModel } from "./timeline-model.js";
import { appendLater, holdBack, showStart, updateLaterNote } from "./timeline-window.js";
import { VirtualList } from "./virtual-list.js";

/** The number in an item id `<epoch>.<seq>` (ids order by it within a session). */
export const seqOf = (id) => Number(String(id).split(".").pop()) || 0;

export class Timeline extends TimelineModel {
  /**
   * @param {HTMLElement} scroller  the scrolling container the timeline lives in
   * @param {object} opts
   * @param {(itemId: string) => Promise<object>} opts.fetchFull  fetch one full item
   * @param {(unseen: number) => void} opts.onUnseen  new items arrived while scrolled up (0 = none)
   * @param {() => void} [opts.onRender]  after the rows on screen changed
   * @param {(items: object[], reset: boolean) => void} [opts.onItems]  items held (snapshot, page, live)
   * @param {(card: object, result: object) => void} [opts.onToolResult]  a tool card got its result
   */
  constructor(scroller, { fetchFull, onUnseen, onRender, onItems, onToolResult = null }) {
    super();
    /** @type {(() => void) | null} set by the history loader (history-loader.js) */
    this.onLoadEarlier = null;
    /** @type {(() => void) | null} the session's first items replace the window (history-loader.js) */
    this.onGoStart = null;
    /** @type {(() => void) | null} the next page after the window (history-loader.js) */
    this.onLoadLater = null;
    /** @type {(() => void) | null} back to the session's latest items (history-loader.js) */
    this.onGoLatest = null;
    this.scroller = scroller;
    this.onItems = onItems;
    this.fetchFull = fetchFull;
    this.onUnseen = onUnseen;
    /** @type {import("./item-renderers.js").RenderContext} */
    this.renderCtx = {
      fetchFull: (id) => this.fetchFull(id),
      onToolCard: () => {}, // rows hold their card (timeline-rows.js)
      onToolResult,
      toolName: (toolUseId) => this.tools.get(toolUseId)?.item.name ?? null,
    };
    this.earlier = h("div", { class: "earlier", hidden: true, attrs: { role: "status" } });
    this.list = h("div", {
      class: "feed",
      attrs: { role: "feed", "aria-label": "Session timeline", "aria-busy": "false" },
    });
    // A filter that matches nothing says so (a blank timeline reads as a broken one).
    this.noMatch = h("p", { class: "filter-empty", hidden: true, attrs: { role: "status" } });
    // Below the list while the window shows the session's start: the items after it.
    this.laterNote = h("div", { class: "later", hidden: true, attrs: { role: "status" } });
    scroller.append(this.earlier, this.list, this.noMatch, this.laterNote);
    this.vlist = new VirtualList({
      scroller,
      list: this.list,
      build: (row) => (row.fold ? buildGroup(row) : buildRow(row, this.renderCtx)),
      estimate: estimateHeight,
      onMeasure: noteHeight,
      onRender: () => this._rendered(onRender),
    });
    scroller.addEventListener("scroll", () => {
      if (this.vlist.pinned) this._setUnseen(0);
    });
    this.filter = null;
    this.filterLabel = "";
    this.folds = new RewindFolds((group) => this._toggleFold(group)); // turns a rewind abandoned
    this.reset();
  }

  reset() {
    this.clearModel();
    this.folds.clear();
    this.total = 0; // items the session holds, as the server last said
    this.skippedBytes = 0;
    this.unseen = 0;
    this.history = null; // "more" | "loading" | "start" | null (see history-loader.js)
    // The window ends before the session does (a jump to its start): live items wait here.
    this.later = false;
    this.heldBack = [];
    this.heldBackLost = false;
    this._view(this.rows, "bottom");
    this._updateEarlier();
    this._updateLater();
  }

  /** Replace everything with a snapshot: `items` are the latest of `total`, and
   * `skippedBytes` of the transcript before them were not read by the server. */
  load(items, total, skippedBytes = 0) {
    this.reset();
    this.skippedBytes = skippedBytes > 0 ? skippedBytes : 0;
    this.list.setAttribute("aria-busy", "true");
    this.batch = true;
    try {
      for (const item of items) this._add(item);
    } finally {
      this.batch = false;
    }
    this.total = Math.max(total || 0, this.byId.size);
    this.folds.update(this.rows);
    this._view(this._visibleRows(), "bottom");
    this._updateEarlier();
    this.list.setAttribute("aria-busy", "false");
    this._setUnseen(0);
    this.onItems?.(items, true);
  }

  /** Add one live item. */
  add(item) {
    if (this.later) {
      holdBack(this, item);
      return;
    }
    const before = this.rows.length;
    const stored = typeof item.seq === "number" && item.seq > 0;
    if (!this._add(item)) return;
    if (stored && item.type !== "tool_progress") this.total += 1;
    const fresh = this.rows.slice(before).filter((row) => this._shows(row));
    if (isRewind(item)) {
      // A rewind folds turns already shown: the view is made again, the reader's place kept
      // (reading a turn it folds: at the group that now stands in for it).
      this.vlist.syncPinned();
      const anchor = this.vlist.pinned ? "bottom" : this.vlist.anchor() || "anchor";
      this.folds.update(this.rows);
      const standIn = typeof anchor === "object" && this.folds.standIn(anchor.row);
      this._view(this._visibleRows(), standIn ? { row: standIn, delta: 0 } : anchor);
    } else if (fresh.length) {
      if (this.view !== this.rows) this.view.push(...fresh);
      this.vlist.append(); // the view array is the list's own: it only needs to render
      this._syncEmpty();
    }
    if (!this.vlist.pinned && stored) this._setUnseen(this.unseen + 1);
    this.onItems?.([item], false);
  }

  /** Earlier items (a history page, oldest first): they go above what is shown, which stays
   * where it is on screen. Items already held are skipped. */
  prepend(items, history = this.history) {
    const older = items.filter((i) => typeof i.seq === "number" && i.seq < this.firstSeq);
    // Taken before the marker above the list changes: the row on screen stays where it was.
    this.vlist.syncPinned();
    const anchor = this.vlist.pinned ? "bottom" : this.vlist.anchor() || "anchor";
    this.setHistory(older.length ? history : "start");
    if (!older.length) return 0;
    this.placeEarlier(older);
    this.folds.update(this.rows);
    this._view(this._visibleRows(), anchor);
    this._updateEarlier();
    this.onItems?.(older, false);
    return older.length;
  }

  /** The session's first items (a jump to its start) replace what is shown; `later`: items
   * follow them that are not loaded (read on with `appendLater`). */
  showStart(items, later) {
    showStart(this, items, later);
  }

  /** The items after the window (oldest first) go below it; see timeline-window.js. */
  appendLater(items, later) {
    return appendLater(this, items, later);
  }

  /** The id of the latest item held (the page after the window starts after it). */
  lastItemId() {
    const first = this.firstItemId();
    return first && this.lastSeq ? `${first.slice(0, first.lastIndexOf("."))}.${this.lastSeq}` : null;
  }

  atBottom() {
    return this.vlist.atBottom();
  }

  scrollToBottom() {
    if (this.later) {
      this.onGoLatest?.(); // the end is not loaded: the latest items replace the window
      return;
    }
    this.vlist.scrollToBottom();
    this._setUnseen(0);
  }

  /** Show only rows for which `fn(row)` is true (null: all), `label` naming what it keeps.
   * Returns how many are shown. */
  setFilter(fn, label = "") {
    this.filter = fn;
    this.filterLabel = label;
    const pinned = this.vlist.pinned;
    this._view(this._visibleRows(), pinned ? "bottom" : "anchor");
    return fn ? this.rows.filter((r) => this._shows(r)).length : this.rows.length;
  }

  /** The row holding an item (nested rows and results included), or undefined. */
  rowOf(id) {
    return this.byId.get(id);
  }

  /** Scroll an item into view and focus it; false when it is not loaded or filtered out. */
  reveal(id, align = "center") {
    const row = this.byId.get(id);
    if (!row) return false;
    const top = topOf(row);
    if (this.folds.reveal(top)) this._view(this._visibleRows(), "anchor");
    const i = this.view.indexOf(top);
    if (i < 0) return false;
    this.vlist.scrollToIndex(i, align);
    if (!top.el) return false;
    const el = top.el.querySelector(`[data-item-id="${CSS.escape(id)}"]`) || top.el;
    if (el !== top.el) {
      // Nested (a sub-agent's item, a result): open what hides it and bring it on screen.
      for (let d = el.closest("details:not([open])"); d; d = d.parentElement?.closest("details:not([open])"))
        d.open = true;
      el.scrollIntoView({ block: "nearest" });
    }
    el.closest("article")?.focus({ preventScroll: true });
    return true;
  }

  _replace(old, row) {
    if (old.parent) {
      const siblings = old.parent.children;
      siblings[siblings.indexOf(old)] = row;
      row.parent = old.parent;
      if (isBuilt(old)) old.el.replaceWith(buildRow(row, this.renderCtx));
      return;
    }
    const i = this.rows.indexOf(old);
    if (old.el?.isConnected) {
      // On screen: swap the element in place (the list keeps the row's measured height).
      row.h = old.h;
      buildRow(row, this.renderCtx);
      this.vlist.swap(old, row);
    } else this.vlist.replace(old, row); // the list's rows are the view
    if (this.rows[i] === old) this.rows[i] = row;
  }

  /** A row changed while not built: its element and height are made again when it shows. */
  _stale(row) {
    if (this.batch || this.paging) return; // the whole list is laid out afterwards
    const top = topOf(row);
    if (top.el && !top.el.isConnected) this.vlist.forget(top);
    this.vlist.changed(top);
  }

  // --- the view (filter) ---

  _shows(row) {
    return !this.filter || this.filter(row);
  }

  /** A row that now passes the filter (its result failed, a sub-agent edited) comes into view. */
  _refilter(row) {
    if (!this.filter || this.batch || this.paging) return;
    const top = topOf(row);
    if (this.view.includes(top) || !this.filter(top) || this.folds.hides(top)) return;
    this._view(this._visibleRows(), this.vlist.pinned ? "bottom" : "anchor");
  }

  /** The rows the list shows: those the filter passes, less the turns folded by a rewind. */
  _visibleRows() {
    return this.folds.view(this.filter ? this.rows.filter((r) => this._shows(r)) : this.rows);
  }

  /** The reader opened or closed a rewind's group: it stays where it is on screen. */
  _toggleFold(group) {
    setOpen(group, !group.fold.open);
    const el = group.el;
    const anchor = el?.isConnected
      ? { row: group, delta: this.scroller.getBoundingClientRect().top - el.getBoundingClientRect().top }
      : "anchor";
    const focused = el?.contains(document.activeElement) ? /** @type {HTMLElement} */ (document.activeElement) : null;
    this.vlist.pinned = false; // a reader at the end would otherwise see the group run away
    this._view(this._visibleRows(), anchor);
    this.vlist.pinned = this.vlist.atEnd();
    focused?.focus({ preventScroll: true });
  }

  _view(rows, at) {
    this.view = rows;
    this.vlist.setRows(rows, at);
    this._syncEmpty();
  }

  /** An empty feed is hidden (a feed with no articles is an invalid ARIA feed). */
  _syncEmpty() {
    const empty = this.view.length === 0;
    if (this.list.hidden !== empty) this.list.hidden = empty;
    const none = empty && Boolean(this.filter) && this.rows.length > 0;
    if (this.noMatch.hidden !== !none) this.noMatch.hidden = !none;
    if (none) {
      const what = this.filterLabel ? `“${this.filterLabel}”` : "the filter";
      this.noMatch.textContent = `No items match ${what} (of ${this.rows.length.toLocaleString()} loaded).`;
    }
  }

  _rendered(onRender) {
    // Feed pattern: each article says where it is in the whole (screen readers read it out).
    const whole = this.history === "start" || this.history === "unsupported" || this.history === null;
    const size = whole && !this.later ? this.view.length : -1;
    const offset = this.vlist.mountedFrom;
    this.vlist.mounted.forEach((row, k) => {
      row.el.setAttribute("aria-posinset", String(offset + k + 1));
      row.el.setAttribute("aria-setsize", String(size));
    });
    onRender?.();
  }

  _setUnseen(n) {
    if (n === this.unseen) return;
    this.unseen = n;
    this.onUnseen?.(n);
  }

  /** What the top of the list says: where history stands, or what was not loaded. */
  _updateEarlier() {
    const notShown = Math.max(0, this.total - this.byId.size);
    const parts = [];
    let button = null;
    if (this.history === "start") {
      parts.push("Start of session");
    } else if (this.history === "loading") {
      parts.push("Loading earlier items…");
    } else if (this.history === "more") {
      parts.push(
        this.historyError ||
          (notShown ? `${notShown.toLocaleString()} earlier ${notShown === 1 ? "item" : "items"}` : "Earlier items"),
      );
      button = [
        h("button", {
          type: "button",
          class: "link-button load-earlier",
          text: "Load earlier",
          on: { click: () => this.onLoadEarlier?.() },
        }),
        " · ",
        h("button", {
          type: "button",
          class: "link-button go-start",
          text: "Go to start",
          on: { click: () => this.onGoStart?.() },
        }),
      ];
    } else {
      if (notShown) parts.push(`${notShown.toLocaleString()} earlier ${notShown === 1 ? "item" : "items"} not shown`);
      if (this.skippedBytes) parts.push(`${byteSize(this.skippedBytes)} of earlier transcript not loaded`);
    }
    this.earlier.hidden = parts.length === 0 || this.rows.length === 0;
    this.earlier.replaceChildren(parts.join(" · "));
    if (button) this.earlier.append(" ", ...button);
    this.earlier.classList.toggle("start", this.history === "start");
  }

  _updateLater() {
    updateLaterNote(this);
  }

  /** History state from history-loader.js ("unsupported": the server has no history). */
  setHistory(state, error = null) {
    this.history = state === "unsupported" ? null : state;
    this.historyError = error;
    this._updateEarlier();
  }

  /** The id of the earliest item held (history pages load before it). */
  firstItemId() {
    for (const row of this.rows) if (row.item.id && !row.partial) return row.item.id;
    return null;
  }
}
