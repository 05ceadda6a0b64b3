// A virtualized vertical list: only the rows near the viewport are in the DOM, so a session of
// 50,000 items opens and scrolls like one of 50. Rows are plain objects the owner keeps; this
// module asks `build(row)` for a row's element when it comes near the viewport, measures it once
// (and again only when its size changes, through a ResizeObserver), and stands in for the rows
// not shown with the list's top and bottom padding, so the scrollbar covers the whole list.
//
// Positions are kept stable by hand (`overflow-anchor: none` in the CSS): before each render the
// first row on screen is the anchor, and after heights change above it (a row measured for the
// first time, earlier rows prepended) the scroll position moves by exactly that much. A list
// scrolled to its end stays at its end ("follow bottom") as rows arrive or grow.
//
// Which rows to build is row-window.js; which elements are in the DOM, row-elements.js; the room
// standing in for the rest, list-padding.js; where each row starts, row-offsets.js. Row fields
// this module owns: `h` (measured height, 0 = not yet).

import { FrameTask } from "./frame-task.js";
import { ListPadding } from "./list-padding.js";
import { RowElements } from "./row-elements.js";
import { RowOffsets } from "./row-offsets.js";
import { rowWindow } from "./row-window.js";

// Rows arriving follow a reader this near the end; only a reader at the end (within rounding)
// stays pinned through renders nothing new caused. A reader who scrolled up a little (or whose
// click scrolled a half-hidden button into view) would otherwise be pulled back down at the next
// frame, between their mousedown and mouseup.
const BOTTOM_SLACK_PX = 48;
const END_PX = 2;

export class VirtualList {
  /**
   * @param {object} opts
   * @param {HTMLElement} opts.scroller  the scrolling ancestor
   * @param {HTMLElement} opts.list  the element rows are children of (padded for the rest)
   * @param {(row: object) => HTMLElement} opts.build  a row's element
   * @param {(row: object) => number} opts.estimate  a height guess for a row never measured
   * @param {(row: object) => void} [opts.onMeasure]  a row was measured
   * @param {() => void} [opts.onRender]  after each render (e.g. to see whether the top is near)
   */
  constructor({ scroller, list, build, estimate, onMeasure, onRender }) {
    this.scroller = scroller;
    this.list = list;
    this.estimate = estimate;
    this.onMeasure = onMeasure;
    this.onRender = onRender;
    this.rows = [];
    this.offsets = new RowOffsets();
    this.tops = this.offsets.tops; // tops[i]: offset of row i from the list's top; tops[n]: the whole
    this.padding = new ListPadding(list);
    this.pinned = true; // at the bottom: stay there as rows arrive
    this.gap = null;
    // Renders at the next frame: live items arriving together cost one layout.
    this.frame = new FrameTask(() => this.render(this.place()));
    this.resizes = new ResizeObserver((entries) => this._onResize(entries));
    this.resizes.observe(scroller);
    this.elements = new RowElements(list, build, this.resizes);
    this.setTop = -1; // the scrollTop this list set last
    scroller.addEventListener("scroll", () => {
      // The scroll this list made itself (following the end) was rendered when it was made: a
      // render at the next frame would only ask the browser for a frame with nothing in it, and
      // keep it ticking, so the next live row waits for a tick instead of getting a frame at once.
      if (Math.abs(this.scroller.scrollTop - this.setTop) <= 1) return;
      this.syncPinned();
      this.frame.schedule();
    });
  }

  /** Only the reader's own scrolling (un)pins: a position this list set, seen later in a layout
   * that changed meanwhile (a bar shown above, a row grown), says nothing. Also asked before a
   * history page goes in: the reader may have scrolled up in the frame before the scroll event. */
  syncPinned() {
    if (this._hidden()) return; // its scrollTop says nothing then
    if (Math.abs(this.scroller.scrollTop - this.setTop) > 1) this.pinned = this.atEnd();
  }

  /** Not rendered (another tab shown, a dialog closed): nothing can be measured, and a row built
   * then is wasted, since it would be measured at no width. Its rows are kept, and the
   * ResizeObserver renders them when the list shows again. */
  _hidden() {
    return this.scroller.clientHeight === 0;
  }

  /** Where a render not asked for by the reader keeps the view: at the end when pinned, else on
   * the row on screen. Synced first: a reader's scroll is seen by its event only at the next
   * frame, and an item or a resize arriving before would pull them back down. */
  place() {
    this.syncPinned();
    return this.pinned ? null : this.anchor();
  }

  /** The rows in the DOM, in order, and the index of the first. */
  get mounted() {
    return this.elements.mounted;
  }

  get mountedFrom() {
    return this.elements.from;
  }

