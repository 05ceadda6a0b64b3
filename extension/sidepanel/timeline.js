// The session timeline: the list of projected session items (docs/api.md) in the side panel.
// This file keeps the list (order and dedupe by seq, snapshots, live partial text, tool results
// and sub-agent items placed on their cards, the cap, scrolling, keyboard); what each item looks
// like is in item-renderers.js.
//
// One element carries `data-item-id` per item, so what is rendered can be counted against the
// server's log. Tool results attach to their tool card, sub-agent items nest under their Task
// card (via parent_tool_use_id), and the DOM is capped at `maxItems` top-level entries.

import { h, textNode } from "../lib/page/dom.js";
import { byteSize } from "../lib/page/format.js";
import { attachResult, renderItem, renderPartial, settlePending, showProgress } from "./item-renderers.js";

const BOTTOM_SLACK_PX = 48;

export class Timeline {
  /**
   * @param {HTMLElement} scroller  the scrolling container the timeline lives in
   * @param {object} opts
   * @param {(itemId: string) => Promise<object>} opts.fetchFull  fetch one full item
   * @param {(unseen: number) => void} opts.onUnseen  new items arrived while scrolled up (0 = none)
   * @param {number} [opts.maxItems]
   * @param {(card: object, result: object) => void} [opts.onToolResult]  a tool card got its result
   */
  constructor(scroller, { fetchFull, onUnseen, maxItems = 1500, onToolResult = null }) {
    this.scroller = scroller;
    this.fetchFull = fetchFull;
    this.onUnseen = onUnseen;
    this.maxItems = maxItems;
    /** @type {import("./item-renderers.js").RenderContext} */
    this.renderCtx = {
      fetchFull: (id) => this.fetchFull(id),
      // Results and sub-agent items find their card here; the nesting state is the list's.
      onToolCard: (toolUseId, card) => this.tools.set(toolUseId, { ...card, children: null, childCount: 0, summary: null }),
      onToolResult,
      toolName: (toolUseId) => this.tools.get(toolUseId)?.name ?? null,
    };
    this.earlier = h("p", { class: "earlier", hidden: true });
    this.list = h("div", {
      class: "feed",
      attrs: { role: "feed", "aria-label": "Session timeline", "aria-busy": "false" },
      on: { keydown: (ev) => this._onKey(ev) },
    });
    scroller.append(this.earlier, this.list);
    scroller.addEventListener("scroll", () => {
      if (this.atBottom()) this._setUnseen(0);
    });
    this.reset();
  }

  reset() {
    this.list.replaceChildren();
    this.tools = new Map(); // tool_use_id → card parts
    this.deltas = new Map(); // segment_id → text node holder
    this.lastSeq = 0;
    this.count = 0; // items represented in the DOM (data-item-id elements)
    this.notShown = 0; // items of the session not in the DOM (before the snapshot, or capped)
    this.skippedBytes = 0; // transcript bytes before the first item the server holds
    this.unseen = 0;
    this._updateEarlier();
    this._syncEmpty();
  }

  /** An empty feed is hidden (a feed with no articles is an invalid ARIA feed). */
  _syncEmpty() {
    const empty = this.list.childElementCount === 0;
    if (this.list.hidden !== empty) this.list.hidden = empty;
  }

  /** Replace everything with a snapshot: `items` are the latest of `total`, and
   * `skippedBytes` of the transcript before them were not read by the server. */
  load(items, total, skippedBytes = 0) {
    this.reset();
    this.skippedBytes = skippedBytes > 0 ? skippedBytes : 0;
    this.list.setAttribute("aria-busy", "true");
    const frag = document.createDocumentFragment();
    for (const item of items) this._add(item, frag);
    this.list.append(frag);
    this.notShown = Math.max(0, (total || 0) - items.length);
    this._cap();
    this._updateEarlier();
    this._syncEmpty();
    this.list.setAttribute("aria-busy", "false");
    this.scrollToBottom();
  }

  /** Add one live item. */
  add(item) {
    const stick = this.atBottom();
    if (!this._add(item, null)) return;
    this._cap();
    this._syncEmpty();
    if (stick) this.scrollToBottom();
    else this._setUnseen(this.unseen + 1);
  }

  atBottom() {
    const s = this.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight <= BOTTOM_SLACK_PX;
  }

  scrollToBottom() {
    this.scroller.scrollTop = this.scroller.scrollHeight;
    this._setUnseen(0);
  }

  _setUnseen(n) {
    if (n === this.unseen) return;
    this.unseen = n;
    this.onUnseen?.(n);
  }

  // --- adding ---

