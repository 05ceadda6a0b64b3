// The timeline's window when it shows the session's start (history-loader.js `toStart`): the
// first page replaces what was shown, the pages after it come in below as the reader reads on,
// and live items wait until the window reaches the end (or the latest items are fetched again).
// The functions take the Timeline (timeline.js), whose state they share.

import { h } from "../lib/page/dom.js";

// Live items held back while the items between the window and them are not loaded: beyond
// this many, the latest are fetched again once the window reaches the end.
const HOLD_BACK_MAX = 2000;

/** @param {any} tl the Timeline @param {object[]} items @param {boolean} later */
export function showStart(tl, items, later) {
  const { total, skippedBytes } = tl;
  tl.reset();
  Object.assign(tl, { total, skippedBytes, later, history: "start" });
  tl.batch = true;
  try {
    for (const item of items) tl._add(item);
  } finally {
    tl.batch = false;
  }
  tl.folds.update(tl.rows);
  tl.vlist.pinned = false;
  const rows = tl._visibleRows();
  // At the very top: "Start of session" above the first item in view.
  tl._view(rows, rows.length ? { row: rows[0], delta: -tl.earlier.offsetHeight - 16 } : "anchor");
  tl._updateEarlier();
  updateLaterNote(tl);
}

/** The items after the window (oldest first): they go below it, the reader's place kept.
 * `later`: more follow. Once none do, the live items held back meanwhile join. Returns how
 * many came. @param {any} tl @param {object[]} items @param {boolean} later */
export function appendLater(tl, items, later) {
  const newer = items.filter((i) => typeof i.seq === "number" && i.seq > tl.lastSeq);
  // A reader at the bottom of the window is not following a live end: the page goes below
  // what is on screen, which stays put (pinned, the list would ride down to the new end and
  // ask for the next page, and the next, until the whole session was read).
  tl.vlist.pinned = false;
  const anchor = tl.vlist.anchor() || "anchor";
  tl.batch = true;
  try {
    for (const item of newer) tl._add(item);
    if (!later || !newer.length) {
      tl.later = false;
      // Live partials and progress were for then: the stored items that came with them stand.
      for (const item of tl.heldBack) if (item.id && item.seq > tl.lastSeq) tl._add(item);
      tl.heldBack = [];
    }
  } finally {
    tl.batch = false;
  }
  tl.folds.update(tl.rows);
  tl._view(tl._visibleRows(), anchor);
  updateLaterNote(tl);
  if (!tl.later && tl.heldBackLost) tl.onGoLatest?.(); // more came live than were kept
  return newer.length;
}

/** A live item while the window ends before the session does: kept for when it joins.
 * @param {any} tl @param {any} item */
export function holdBack(tl, item) {
  if (tl.heldBack.length < HOLD_BACK_MAX) tl.heldBack.push(item);
  else tl.heldBackLost = true;
  if (typeof item.seq === "number" && item.seq > 0 && item.type !== "tool_progress") {
    tl.total += 1;
    tl._setUnseen(tl.unseen + 1);
  }
  tl.onItems?.([item], false); // the gauge and the plan stay current
}

/** What the bottom of the list says while the window ends before the session does.
 * @param {any} tl */
export function updateLaterNote(tl) {
  const note = tl.laterNote;
  note.hidden = !tl.later || tl.rows.length === 0;
  if (note.hidden) return;
  const link = (text, cls, fn) => h("button", { type: "button", class: `link-button ${cls}`, text, on: { click: fn } });
  note.replaceChildren(
    "Later items",
    " · ",
    link("Load later", "load-later", () => tl.onLoadLater?.()),
    " · ",
    link("Go to latest", "go-latest", () => tl.onGoLatest?.()),
  );
}