  // --- the rows ---

  /** Replace every row; `at`: "bottom" scrolls to the end, "anchor" keeps the row on screen
   * where it is, or an anchor taken earlier (`anchor()`) keeps that row where it was then. */
  setRows(rows, at = "anchor") {
    const anchor = at === "bottom" ? null : at === "anchor" ? this.anchor() : at;
    this.rows = rows;
    this.offsets.invalidate(0);
    if (at === "bottom") this.pinned = true;
    this.narrow = true;
    this.render(anchor);
    cancelIdleCallback(this.idle);
    this.idle = requestIdleCallback(
      () => {
        this.narrow = false;
        this.render(this.place());
      },
      { timeout: 300 },
    );
  }

  /** Rows added at the end (live items): the same work whatever the list's length. A reader at
   * the end sees each at once (and stays at the end); one scrolled up gets them at the next frame. */
  append(...rows) {
    for (const row of rows) this.rows.push(row);
    if (this._hidden()) return; // rendered when it shows again (its ResizeObserver)
    this.syncPinned();
    if (!this.pinned && this.atBottom()) this.pinned = true;
    if (this.pinned) this.render(null);
    else this.frame.schedule();
  }

  /** `row` took `old`'s place (same position); built when it comes on screen. */
  replace(old, row) {
    const i = this.rows.indexOf(old);
    if (i < 0) return;
    this.rows[i] = row;
    this.forget(old);
    this._invalidate(i);
    this.frame.schedule();
  }

  /** `row` takes `old`'s place with its element already built: swapped in place if on screen. */
  swap(old, row) {
    const i = this.rows.indexOf(old);
    if (!this.elements.swap(old, row)) return this.replace(old, row);
    if (i >= 0) this.rows[i] = row;
  }

  /** A row's content changed while its element was not built or off screen: measure again. */
  changed(row) {
    if (this.elements.has(row)) return; // the ResizeObserver sees it
    row.h = 0;
    const i = this.rows.indexOf(row);
    if (i >= 0) this._invalidate(i);
    this.frame.schedule();
  }

  /** A row that leaves the list (nested elsewhere now): its element goes, on screen or not. */
  drop(row) {
    this.elements.drop(row);
  }

  /** Drop a row's built element (its content is rebuilt on demand). */
  forget(row) {
    this.elements.forget(row);
  }

  /** The first row on screen (null when empty). */
  firstOnScreen() {
    return this.anchor()?.row ?? null;
  }

  indexOf(row) {
    return this.rows.indexOf(row);
  }

  // --- scrolling ---

  /** Near enough the end that rows arriving should be followed. */
  atBottom() {
    return this._belowView() <= BOTTOM_SLACK_PX;
  }

  /** At the end itself: what pins the list. */
  atEnd() {
    return this._belowView() <= END_PX;
  }

