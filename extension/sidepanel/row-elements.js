// The elements of a virtual list's rows (virtual-list.js): which rows are in the DOM, in order,
// and which keep their built element while off screen (the most recently shown, up to a cap),
// each watched by a ResizeObserver while in the DOM. Where rows go and how tall they are is the
// list's business; this only puts elements in and takes them out.
//
// Row fields this module owns: `el` (the built element, or null).

const CACHE_ROWS = 400; // built elements kept while off screen (rebuilt on demand beyond that)

export class RowElements {
  /**
   * @param {HTMLElement} list  the element rows are children of
   * @param {(row: object) => HTMLElement} build  a row's element
   * @param {ResizeObserver} resizes  watches the rows in the DOM
   */
  constructor(list, build, resizes) {
    this.list = list;
    this.build = build;
    this.resizes = resizes;
    this.mounted = []; // rows in the DOM, in order
    this.from = 0; // the index of mounted[0] among the list's rows
    this.built = new Set(); // rows holding an element, least recently shown first
  }

  /** Make the DOM hold exactly `want` (rows `from`… of the list); returns the indices of the
   * rows never measured (`h` 0), to be measured in one layout once all are in. */
  mount(want, from) {
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
      if (!row.el) row.el = this.build(row);
      this.built.delete(row); // most recently shown last: eviction takes the oldest
      this.built.add(row);
      if (!row.h) fresh.push(from + k);
      if (cursor === row.el) {
        cursor = cursor.nextElementSibling;
        continue;
      }
      this.list.insertBefore(row.el, cursor);
      this.resizes.observe(row.el);
    }
    this.mounted = want;
    this.from = from;
    return fresh;
  }

  /** Whether `row` is in the DOM. */
  has(row) {
    return this.mounted.includes(row);
  }

  /** The row in the DOM whose element is `el`. */
  rowOf(el) {
    return this.mounted.find((r) => r.el === el);
  }

  /** `row` takes `old`'s place in the DOM with its element already built; false when `old` is
   * not in the DOM. */
  swap(old, row) {
    const k = this.mounted.indexOf(old);
    if (k < 0 || !old.el) return false;
    this.resizes.unobserve(old.el);
    old.el.replaceWith(row.el);
    this.resizes.observe(row.el);
    this.mounted[k] = row;
    this.built.delete(old);
    this.built.add(row);
    old.el = null;
    return true;
  }

  /** `row` leaves the list for good (its item now shows elsewhere, as a sub-agent's inside its
   * Task): its element out of the DOM, unwatched, and the row forgotten. */
  drop(row) {
    if (row.el) {
      this.resizes.unobserve(row.el);
      row.el.remove();
      row.el = null;
    }
    this.mounted = this.mounted.filter((r) => r !== row);
    this.built.delete(row);
  }

  /** Drop an off-screen row's element (rebuilt on demand). */
  forget(row) {
    if (row.el && !this.has(row)) {
      row.el = null;
      this.built.delete(row);
    }
  }

  /** Keep at most CACHE_ROWS elements built: those shown longest ago go first. */
  evict() {
    if (this.built.size <= CACHE_ROWS) return;
    const onScreen = new Set(this.mounted);
    for (const row of this.built) {
      if (this.built.size <= CACHE_ROWS) break;
      if (onScreen.has(row)) continue;
      row.el = null;
      this.built.delete(row);
    }
  }
}
