// The session timeline: turns projected session items (DESIGN §3) into DOM nodes.
// Every string from the server is set with textContent (lib/page/dom.js); nothing is parsed as
// HTML.
//
// One element carries `data-item-id` per item, so what is rendered can be counted against the
// server's log. Tool results attach to their tool card, sub-agent items nest under their Task
// card (via parent_tool_use_id), and the DOM is capped at `maxItems` top-level entries.

import { h } from "../lib/page/dom.js";
import { byteSize, clockTime, compactNumber, cost, duration, fullTime } from "../lib/page/format.js";
import { TRUNCATED_FIELDS } from "../lib/shared/protocol.gen.js";
import { KIND_LABELS, icon } from "./icons.js";

const BOTTOM_SLACK_PX = 48;
let uid = 0;
const nextId = (prefix) => `${prefix}-${++uid}`;

export class Timeline {
  /**
   * @param {HTMLElement} scroller  the scrolling container the timeline lives in
   * @param {object} opts
   * @param {(itemId: string) => Promise<object>} opts.fetchFull  fetch one full item
   * @param {(unseen: number) => void} opts.onUnseen  new items arrived while scrolled up (0 = none)
   * @param {number} [opts.maxItems]
   */
  constructor(scroller, { fetchFull, onUnseen, maxItems = 1500 }) {
    this.scroller = scroller;
    this.fetchFull = fetchFull;
    this.onUnseen = onUnseen;
    this.maxItems = maxItems;
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
    // Partial text is live only: no id, and the seq of the stored item it follows.
    if (item.type === "assistant_delta") {
      this._delta(item, frag);
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
    const partial = item.type === "assistant" && item.segment_id ? this.deltas.get(item.segment_id) : null;
    if (item.type === "assistant" && !partial) this._dropDeltas();
    if (item.type === "turn_complete" && !item.parent_tool_use_id) {
      this._settlePending();
      this._dropDeltas();
    }
    if (item.type === "tool_result") {
      const card = this.tools.get(item.tool_use_id);
      if (card) {
        this._attachResult(card, item);
        this.count += 1;
        return true;
      }
    }
    const el = this._render(item);
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

  _render(item) {
    switch (item.type) {
      case "user":
        return this._message(item, "You", "user");
      case "assistant":
        return this._message(item, "Assistant", "assistant");
      case "thinking":
        return this._thinking(item);
      case "tool_use":
        return this._tool(item);
      case "tool_result":
        return this._orphanResult(item);
      case "turn_complete":
        return this._turn(item);
      case "plan":
        return this._plan(item);
      case "system":
        return this._system(item);
      case "error":
        return this._error(item);
      default:
        return this._article(item, ["unknown"], this._head(item, item.type || "item"), h("p", { class: "muted", text: JSON.stringify(item).slice(0, 300) }));
    }
  }

  _article(item, classes, ...children) {
    return h("article", { class: ["item", ...classes], tabIndex: 0 }, children);
  }

  _head(item, who, extra = null) {
    const id = nextId("h");
    return h(
      "header",
      { class: "item-head" },
      h("span", { class: "who", id, text: who }),
      extra,
      item.ts ? h("time", { class: "ts", dateTime: item.ts, title: fullTime(item.ts), text: clockTime(item.ts) }) : null,
    );
  }

  _labelled(el) {
    const who = el.querySelector(".who, .tool-name, .turn-label");
    if (who?.id) el.setAttribute("aria-labelledby", who.id);
    return el;
  }

  _message(item, who, cls) {
    const body = h("div", { class: "text" });
    renderRich(body, item.content);
    const el = this._article(item, [cls], this._head(item, who), body, this._more(item, body, renderRich));
    return this._labelled(el);
  }

  _thinking(item) {
    const body = h("div", { class: "text" });
    renderPlain(body, item.content);
    const id = nextId("h");
    const details = h(
      "details",
      { class: "thinking" },
      h("summary", {}, h("span", { class: "who", id, text: "Thinking" }), h("span", { class: "preview", text: firstLine(item.content) })),
      body,
      this._more(item, body, renderPlain),
    );
    return this._labelled(this._article(item, ["thinking-item"], details));
  }

  _tool(item) {
    const kind = KIND_LABELS[item.kind] ? item.kind : "other";
    const nameId = nextId("t");
    const input = h("code", { class: "tool-input", text: item.input || "" });
    const status = h("span", { class: "tool-status pending", attrs: { role: "img", "aria-label": "Running" } }, h("span", { class: "spinner", attrs: { "aria-hidden": "true" } }));
    const head = h(
      "div",
      { class: "tool-head" },
      h("span", { class: "tool-icon", title: KIND_LABELS[kind] }, icon(kind)),
      h("span", { class: "tool-name", id: nameId, text: item.name || KIND_LABELS[kind] }),
      status,
      item.ts ? h("time", { class: "ts", dateTime: item.ts, title: fullTime(item.ts), text: clockTime(item.ts) }) : null,
    );
    const el = this._article(item, ["tool", `kind-${kind}`], head, item.input ? input : null, this._more(item, input, renderPlain));
    el.setAttribute("aria-labelledby", nameId);
    if (item.tool_use_id) {
      this.tools.set(item.tool_use_id, { el, status, kind, children: null, childCount: 0, summary: null });
    }
    return el;
  }

  _attachResult(card, item) {
    const { status } = card;
    status.replaceChildren();
    status.className = `tool-status ${item.is_error ? "error" : "ok"}`;
    const dur = duration(item.duration_ms);
    status.setAttribute("aria-label", `${item.is_error ? "Failed" : "Succeeded"}${dur ? ` in ${dur}` : ""}`);
    status.append(h("span", { class: "mark", attrs: { "aria-hidden": "true" }, text: item.is_error ? "✗" : "✓" }));
    if (dur) status.append(h("span", { class: "dur", attrs: { "aria-hidden": "true" }, text: dur }));
    card.el.classList.toggle("failed", Boolean(item.is_error));
    const result = this._resultBlock(item);
    const sub = card.el.querySelector(":scope > details.subagent");
    card.el.insertBefore(result, sub || null);
  }

  /** A closed turn leaves no tool running: calls still pending got no result. */
  _settlePending() {
    for (const card of this.tools.values()) {
      if (!card.status.classList.contains("pending")) continue;
      card.status.className = "tool-status none";
      card.status.setAttribute("aria-label", "No result");
      card.status.replaceChildren(h("span", { class: "mark", attrs: { "aria-hidden": "true" }, text: "–" }));
    }
  }

  _resultBlock(item) {
    const out = h("pre", { class: "tool-output", tabIndex: 0, attrs: { "aria-label": `${item.name || "Tool"} output` } });
    renderPlain(out, item.output || "(no output)");
    if (!item.output) out.classList.add("muted");
    return h("div", { class: ["tool-result", item.is_error && "error"], dataset: { itemId: item.id, type: "tool_result" } }, out, this._more(item, out, renderPlain));
  }

  _orphanResult(item) {
    const nameId = nextId("t");
    const mark = item.is_error ? "✗" : "✓";
    const head = h(
      "div",
      { class: "tool-head" },
      h("span", { class: "tool-icon" }, icon("other")),
      h("span", { class: "tool-name", id: nameId, text: `${item.name || "Tool"} result` }),
      h("span", { class: `tool-status ${item.is_error ? "error" : "ok"}` }, h("span", { class: "mark", text: mark }), item.duration_ms != null ? h("span", { class: "dur", text: duration(item.duration_ms) }) : null),
    );
    const out = h("pre", { class: "tool-output", tabIndex: 0, attrs: { "aria-label": "Tool output" } });
    renderPlain(out, item.output || "(no output)");
    const el = this._article(item, ["tool", "orphan-result", item.is_error && "failed"], head, out, this._more(item, out, renderPlain));
    el.setAttribute("aria-labelledby", nameId);
    return el;
  }

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

  _turn(item) {
    const labelId = nextId("turn");
    // null when the server read a huge transcript from near its end and could not count turns.
    const turnName = item.turn == null ? "Turn" : `Turn ${item.turn}`;
    const parts = [];
    parts.push(`${compactNumber(item.input_tokens)} in`);
    parts.push(`${compactNumber(item.output_tokens)} out`);
    const c = cost(item.cost_usd, item.cost_source);
    const costText = c || (item.cost_source === "unknown_model" ? "cost n/a" : null);
    const costTitle =
      item.cost_source === "estimated"
        ? "Estimated from token counts and the shipped price table"
        : item.cost_source === "reported"
          ? "Cost reported by the agent"
          : "No price known for this model";
    const cache = [];
    if (item.cache_read_tokens) cache.push(`${compactNumber(item.cache_read_tokens)} cache read`);
    if (item.cache_write_tokens) cache.push(`${compactNumber(item.cache_write_tokens)} cache write`);
    const statusText = item.status === "ok" ? null : item.status === "stopped" ? "stopped" : "failed";
    const el = this._article(
      item,
      ["turn", `turn-${item.status || "ok"}`],
      h(
        "div",
        { class: "turn-line" },
        h("span", { class: "turn-label", id: labelId, text: turnName }),
        statusText ? h("span", { class: "turn-status", text: statusText }) : null,
        h("span", { class: "turn-tokens", title: cache.join(", ") || null, text: parts.join(" · ") }),
        costText ? h("span", { class: ["turn-cost", item.cost_source], title: costTitle, text: costText }) : null,
        item.duration_ms != null ? h("span", { class: "turn-dur", text: duration(item.duration_ms) }) : null,
      ),
      item.model ? h("span", { class: "turn-model", text: item.model }) : null,
    );
    el.setAttribute("aria-label", `${turnName} complete: ${parts.join(", ")}${costText ? `, ${costText}` : ""}`);
    return el;
  }

  _plan(item) {
    const list = h(
      "ul",
      { class: "plan-list" },
      (item.entries || []).map((e) =>
        h(
          "li",
          { class: ["plan-entry", `st-${safeToken(e.status)}`] },
          h("span", { class: "plan-mark", attrs: { "aria-hidden": "true" }, text: e.status === "completed" ? "☑" : e.status === "in_progress" ? "◐" : "☐" }),
          h("span", { class: "visually-hidden", text: `${e.status || "pending"}: ` }),
          h("span", { class: "plan-text", text: e.content }),
        ),
      ),
    );
    return this._labelled(this._article(item, ["plan"], this._head(item, "Plan", h("span", { class: "tool-icon" }, icon("plan"))), list));
  }

  _system(item) {
    const sub = item.subtype || "unknown";
    if (sub === "compact" || sub === "compaction" || sub === "compact_boundary") {
      const body = h("div", { class: "text" });
      renderPlain(body, item.content || "");
      const id = nextId("h");
      return this._labelled(
        this._article(
          item,
          ["notice", "compact"],
          h(
            "details",
            {},
            h("summary", {}, icon("compact"), h("span", { class: "who", id, text: "Context compacted" })),
            body,
            this._more(item, body, renderPlain),
          ),
        ),
      );
    }
    const isError = /error/.test(sub);
    const body = h("div", { class: "text" });
    renderPlain(body, item.content || "");
    return this._labelled(
      this._article(
        item,
        ["notice", isError ? "api-error" : "system"],
        this._head(item, isError ? "API error" : `System · ${sub}`),
        body,
        this._more(item, body, renderPlain),
      ),
    );
  }

  _error(item) {
    const body = h("div", { class: "text" });
    renderPlain(body, item.message || "");
    return this._labelled(this._article(item, ["error"], this._head(item, "Error"), body));
  }

  _delta(item, frag) {
    const stick = !frag && this.atBottom();
    let holder = this.deltas.get(item.segment_id);
    if (!holder) {
      const text = h("div", { class: "text" });
      const el = h(
        "article",
        { class: ["item", "assistant", "streaming"], tabIndex: 0, dataset: { segmentId: item.segment_id || "" }, attrs: { "aria-label": "Assistant (writing…)", "aria-busy": "true" } },
        h("header", { class: "item-head" }, h("span", { class: "who", text: "Assistant" }), h("span", { class: "typing", text: "writing…" })),
        text,
      );
      holder = { el, text };
      this.deltas.set(item.segment_id, holder);
      const parent = item.parent_tool_use_id ? this.tools.get(item.parent_tool_use_id) : null;
      if (parent) this._nest(parent, el);
      else (frag || this.list).append(el);
      this._syncEmpty();
    }
    holder.text.append(document.createTextNode(item.text || ""));
    if (stick) this.scrollToBottom();
  }

  _dropDeltas() {
    for (const { el } of this.deltas.values()) el.remove();
    this.deltas.clear();
  }

  /** "Show more" for a truncated item: fetches the full item once, then toggles. */
  _more(item, target, render) {
    const fields = TRUNCATED_FIELDS[item.type];
    if (!fields) return null;
    const [field, flag] = fields;
    if (!item[flag]) return null;
    const short = item[field];
    let full = null;
    let expanded = false;
    const btn = h("button", {
      type: "button",
      class: "more",
      text: `Show more (${compactNumber(item.full_length)} chars)`,
      attrs: { "aria-expanded": "false" },
    });
    btn.addEventListener("click", async () => {
      if (!expanded && full === null) {
        btn.disabled = true;
        btn.textContent = "Loading…";
        try {
          const data = await this.fetchFull(item.id);
          full = String(data?.[field] ?? "");
        } catch (err) {
          btn.disabled = false;
          btn.textContent = `Couldn't load (${err.message}) — retry`;
          return;
        }
        btn.disabled = false;
      }
      expanded = !expanded;
      target.replaceChildren();
      render(target, expanded ? full : short);
      btn.textContent = expanded ? "Show less" : `Show more (${compactNumber(item.full_length)} chars)`;
      btn.setAttribute("aria-expanded", String(expanded));
    });
    return btn;
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

// --- text rendering (never HTML) ---

function firstLine(text) {
  const line = String(text || "").trim().split("\n", 1)[0];
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function safeToken(s) {
  return String(s || "").replace(/[^a-z0-9_-]/gi, "") || "unknown";
}

/** Plain text, whitespace preserved by CSS. */
export function renderPlain(target, text) {
  target.append(document.createTextNode(String(text ?? "")));
}

/** Light Markdown: fenced code blocks and `inline code`; everything else stays literal text. */
export function renderRich(target, text) {
  const src = String(text ?? "");
  const fence = /```([^\n`]*)\n([\s\S]*?)(?:\n?```|$)/g;
  let last = 0;
  let m;
  while ((m = fence.exec(src)) !== null) {
    inline(target, src.slice(last, m.index));
    target.append(h("pre", { class: "code", tabIndex: 0 }, h("code", { text: m[2] })));
    last = fence.lastIndex;
  }
  inline(target, src.slice(last));
}

function inline(target, text) {
  if (!text) return;
  const parts = text.split(/(`[^`\n]+`)/);
  for (const part of parts) {
    if (part.length > 2 && part.startsWith("`") && part.endsWith("`")) target.append(h("code", { text: part.slice(1, -1) }));
    else if (part) target.append(document.createTextNode(part));
  }
}
