// The room the rows not built take in a virtual list (virtual-list.js), above and below the rows
// in the DOM, so the scrollbar covers the whole list.
//
// CSS lengths are single-precision floats in Chromium: past 131,072 px a length no longer holds a
// position to layout's 1/64 px, and at 50,000 rows the room above is ~2,500,000 px. A padding of
// that size lands a fraction of a pixel off, so each shift of the window (a live row in at the
// bottom, the top row out) moved every row on screen by a fraction of a pixel, and the browser
// repainted them all: ~3 ms of paint per live item (bench/panel.py, traced). The whole pixels
// go in a spacer before the list (integers are exact floats up to 16,777,216 px) and only the
// fraction in the list's padding, so rows that stay in the DOM stay exactly where they were.

export class ListPadding {
  /** @param {HTMLElement} list  the element the rows are children of */
  constructor(list) {
    this.list = list;
    this.spacer = document.createElement("div");
    this.spacer.className = "feed-spacer";
    this.spacer.setAttribute("aria-hidden", "true");
    this.spacerPx = 0;
    this.fraction = -1;
    this.below = -1;
  }

  /** `above` px before the first row in the DOM, `below` px after the last. */
  set(above, below) {
    if (!this.spacer.parentNode && this.list.parentNode) this.list.before(this.spacer);
    const whole = this.spacer.parentNode ? Math.floor(above) : 0;
    if (whole !== this.spacerPx) {
      this.spacerPx = whole;
      this.spacer.style.height = `${whole}px`;
    }
    if (above - whole !== this.fraction) {
      this.fraction = above - whole;
      this.list.style.paddingTop = `${this.fraction}px`;
    }
    if (below !== this.below) {
      this.below = below;
      this.list.style.paddingBottom = `${below}px`;
    }
  }

  /** Where the first row would be with no room above: the list's top less the spacer. */
  start(scroller) {
    const top = this.list.getBoundingClientRect().top - scroller.getBoundingClientRect().top;
    return top + scroller.scrollTop - this.spacerPx;
  }
}
