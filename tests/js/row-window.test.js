import assert from "node:assert/strict";
import { test } from "node:test";

const { rowWindow } = await import("../../extension/sidepanel/row-window.js");
const { RowOffsets } = await import("../../extension/sidepanel/row-offsets.js");

/** Offsets of rows of these heights, no gap. */
function offsetsOf(heights) {
  const offsets = new RowOffsets();
  offsets.update(heights, 0, (h) => h);
  return offsets;
}

// A Task card of 80 sub-agent items closed from the keyboard: 6,000 px become 100, and the view,
// 3,000 px into the card, now shows the next card. The first paint's window (narrow) no longer
// reaches the card, which held the focus.
const HEIGHTS = [100, 6000, 6000, 6000, 6000];
const Y = 3000;
const VIEW = 820;

test("the first paint's window holds only what is on screen, and 100 px beyond", () => {
  assert.deepEqual(rowWindow(offsetsOf(HEIGHTS), HEIGHTS.length, Y, VIEW, true), [1, 2]);
});

test("the row holding the focus stays in the window while near", () => {
  assert.deepEqual(rowWindow(offsetsOf(HEIGHTS), HEIGHTS.length, Y, VIEW, true, 0), [0, 2]);
  assert.deepEqual(rowWindow(offsetsOf(HEIGHTS), HEIGHTS.length, Y, VIEW, true, 4), [1, 5]);
  // Inside the window: nothing changes.
  assert.deepEqual(rowWindow(offsetsOf(HEIGHTS), HEIGHTS.length, Y, VIEW, true, 1), [1, 2]);
  // None, or a row no longer held.
  assert.deepEqual(rowWindow(offsetsOf(HEIGHTS), HEIGHTS.length, Y, VIEW, true, -1), [1, 2]);
  assert.deepEqual(rowWindow(offsetsOf(HEIGHTS), HEIGHTS.length, Y, VIEW, true, 9), [1, 2]);
});

test("a focused row the reader scrolled far from goes (the window stays small)", () => {
  const heights = new Array(1000).fill(50);
  const [from, to] = rowWindow(offsetsOf(heights), heights.length, 40_000, VIEW, false, 3);
  assert.ok(from > 700 && to - from < 200, `${from}…${to}`);
  assert.deepEqual(rowWindow(offsetsOf(heights), heights.length, 40_000, VIEW, false, from - 10), [from - 10, to]);
});
