// Where each row of a virtual list starts: a prefix sum of the rows' heights (measured, or
// guessed until measured) and the gap between rows. Recomputed from the first row that changed
// only, so a live row appended at the end of 50,000 costs one addition; found by binary search.

export class RowOffsets {
  constructor() {
    this.tops = new Float64Array(1024); // tops[i]: top of row i; tops[n]: the whole height
    this.valid = 0; // tops hold this many rows
    this.dirtyFrom = 0; // tops below this row are current
  }

  /** Row `i` changed height (or rows from `i` on changed). */
  invalidate(i) {
    if (i >= 0 && i < this.dirtyFrom) this.dirtyFrom = i;
  }

  update(rows, gap, height) {
    const n = rows.length;
    if (this.tops.length < n + 1) {
      const grown = new Float64Array(Math.max(1024, (n + 1) * 2));
      grown.set(this.tops);
      this.tops = grown;
    }
    if (this.dirtyFrom >= n && this.valid === n) return;
    const tops = this.tops;
    let i = Math.min(this.dirtyFrom, this.valid, n);
    if (i === 0) tops[0] = 0;
    // The last row has no gap after it; a row appended later gives it one (so the last row is
    // always recomputed: one addition).
    for (; i < n; i++) tops[i + 1] = tops[i] + height(rows[i]) + (i < n - 1 ? gap : 0);
    this.valid = n;
    this.dirtyFrom = n > 0 ? n - 1 : 0;
  }

  /** The index of the row at offset `y` (the last row for a `y` past the end). */
  indexAt(y, n) {
    if (!n) return 0;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.tops[mid] <= y) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