  _add(item, frag) {
    // Partial text and progress are live only: no id, and the seq of the stored item they follow.
    if (item.type === "assistant_delta" || item.type === "thinking_delta") {
      this._delta(item, frag);
      return true;
    }
    if (item.type === "tool_progress") {
      const card = this.tools.get(item.tool_use_id);
      if (card) showProgress(card, item);
      return true;
    }
    if (typeof item.seq === "number" && item.seq > 0) {
      // Seqs increase but are not dense (transcripts number items by byte position).
      if (item.seq <= this.lastSeq) {
        console.warn("sidemirror: duplicate item", item.id);
        return false;
      }
      this.lastSeq = item.seq;
    }
    // The complete item takes its partial bubble's place (same segment_id).
    const streamed = item.type === "assistant" || item.type === "thinking";
    const partial = streamed && item.segment_id ? this.deltas.get(item.segment_id) : null;
    if (item.type === "assistant" && !partial) this._dropDeltas();
    if (item.type === "turn_complete" && !item.parent_tool_use_id) {
      // A closed turn leaves no tool running: calls still pending got no result.
      for (const card of this.tools.values()) settlePending(card);
      this._dropDeltas();
    }
    if (item.type === "tool_result") {
      const card = this.tools.get(item.tool_use_id);
      if (card) {
        attachResult(card, item, this.renderCtx);
        this.count += 1;
        return true;
      }
    }
    const el = renderItem(item, this.renderCtx);
    el.dataset.itemId = item.id;
    el.dataset.type = item.type;
    this.count += 1;
    const parent = item.parent_tool_use_id ? this.tools.get(item.parent_tool_use_id) : null;
    if (partial && partial.el.isConnected) {
      partial.el.replaceWith(el);
      this.deltas.delete(item.segment_id);
    } else if (parent) {
      this._nest(parent, el);
    } else {
      if (item.parent_tool_use_id) el.classList.add("orphan-subagent");
      (frag || this.list).append(el);
    }
    return true;
  }

  /** Sub-agent items go in a group on their Task card, which counts them. */
  _nest(card, el) {
    if (!card.children) {
      card.summary = h("summary", {});
      card.children = h("div", { class: "subagent-items", attrs: { role: "group" } });
      card.el.append(h("details", { class: "subagent", open: true }, card.summary, card.children));
    }
    card.children.append(el);
    card.childCount += 1;
    const label = `Sub-agent · ${card.childCount} ${card.childCount === 1 ? "item" : "items"}`;
    card.summary.textContent = label;
    card.children.setAttribute("aria-label", label);
  }

  _delta(item, frag) {
    const stick = !frag && this.atBottom();
    let holder = this.deltas.get(item.segment_id);
    if (!holder) {
      holder = renderPartial(item);
      this.deltas.set(item.segment_id, holder);
      const parent = item.parent_tool_use_id ? this.tools.get(item.parent_tool_use_id) : null;
      if (parent) this._nest(parent, holder.el);
      else (frag || this.list).append(holder.el);
      this._syncEmpty();
    }
    holder.text.append(textNode(item.text || ""));
    if (stick) this.scrollToBottom();
  }

  _dropDeltas() {
    for (const { el } of this.deltas.values()) el.remove();
    this.deltas.clear();
  }

  // --- capping ---

  _cap() {
    let removed = 0;
    while (this.list.childElementCount > this.maxItems) {
      const first = this.list.firstElementChild;
      const ids = first.matches("[data-item-id]") ? 1 : 0;
      const nested = first.querySelectorAll("[data-item-id]").length;
      for (const t of first.querySelectorAll("article.tool")) this._forgetTool(t);
      this._forgetTool(first);
      first.remove();
      removed += ids + nested;
    }
    if (removed) {
      this.count -= removed;
      this.notShown += removed;
      this._updateEarlier();
    }
  }

  _forgetTool(el) {
    for (const [key, card] of this.tools) if (card.el === el) this.tools.delete(key);
  }

  _updateEarlier() {
    const parts = [];
    if (this.notShown) {
      parts.push(`${this.notShown.toLocaleString()} earlier ${this.notShown === 1 ? "item" : "items"} not shown`);
    }
    if (this.skippedBytes) {
      parts.push(`${byteSize(this.skippedBytes)} of earlier transcript not loaded`);
    }
    this.earlier.hidden = parts.length === 0;
    this.earlier.textContent = parts.join(" · ");
  }

  // --- keyboard: feed pattern ---

  _onKey(ev) {
    const current = ev.target.closest?.("article");
    if (!current || ev.target !== current) return;
    const all = [...this.list.querySelectorAll("article")].filter((a) => a.offsetParent !== null);
    const i = all.indexOf(current);
    let next = null;
    if (ev.key === "ArrowDown" || ev.key === "j" || ev.key === "PageDown") next = all[i + 1];
    else if (ev.key === "ArrowUp" || ev.key === "k" || ev.key === "PageUp") next = all[i - 1];
    else if (ev.key === "Home") next = all[0];
    else if (ev.key === "End") next = all[all.length - 1];
    else return;
    ev.preventDefault();
    next?.focus();
  }
}
