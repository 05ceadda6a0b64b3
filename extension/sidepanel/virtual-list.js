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
// Row fields this module owns: `h` (measured height, 0 = not yet), `el` (built element or null).

import { RowOffsets } from "./row-offsets.js";

// Rows built beyond each edge of the viewport: at least this far and this many, so scrolling
// rarely shows a row being built, and a screen reader's reading mode has context around it.
// A new set of rows first builds only what is on screen (first paint), the rest when idle.
const OVERSCAN_PX = 800;
const OVERSCAN_ROWS = 50;
const FIRST_OVERSCAN_PX = 100;
const CACHE_ROWS = 400; // built elements kept while off screen (rebuilt on demand beyond that)
const BOTTOM_SLACK_PX = 48;

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
    this.build = build;
    this.estimate = estimate;
    this.onMeasure = onMeasure;
    this.onRender = onRender;
    this.rows = [];
    this.mountedFrom = 0;
    this.offsets = new RowOffsets();
    this.tops = this.offsets.tops; // tops[i]: offset of row i from the list's top; tops[n]: the whole
    this.mounted = []; // rows in the DOM, in order
    this.built = new Set(); // rows holding an element, oldest first (the cache)
    this.pinned = true; // at the bottom: stay there as rows arrive
    this.gap = null;
    this.frame = 0;
    this.resizes = new ResizeObserver((entries) => this._onResize(entries));
    this.resizes.observe(scroller);
    this.setTop = -1; // the scrollTop this list set last
    scroller.addEventListener("scroll", () => {
      // Only the reader's own scrolling (un)pins: a position this list set, seen later in a
      // layout that changed meanwhile (a bar shown above, a row grown), says nothing.
      if (Math.abs(scroller.scrollTop - this.setTop) > 1) this.pinned = this.atBottom();
      this._schedule();
    });
  }

  // --- the rows ---

  /** Replace every row; `at`: "bottom" scrolls to the end, "anchor" keeps the row on screen
   * where it is, or an anchor taken earlier (`anchor()`) keeps that row where it was then. */
  setRows(rows, at = "anchor") {
    const anchor = at === "bottom" ? null : at === "anchor" ? this._anchor() : at;
    this.rows = rows;
    this.offsets.invalidate(0);
    if (at === "bottom") this.pinned = true;
    this.narrow = true;
    this.render(anchor);
    cancelIdleCallback(this.idle);
    this.idle = requestIdleCallback(
      () => {
        this.narrow = false;
        this.render(this.pinned ? null : this._anchor());
      },
      { timeout: 300 },
    );
  }

  /** Rows added at the end (live items): the same work whatever the list's length. A reader at
   * the end sees each at once (and stays at the end); one scrolled up gets them at the next frame. */
  append(...rows) {
    for (const row of rows) this.rows.push(row);
    if (!this.pinned && this.atBottom()) this.pinned = true;
    if (this.pinned) this.render(null);
    else this._schedule();
  }

  /** `row` took `old`'s place (same position); built when it comes on screen. */
  replace(old, row) {
    const i = this.rows.indexOf(old);
    if (i < 0) return;
    this.rows[i] = row;
    this.forget(old);
    this._invalidate(i);
    this._schedule();
  }

  /** `row` takes `old`'s place with its element already built: swapped in place if on screen. */
  swap(old, row) {
    const k = this.mounted.indexOf(old);
    if (k < 0 || !old.el) return this.replace(old, row);
    const i = this.rows.indexOf(old);
    if (i >= 0) this.rows[i] = row;
    this.resizes.unobserve(old.el);
    old.el.replaceWith(row.el);
    this.resizes.observe(row.el);
    this.mounted[k] = row;
    this.built.delete(old);
    this.built.add(row);
    old.el = null;
  }

  /** A row's content changed while its element was not built or off screen: measure again. */
  changed(row) {
    if (this.mounted.includes(row)) return; // the ResizeObserver sees it
    row.h = 0;
    const i = this.rows.indexOf(row);
    if (i >= 0) this._invalidate(i);
    this._schedule();
  }

  /** Drop a row's built element (its content is rebuilt on demand). */
  forget(row) {
    if (row.el && !this.mounted.includes(row)) {
      row.el = null;
      this.built.delete(row);
    }
  }

  /** The first row on screen (null when empty). */
  firstOnScreen() {
    return this._anchor()?.row ?? null;
  }

  indexOf(row) {
    return this.rows.indexOf(row);
  }

  // --- scrolling ---

  atBottom() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight <= BOTTOM_SLACK_PX;
  }

  scrollToBottom() {
    this.pinned = true;
    this.render(null);
  }

  /** Bring row `i` on screen (built and measured); `align` "start", "center" or "nearest".
   * Returns the row's element. */
  scrollToIndex(i, align = "nearest") {
    if (i < 0 || i >= this.rows.length) return null;
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
    this.pinned = this.atBottom();
    return row.el;
  }

  // --- rendering ---

  /** Render at the next frame: live items arriving together cost one layout. A hidden page
   * gets no frames, so it renders on a task instead (it is up to date when shown). */
  _schedule() {
    if (this.frame) return;
    const run = () => {
      this.frame = 0;
      this.render(this.pinned ? null : this._anchor());
    };
    if (document.visibilityState === "hidden") {
      const t = setTimeout(run, 0);
      this.frame = { cancel: () => clearTimeout(t) };
    } else {
      const f = requestAnimationFrame(run);
      this.frame = { cancel: () => cancelAnimationFrame(f) };
    }
  }

  /** The first row on screen and how far the view's top is below its top. */
  anchor() {
    return this._anchor();
  }

  _anchor() {
    if (!this.rows.length) return null;
    this._tops();
    const y = this.scroller.scrollTop - this._feedStart();
    const i = this._indexAt(Math.max(0, y));
    return { row: this.rows[i], delta: y - this.tops[i] };
  }

  /** Build the rows near the viewport, measure the new ones, and put the view back in place:
   * at the bottom when pinned, else with `anchor` where it was. */
  render(anchor) {
    if (this.frame) {
      this.frame.cancel();
      this.frame = 0;
    }
    // Read each time: the list may first render before its stylesheet applies (or while hidden).
    const gap = parseFloat(getComputedStyle(this.list).rowGap) || 0;
    if (gap !== this.gap) {
      this.gap = gap;
      this.offsets.invalidate(0);
    }
    const s = this.scroller;
    const start = this._feedStart();
    for (let pass = 0; pass < 3; pass++) {
      this._tops();
      const full = this.tops[this.rows.length];
      let y = s.scrollTop - start;
      const ai = anchor ? this.rows.indexOf(anchor.row) : -1;
      if (this.pinned) y = full - s.clientHeight;
      else if (ai >= 0) y = this.tops[ai] + anchor.delta;
      const px = this.narrow ? FIRST_OVERSCAN_PX : OVERSCAN_PX;
      const rows = this.narrow ? 0 : OVERSCAN_ROWS;
      const from = Math.max(0, Math.min(this._indexAt(Math.max(0, y - px)), this._indexAt(Math.max(0, y)) - rows));
      const to = Math.max(this._indexAt(Math.max(0, y + s.clientHeight + px)), this._indexAt(Math.max(0, y + s.clientHeight)) + rows) + 1;
      const measured = this._mount(from, Math.min(to, this.rows.length));
      this._pad(from, Math.min(to, this.rows.length));
      if (this.pinned) this._scrollTo(s.scrollHeight);
      else if (ai >= 0) {
        this._tops();
        this._scrollTo(start + this.tops[ai] + anchor.delta);
      }
      if (!measured) break; // estimates were replaced by real heights: place again
    }
    this._evict();
    this.onRender?.();
  }

  /** Make the DOM hold exactly rows [from, to); returns whether any height was newly measured. */
  _mount(from, to) {
    const want = this.rows.slice(from, to);
    const keep = new Set(want);
    for (const row of this.mounted) {
      if (!keep.has(row) && row.el) {
        this.resizes.unobserve(row.el);
        row.el.remove();
      }
    }
    const fresh = [];
    let cursor = this.list.firstElementChild;
    for (let k = 0; k < want.length; k++) {
      const row = want[k];
      if (!row.el) {
        row.el = this.build(row);
        this.built.add(row);
      } else {
        // Most recently used last: eviction takes the rows seen longest ago.
        this.built.delete(row);
        this.built.add(row);
      }
      if (!row.h) fresh.push(from + k);
      if (cursor === row.el) {
        cursor = cursor.nextElementSibling;
        continue;
      }
      this.list.insertBefore(row.el, cursor);
      this.resizes.observe(row.el);
    }
    this.mounted = want;
    this.mountedFrom = from;
    // Read after every write: one layout for all of them.
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
    this.list.style.paddingTop = `${above}px`;
    this.list.style.paddingBottom = `${Math.max(0, below)}px`;
  }

  _evict() {
    if (this.built.size <= CACHE_ROWS) return;
    const onScreen = new Set(this.mounted);
    for (const row of this.built) {
      if (this.built.size <= CACHE_ROWS) break;
      if (onScreen.has(row)) continue;
      row.el = null;
      this.built.delete(row);
    }
  }

  _onResize(entries) {
    let anchor = null;
    let changed = false;
    for (const entry of entries) {
      if (entry.target === this.scroller) {
        // Another width reflows every row: measured heights no longer hold.
        const width = this.scroller.clientWidth;
        if (this.width !== undefined && width !== this.width) {
          anchor ||= this.pinned ? null : this._anchor();
          for (const row of this.rows) row.h = 0;
          this.offsets.invalidate(0);
        }
        this.width = width;
        changed = true;
        continue;
      }
      const row = this.mounted.find((r) => r.el === entry.target);
      if (!row) continue;
      const h = entry.borderBoxSize?.[0]?.blockSize ?? entry.target.getBoundingClientRect().height;
      if (Math.abs(h - row.h) < 0.5) continue;
      // The anchor is taken from the heights as they were, so the view stays on it.
      anchor ||= this.pinned ? null : this._anchor();
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
    const s = this.scroller;
    return this.list.getBoundingClientRect().top - s.getBoundingClientRect().top + s.scrollTop;
  }
}