  _belowView() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight;
  }

  scrollToBottom() {
    this.pinned = true;
    this.render(null);
  }

  /** Bring row `i` on screen (built and measured); `align` "start", "center" or "nearest".
   * Returns the row's element. */
  scrollToIndex(i, align = "nearest") {
    // Hidden, nothing can be placed, and the end it would read (no height) would pin the list.
    if (i < 0 || i >= this.rows.length || this._hidden()) return null;
    this.pinned = false;
    const row = this.rows[i];
    // Two passes: the first builds and measures the row, the second places it by its real height.
    for (let pass = 0; pass < 2; pass++) {
      this._tops();
      const h = this._height(row);
      const view = this.scroller.clientHeight;
      const y = this.scroller.scrollTop - this._feedStart();
      const top = this.tops[i];
      let delta = y - top; // where it is now
      if (align === "start" || (align === "nearest" && top < y)) delta = -8;
      else if (align === "center") delta = -(view - h) / 2;
      else if (align === "nearest" && top + h > y + view) delta = h - view + 8;
      this.render({ row, delta });
    }
    this.pinned = this.atEnd();
    return row.el;
  }

  // --- rendering ---

  /** The first row on screen and how far the view's top is below its top. */
  anchor() {
    if (!this.rows.length) return null;
    this._tops();
    const y = this.scroller.scrollTop - this._feedStart();
    const i = this._indexAt(Math.max(0, y));
    return { row: this.rows[i], delta: y - this.tops[i] };
  }

  /** Build the rows near the viewport, measure the new ones, and put the view back in place:
   * at the bottom when pinned, else with `anchor` where it was. */
  render(anchor) {
    this.frame.cancel();
    if (this._hidden()) return;
    // Read each time: the list may first render before its stylesheet applies.
    const gap = parseFloat(getComputedStyle(this.list).rowGap) || 0;
    if (gap !== this.gap) {
      this.gap = gap;
      this.offsets.invalidate(0);
    }
    const s = this.scroller;
    const start = this._feedStart();
    const keep = this._focusedIndex();
    for (let pass = 0; pass < 3; pass++) {
      this._tops();
      const full = this.tops[this.rows.length];
      let y = s.scrollTop - start;
      const ai = anchor ? this.rows.indexOf(anchor.row) : -1;
      if (this.pinned) y = full - s.clientHeight;
      else if (ai >= 0) y = this.tops[ai] + anchor.delta;
      const [from, to] = rowWindow(this.offsets, this.rows.length, y, s.clientHeight, this.narrow, keep);
      const fresh = this.elements.mount(this.rows.slice(from, to), from);
      this._pad(from, to);
      // Placing the view is the one layout: the new rows are measured after it, for free.
      if (this.pinned) this._scrollTo(s.scrollHeight);
      else if (ai >= 0) {
        this._tops();
        this._scrollTo(start + this.tops[ai] + anchor.delta);
      }
      if (!this._measure(fresh)) break;
      // Estimates were replaced by real heights. At the end, the view is right whatever they
      // were (the rows below `from` are all in, the room above did not change) as long as the
      // rows in cover the screen; anchored, it moved with them: place again.
      if (this.pinned && to === this.rows.length && this._covers(from)) break;
    }
    this.elements.evict();
    this.onRender?.();
  }

  /** Whether the rows from `from` on reach the top of a view at the list's end. */
  _covers(from) {
    this._tops();
    return this.tops[from] <= this.tops[this.rows.length] - this.scroller.clientHeight;
  }

  /** The index of the row whose element holds the focus (-1: none): the window keeps it when
   * near (row-window.js), as an element taken out of the DOM loses the focus. */
  _focusedIndex() {
    const active = document.activeElement;
    if (!active || !this.list.contains(active)) return -1;
    const { mounted, from } = this.elements;
    const k = mounted.findIndex((row) => row.el?.contains(active));
    if (k < 0) return -1;
    return this.rows[from + k] === mounted[k] ? from + k : this.rows.indexOf(mounted[k]);
  }

  /** Measure the rows of `fresh` (indices, just put in the DOM), all in one layout; returns
   * whether any height changed. */
  _measure(fresh) {
    let changed = false;
    for (const i of fresh) {
      const row = this.rows[i];
      const h = row.el.getBoundingClientRect().height;
      if (h !== row.h) {
        row.h = h;
        this._invalidate(i);
        this.onMeasure?.(row);
        changed = true;
      }
    }
    return changed;
  }

  _scrollTo(y) {
    this.scroller.scrollTop = y;
    this.setTop = this.scroller.scrollTop;
  }

  _pad(from, to) {
    this._tops();
    const n = this.rows.length;
    const above = from > 0 ? this.tops[from] : 0;
    const below = to < n ? this.tops[n] - this.tops[to] + this.gap : 0;
    this.padding.set(above, Math.max(0, below));
  }

  _onResize(entries) {
    if (this._hidden()) return; // sizes of nothing: the rows keep theirs until it shows again
    let anchor = null;
    let changed = false;
    for (const entry of entries) {
      if (entry.target === this.scroller) {
        // Another width reflows every row: measured heights no longer hold.
        const width = this.scroller.clientWidth;
        if (this.width !== undefined && width !== this.width) {
          anchor ||= this.place();
          for (const row of this.rows) row.h = 0;
          this.offsets.invalidate(0);
        }
        this.width = width;
        changed = true;
        continue;
      }
      const row = this.elements.rowOf(entry.target);
      if (!row) continue;
      const h = entry.borderBoxSize?.[0]?.blockSize ?? entry.target.getBoundingClientRect().height;
      if (Math.abs(h - row.h) < 0.5) continue;
      // The anchor is taken from the heights as they were, so the view stays on it.
      anchor ||= this.place();
      row.h = h;
      this._invalidate(this.rows.indexOf(row));
      changed = true;
    }
    if (changed) this.render(anchor);
  }

  _height(row) {
    return row.h || this.estimate(row);
  }

  _invalidate(i) {
    this.offsets.invalidate(i);
  }

  /** Bring the row offsets up to date. */
  _tops() {
    this.offsets.update(this.rows, this.gap ?? 0, (row) => this._height(row));
    this.tops = this.offsets.tops;
  }

  _indexAt(y) {
    return this.offsets.indexAt(y, this.rows.length);
  }

  /** Where the list starts inside the scroller's content. */
  _feedStart() {
    return this.padding.start(this.scroller);
  }
}
