// Rewinds in the timeline. When the user rewinds a Claude Code session and goes on from an
// earlier message, the transcript keeps the turns that were abandoned; the server says so on the
// `rewind` line where the new branch starts (`abandoned_after`: the items with a seq above it and
// below the line's own were abandoned). Those items are already shown by then (live) or were just
// added (a whole read), so the same rule folds them either way: dimmed, in a closed group that
// says how many items it holds, placed where they were. Their elements keep `data-item-id`, so
// the timeline's counts still match the server's log.

import { h } from "../lib/page/dom.js";

/**
 * Fold the items `item` (a `rewind` line, rendered as `el` in `container`) abandoned.
 * @param {ParentNode} container  the timeline list, or the fragment a snapshot is built in
 */
export function foldAbandoned(container, item, el) {
  if (item.type !== "system" || item.subtype !== "rewind") return;
  const after = item.abandoned_after;
  if (typeof after !== "number" || typeof item.seq !== "number") return;
  const gone = [];
  for (const child of container.children) {
    if (child === el) break;
    const seq = Number(child.dataset.seq);
    if (seq > after && seq < item.seq) gone.push(child);
  }
  if (gone.length === 0) return;
  const count = gone.reduce(
    (n, child) => n + (child.matches("[data-item-id]") ? 1 : 0) + child.querySelectorAll("[data-item-id]").length,
    0,
  );
  const label = `Abandoned by the rewind · ${count} ${count === 1 ? "item" : "items"}`;
  const items = h("div", { class: "abandoned-items", attrs: { role: "group", "aria-label": label } });
  const group = h("details", { class: "abandoned" }, h("summary", { text: label }), items);
  group.dataset.seq = gone[0].dataset.seq; // an earlier rewind can fold this group in turn
  gone[0].before(group);
  items.append(...gone);
}
