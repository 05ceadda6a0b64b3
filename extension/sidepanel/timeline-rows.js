// Rows of the session timeline: what one top-level entry holds (an item, its tool result, the
// sub-agent items nested under it, live partial text) and how its element is built from that.
// The timeline keeps rows as plain data so that only the few near the viewport need elements
// (virtual-list.js); an element is built from the row whenever it comes back on screen, and
// patched in place (a result, a nested item, more partial text) while it is built.

import { h, textNode } from "../lib/page/dom.js";
import { attachResult, renderItem, renderPartial, settlePending, showProgress } from "./item-renderers.js";

/**
 * @typedef {object} Row
 * @property {object} item  the item (for live partial text: the first delta)
 * @property {object|null} result  the tool_result attached to a tool card
 * @property {Row[]|null} children  sub-agent items under a Task card
 * @property {Row|null} parent  the row this one is nested in
 * @property {object|null} progress  the latest tool_progress of a running tool
 * @property {boolean} settled  the turn closed with this tool still running
 * @property {string[]|null} partial  live text so far (assistant_delta / thinking_delta)
 * @property {HTMLElement|null} el  built element (owned by the virtual list for top-level rows)
 * @property {object|null} card  the tool card's parts while `el` is built
 * @property {object[]|null} abandoned  the group rows of the rewinds that abandoned it (rewinds.js)
 * @property {number} h  measured height (virtual-list.js)
 */

/** @returns {Row} */
export function newRow(item, partial = false) {
  return {
    item,
    result: null,
    children: null,
    parent: null,
    progress: null,
    settled: false,
    partial: partial ? [] : null,
    el: null,
    card: null,
    abandoned: null,
    h: 0,
  };
}

/** The top-level row a (possibly nested) row belongs to. */
export function topOf(row) {
  let r = row;
  while (r.parent) r = r.parent;
  return r;
}

/** Whether a row's element is built and current (a nested row: inside its top row's element). */
export function isBuilt(row) {
  if (!row.el) return false;
  const top = topOf(row);
  return top === row || (top.el !== null && top.el.contains(row.el));
}

/** Build a row's element, and those of its nested rows. */
export function buildRow(row, ctx) {
  if (row.partial) {
    const holder = renderPartial(row.item);
    holder.text.append(textNode(row.partial.join("")));
    row.el = holder.el;
    row.text = holder.text;
    return row.el;
  }
  const item = row.item;
  let card = null;
  const el = renderItem(item, { ...ctx, onToolCard: (_id, parts) => (card = parts) });
  el.dataset.itemId = item.id;
  el.dataset.type = item.type;
  if (item.parent_tool_use_id && !row.parent) el.classList.add("orphan-subagent");
  if (row.abandoned) el.classList.add("abandoned-item"); // a rewind abandoned it (rewinds.js)
  row.el = el;
  row.card = card;
  row.group = null;
  if (card) {
    if (row.result) attachResult(card, row.result, ctx);
    else if (row.settled) settlePending(card);
    else if (row.progress) showProgress(card, row.progress);
  }
  for (const child of row.children || []) nestElement(row, buildRow(child, ctx));
  return el;
}

/** Put a nested row's element in its parent's sub-agent group (made on first use). */
export function nestElement(parent, el) {
  if (!parent.group) {
    const summary = h("summary", {});
    const items = h("div", { class: "subagent-items", attrs: { role: "group" } });
    parent.el.append(h("details", { class: "subagent", open: true }, summary, items));
    parent.group = { summary, items, count: 0 };
  }
  parent.group.items.append(el);
  parent.group.count += 1;
  const n = parent.group.count;
  const label = `Sub-agent · ${n} ${n === 1 ? "item" : "items"}`;
  parent.group.summary.textContent = label;
  parent.group.items.setAttribute("aria-label", label);
}

// Height guesses for rows never measured, by type, refined by the average of those measured.
const GUESS = {
  user: 70,
  assistant: 90,
  thinking: 32,
  tool_use: 76,
  tool_result: 76,
  turn_complete: 44,
  plan: 110,
  system: 52,
};
const seen = new Map(); // type → [sum, count]

export function estimateHeight(row) {
  const type = row.item.type;
  const s = seen.get(type);
  const base = s && s[1] >= 4 ? s[0] / s[1] : GUESS[type] || 60;
  return row.children ? base + 40 * Math.min(row.children.length, 30) : base;
}

/** Remember a measured height for the guesses of rows of its type. */
export function noteHeight(row) {
  if (!row.h || row.children) return;
  const type = row.item.type;
  const s = seen.get(type) || [0, 0];
  if (s[1] >= 200) return; // enough to go by
  s[0] += row.h;
  s[1] += 1;
  seen.set(type, s);
}
