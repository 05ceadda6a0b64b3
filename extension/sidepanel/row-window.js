// Which rows of a virtual list (virtual-list.js) to have in the DOM for a view at offset `y`:
// those on screen and some beyond each edge, so scrolling rarely shows a row being built and a
// screen reader's reading mode has context around it. A new set of rows first builds only what
// is on screen (the first paint, `narrow`), the rest when idle. The row holding the focus stays
// while it is near: taken out of the DOM, an element loses the focus (to the body, where the
// timeline's keys do nothing), as when a focused card closed from the keyboard shrinks out of
// the first paint's window.

const OVERSCAN_PX = 800; // beyond each edge: at least this far…
const OVERSCAN_ROWS = 50; // …and this many rows
const FIRST_OVERSCAN_PX = 100;
const KEEP_ROWS = OVERSCAN_ROWS; // the focused row stays this near the window (else the reader scrolled away)

/**
 * @param {import("./row-offsets.js").RowOffsets} offsets  up to date for the `n` rows
 * @param {number} n  the number of rows
 * @param {number} y  the view's top, from the first row's top
 * @param {number} height  the view's height
 * @param {boolean} narrow  the first paint of a new set of rows
 * @param {number} [keep]  the row holding the focus (-1: none)
 * @returns {[number, number]}  rows [from, to)
 */
export function rowWindow(offsets, n, y, height, narrow, keep = -1) {
  const px = narrow ? FIRST_OVERSCAN_PX : OVERSCAN_PX;
  const extra = narrow ? 0 : OVERSCAN_ROWS;
  const at = (offset) => offsets.indexAt(Math.max(0, offset), n);
  const from = Math.max(0, Math.min(at(y - px), at(y) - extra));
  const to = Math.min(Math.max(at(y + height + px), at(y + height) + extra) + 1, n);
  if (keep < 0 || keep >= n || keep < from - KEEP_ROWS || keep >= to + KEEP_ROWS) return [from, to];
  return [Math.min(from, keep), Math.max(to, keep + 1)];
}
