// Rewinds in the timeline. When the user rewinds a Claude Code session and goes on from an
// earlier message, the transcript keeps the turns that were abandoned; the server says so on the
// `rewind` line where the new branch starts (`abandoned_after`: the items with a seq above it and
// below the line's own were abandoned). This module is the one that knows that rule. It works on
// the timeline's rows, not on elements (only rows near the viewport have any, virtual-list.js):
// it marks each top-level row with the rewinds that abandoned it, and gives each rewind one
// group row placed where its abandoned turns start. The view shows a group row closed ("Abandoned
// by the rewind · N items") and hides its rows until it is opened; opened, they show in place,
// dimmed. A later rewind to an earlier point abandons an earlier rewind's line too: that
// rewind's group then sits inside the later one's (shown only while the outer group is open).

import { h } from "../lib/page/dom.js";

/** Whether an item is a rewind line that says what it abandoned. */
export function isRewind(item) {
  return (
    item?.type === "system" &&
    item.subtype === "rewind" &&
    typeof item.abandoned_after === "number" &&
    typeof item.seq === "number"
  );
}

const inSpan = (rewind, seq) => typeof seq === "number" && seq > rewind.abandoned_after && seq < rewind.seq;

/** The stored items a row shows (its item, its tool result, its sub-agent items). */
function* itemsOf(row) {
  if (!row.partial) yield row.item;
  if (row.result) yield row.result;
  for (const child of row.children || []) yield* itemsOf(child);
}

export class RewindFolds {
  /**
   * @param {(group: object) => void} onToggle  a group row was opened or closed by the reader
   */
  constructor(onToggle) {
    this.onToggle = onToggle;
    this.groups = new Map(); // rewind row → its group row (kept: heights are measured once)
    this.active = []; // group rows of the rewinds held, in the order they are shown at one place
  }

  clear() {
    this.groups.clear();
    this.active = [];
  }

  /** Mark `rows` (top-level, in order) with the rewinds that abandoned them; after a snapshot, a
   * history page or a live rewind. Rows built already get their dimming at once. */
  update(rows) {
    const rewinds = rows.filter((row) => !row.partial && isRewind(row.item));
    if (!rewinds.length && !this.active.length) return;
    const marks = new Map(); // row → group rows abandoning it
    const active = [];
    for (const rewindRow of rewinds) {
      const rewind = rewindRow.item;
      let group = this.groups.get(rewindRow);
      if (!group) {
        group = newGroup(rewindRow, this.onToggle);
        this.groups.set(rewindRow, group);
      }
      let held = false;
      let count = 0;
      for (const row of rows) {
        if (row.partial || !inSpan(rewind, row.item.seq)) continue;
        held = true;
        for (const item of itemsOf(row)) if (inSpan(rewind, item.seq)) count += 1;
        (marks.get(row) || marks.set(row, []).get(row)).push(group);
      }
      setCount(group, count);
      if (held) active.push(group);
    }
    // A group's own place is inside the groups that abandoned its rewind line.
    for (const group of active) group.fold.within = marks.get(group.fold.rewind) || [];
    // Where two groups start at one row, the enclosing one (the later rewind) comes first.
    // (A rewind goes back on the branch in use, so a later one either encloses an earlier
    // one's group or starts after its line: spans never cross.)
    active.sort((a, b) => b.fold.rewind.item.seq - a.fold.rewind.item.seq);
    this.active = active;
    for (const row of rows) {
      const by = marks.get(row) || null;
      if (!by && !row.abandoned) continue;
      row.abandoned = by;
      row.el?.classList.toggle("abandoned-item", Boolean(by));
    }
  }

  /** What the list shows of `rows`: each group row where its turns start, its rows only while
   * every group holding them is open. Returns `rows` itself when nothing is folded. */
  view(rows) {
    if (!this.active.length) return rows;
    const placed = new Set();
    const out = [];
    for (const row of rows) {
      if (row.abandoned) {
        // The first row a group holds among those shown (the filter may hide some) gets it.
        for (const group of this.active) {
          if (placed.has(group) || !row.abandoned.includes(group)) continue;
          placed.add(group);
          if (group.fold.within.every(isOpen)) out.push(group);
        }
        if (!row.abandoned.every(isOpen)) continue;
      }
      out.push(row);
    }
    return out;
  }

  /** Whether `row` is folded away. */
  hides(row) {
    return Boolean(row.abandoned) && !row.abandoned.every(isOpen);
  }

  /** The group row shown in `row`'s place while it is folded away (null: it is shown). */
  standIn(row) {
    if (!this.hides(row)) return null;
    return row.abandoned.find((group) => !group.fold.open && group.fold.within.every(isOpen)) || null;
  }

  /** Open every group hiding `row` (going to an item); returns whether any was opened. */
  reveal(row) {
    if (!this.hides(row)) return false;
    for (const group of row.abandoned) {
      for (const outer of [group, ...group.fold.within]) setOpen(outer, true);
    }
    return true;
  }
}

const isOpen = (group) => group.fold.open;

/** A group row: not an item (no id), built by `buildGroup`. */
function newGroup(rewindRow, onToggle) {
  return {
    item: { type: "abandoned_group" },
    fold: { rewind: rewindRow, open: false, count: 0, within: [], onToggle },
    result: null,
    children: null,
    parent: null,
    partial: null,
    el: null,
    h: 0,
  };
}

/** A group row's element: a focusable article (the feed's own kind of child) holding the button
 * that opens it; the button says whether it is expanded, so a screen reader announces it. */
export function buildGroup(group) {
  const { fold } = group;
  const button = h("button", {
    type: "button",
    class: "abandoned-toggle",
    attrs: { "aria-expanded": String(fold.open) },
    on: { click: () => fold.onToggle(group) },
  });
  group.el = h("article", { class: ["abandoned-group", fold.open && "open"], tabIndex: 0 }, button);
  group.button = button;
  paint(group);
  return group.el;
}

function label(count) {
  return `Abandoned by the rewind · ${count} ${count === 1 ? "item" : "items"}`;
}

function paint(group) {
  if (!group.el) return;
  const { open, count } = group.fold;
  group.button.textContent = label(count);
  group.button.setAttribute("aria-expanded", String(open));
  group.el.classList.toggle("open", open);
  group.el.setAttribute("aria-label", `${label(count)}, ${open ? "shown" : "folded"}`);
}

function setCount(group, count) {
  if (group.fold.count === count) return;
  group.fold.count = count;
  paint(group);
}

export function setOpen(group, open) {
  if (group.fold.open === open) return;
  group.fold.open = open;
  paint(group);
}
