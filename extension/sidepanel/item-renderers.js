// Session item renderers: one per item type, each turning one item into its DOM node.
// Split from timeline.js so the list mechanics (order, dedupe, nesting, capping, scrolling) and
// what an item looks like can change apart. Every string from the server is set with textContent
// (lib/page/dom.js); nothing is parsed as HTML.

import { h, setText, textNode } from "../lib/page/dom.js";
import { byteSize, compactNumber, cost, dayClock, duration, fullTime, localTimesIn } from "../lib/page/format.js";
import { KIND_LABELS, icon } from "./icons.js";
import { renderMarkdown } from "./markdown.js";
import { more } from "./show-more.js";
import { WARN_AT, contextFigure } from "./context-gauge.js";
import { diffBlock } from "./diff-view.js";

let uid = 0;
const nextId = (prefix) => `${prefix}-${++uid}`;

/**
 * What a renderer may ask of the timeline it renders for.
 * @typedef {object} RenderContext
 * @property {(itemId: string) => Promise<object>} fetchFull  fetch one full item ("Show more")
 * @property {(toolUseId: string, card: ToolCard) => void} onToolCard  a tool card was built: its
 *   result and sub-agent items attach to it later
 * @property {(card: ToolCard, result: object) => void} [onToolResult]  a card got its result
 * @property {(toolUseId: string) => (string|null)} [toolName]  the name of a tool call shown
 *   already (a sub-agent's prompt is labelled with its Task tool's name)
 */

/**
 * @typedef {object} ToolCard
 * @property {HTMLElement} el  the card's article
 * @property {HTMLElement} status  the running / ✓ / ✗ mark
 * @property {string} kind  one of TOOL_KINDS
 * @property {string|null} name  the tool's name as the agent calls it
 */

/** Renderers keyed by item type. Live-only types are not here: partial text (`assistant_delta`,
 * `thinking_delta`) is list state drawn with `renderPartial`, and `tool_progress` updates a card
 * (`showProgress`); see timeline.js. */
export const RENDERERS = Object.freeze({
  user: (item, ctx) => message(item, ctx, promptLabel(item, ctx), "user"),
  assistant: (item, ctx) => message(item, ctx, "Assistant", "assistant"),
  thinking,
  tool_use: tool,
  tool_result: orphanResult,
  turn_complete: turn,
  plan,
  system,
  error,
});

/** The node for one item; a type without a renderer (a newer server's) shows as raw JSON. */
export function renderItem(item, ctx) {
  // Own string keys only: a type such as "constructor" must not reach Object.prototype.
  const known = typeof item.type === "string" && Object.hasOwn(RENDERERS, item.type);
  const render = known ? RENDERERS[item.type] : unknown;
  return render(item, ctx);
}

function unknown(item) {
  return article(
    item,
    ["unknown"],
    head(item, item.type || "item"),
    h("p", { class: "muted", text: JSON.stringify(item).slice(0, 300) }),
  );
}

function article(item, classes, ...children) {
  return h("article", { class: ["item", ...classes], tabIndex: 0 }, children);
}

function head(item, who, extra = null) {
  const id = nextId("h");
  return h(
    "header",
    { class: "item-head" },
    h("span", { class: "who", id, text: who }),
    extra,
    item.ts ? h("time", { class: "ts", dateTime: item.ts, title: fullTime(item.ts), text: dayClock(item.ts) }) : null,
  );
}

function labelled(el) {
  const who = el.querySelector(".who, .tool-name, .turn-label");
  if (who?.id) el.setAttribute("aria-labelledby", who.id);
  return el;
}

function message(item, ctx, who, cls) {
  const body = h("div", { class: "text" });
  renderRich(body, item.content);
  const el = article(
    item,
    [cls, item.queued && "queued"],
    head(item, who, queuedMark(item)),
    attachments(item),
    body,
    more(item, ctx, body, renderRich),
  );
  return labelled(el);
}

/** A message typed while the agent worked: the agent queued it and the model read it here. */
function queuedMark(item) {
  if (!item.queued) return null;
  return h("span", {
    class: ["chip", "queued-mark"],
    title: "Typed while the agent worked: it read this message here",
    text: "sent while working",
  });
}

/** A sub-agent's prompt was written by its parent tool call, not by the user. */
function promptLabel(item, ctx) {
  if (!item.parent_tool_use_id) return "You";
  const name = ctx.toolName?.(item.parent_tool_use_id);
  return name ? `Task prompt · ${name}` : "Task prompt";
}

/** Images (or audio) an item carried, as chips: the media type and size, never the data. */
function attachments(item) {
  const list = Array.isArray(item.attachments) ? item.attachments : [];
  if (!list.length) return null;
  const chips = list.map((a) => {
    const size = typeof a.size === "number" ? ` · ${byteSize(a.size)}` : "";
    const kind = String(a.media_type || "").startsWith("audio/") ? "Audio" : "Image";
    return h("span", {
      class: ["chip", "attachment"],
      title: `${kind} ${a.media_type || ""}`,
      text: `${kind} ${a.media_type || ""}${size}`,
    });
  });
  return h("div", { class: "attachments" }, chips);
}

/** Why a refused tool call was refused (e.g. its permission rule), shown on its card. */
function denialNote(item) {
  return item.denial ? h("p", { class: "tool-denial", text: item.denial }) : null;
}

function thinking(item, ctx) {
  const body = h("div", { class: "text" });
  renderPlain(body, item.content);
  const id = nextId("h");
  const details = h(
    "details",
    { class: "thinking" },
    h(
      "summary",
      {},
      h("span", { class: "who", id, text: "Thinking" }),
      h("span", { class: "preview", text: firstLine(item.content) }),
    ),
    body,
    more(item, ctx, body, renderPlain),
  );
  return labelled(article(item, ["thinking-item"], details));
}

function tool(item, ctx) {
  const kind = KIND_LABELS[item.kind] ? item.kind : "other";
  const nameId = nextId("t");
  const input = h("code", { class: "tool-input", text: item.input || "" });
  const status = h(
    "span",
    { class: "tool-status pending", attrs: { role: "img", "aria-label": "Running" } },
    h("span", { class: "spinner", attrs: { "aria-hidden": "true" } }),
  );
  const toolHead = h(
    "div",
    { class: "tool-head" },
    h("span", { class: "tool-icon", title: KIND_LABELS[kind] }, icon(kind)),
    h("span", { class: "tool-name", id: nameId, text: item.name || KIND_LABELS[kind] }),
    status,
    item.ts ? h("time", { class: "ts", dateTime: item.ts, title: fullTime(item.ts), text: dayClock(item.ts) }) : null,
  );
  const el = article(
    item,
    ["tool", `kind-${kind}`],
    toolHead,
    item.input ? input : null,
    more(item, ctx, input, renderPlain),
    diffBlock(item, ctx),
  );
  el.setAttribute("aria-labelledby", nameId);
  if (item.tool_use_id) ctx.onToolCard(item.tool_use_id, { el, status, kind, name: item.name || null });
  return el;
}

/** A tool's result, shown on its card: the status mark, then the output (before any sub-agent items). */
export function attachResult(card, item, ctx) {
  const { status } = card;
  status.replaceChildren();
  status.className = `tool-status ${item.is_error ? "error" : "ok"}`;
  const dur = duration(item.duration_ms);
  status.setAttribute("aria-label", `${item.is_error ? "Failed" : "Succeeded"}${dur ? ` in ${dur}` : ""}`);
  status.append(h("span", { class: "mark", attrs: { "aria-hidden": "true" }, text: item.is_error ? "✗" : "✓" }));
  if (dur) status.append(h("span", { class: "dur", attrs: { "aria-hidden": "true" }, text: dur }));
  card.el.classList.toggle("failed", Boolean(item.is_error));
  const result = resultBlock(item, ctx);
  const sub = card.el.querySelector(":scope > details.subagent");
  card.el.insertBefore(result, sub || null);
  ctx.onToolResult?.(card, item); // browser-summary.js: what the browser showed meanwhile
}

/** A running tool's progress (live `tool_progress`): how long it has been running. */
export function showProgress(card, item) {
  const { status } = card;
  if (!status.classList.contains("pending")) return;
  const dur = duration(item.elapsed_ms);
  if (!dur) return;
  let span = status.querySelector(".dur");
  if (!span) {
    span = h("span", { class: "dur", attrs: { "aria-hidden": "true" } });
    status.append(span);
  }
  span.textContent = dur;
  status.setAttribute("aria-label", `Running for ${dur}`);
}

/** A card still running when its turn closed got no result: mark it so. */
export function settlePending(card) {
  if (!card.status.classList.contains("pending")) return;
  card.status.className = "tool-status none";
  card.status.setAttribute("aria-label", "No result");
  card.status.replaceChildren(h("span", { class: "mark", attrs: { "aria-hidden": "true" }, text: "–" }));
}

function resultBlock(item, ctx) {
  const out = h("pre", { class: "tool-output", tabIndex: 0, attrs: { "aria-label": `${item.name || "Tool"} output` } });
  renderPlain(out, item.output || "(no output)");
  if (!item.output) out.classList.add("muted");
  return h(
    "div",
    { class: ["tool-result", item.is_error && "error"], dataset: { itemId: item.id, type: "tool_result" } },
    attachments(item),
    denialNote(item),
    out,
    more(item, ctx, out, renderPlain),
  );
}

/** A result whose tool card is not shown (capped away, or never sent) stands on its own. */
function orphanResult(item, ctx) {
  const nameId = nextId("t");
  const mark = item.is_error ? "✗" : "✓";
  const toolHead = h(
    "div",
    { class: "tool-head" },
    h("span", { class: "tool-icon" }, icon("other")),
    h("span", { class: "tool-name", id: nameId, text: `${item.name || "Tool"} result` }),
    h(
      "span",
      { class: `tool-status ${item.is_error ? "error" : "ok"}` },
      h("span", { class: "mark", text: mark }),
      item.duration_ms != null ? h("span", { class: "dur", text: duration(item.duration_ms) }) : null,
    ),
  );
  const out = h("pre", { class: "tool-output", tabIndex: 0, attrs: { "aria-label": "Tool output" } });
  renderPlain(out, item.output || "(no output)");
  const el = article(
    item,
    ["tool", "orphan-result", item.is_error && "failed"],
    toolHead,
    denialNote(item),
    out,
    more(item, ctx, out, renderPlain),
  );
  el.setAttribute("aria-labelledby", nameId);
  return el;
}

function turn(item) {
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
  if (item.context_tokens != null) {
    const of = item.context_window ? ` of ${compactNumber(item.context_window)}` : "";
    cache.push(`context ${compactNumber(item.context_tokens)}${of}`);
  }
  const outcome = item.status === "ok" ? null : item.status === "stopped" ? "stopped" : "failed";
  // The agent's own reason, when it says more than the status (cancelled, max_tokens, auth…).
  const reason =
    item.stop_reason && !["end_turn", "error", "interrupted"].includes(item.stop_reason) ? item.stop_reason : null;
  const statusText = outcome && reason ? `${outcome} · ${reason}` : outcome;
  const el = article(
    item,
    ["turn", `turn-${item.status || "ok"}`],
    h(
      "div",
      { class: "turn-line" },
      h("span", { class: "turn-label", id: labelId, text: turnName }),
      statusText ? h("span", { class: "turn-status", text: statusText }) : null,
      h("span", { class: "turn-tokens", title: cache.join(", ") || null, text: parts.join(" · ") }),
      costText ? h("span", { class: ["turn-cost", item.cost_source], title: costTitle, text: costText }) : null,
      subagents(item),
      turnDuration(item.duration_ms),
      turnContext(item),
    ),
    item.model ? h("span", { class: "turn-model", text: item.model }) : null,
  );
  el.setAttribute("aria-label", `${turnName} complete: ${parts.join(", ")}${costText ? `, ${costText}` : ""}`);
  return el;
}

function turnDuration(ms) {
  return ms != null ? h("span", { class: "turn-dur", text: duration(ms) }) : null;
}

/** A built turn row takes the agent's own duration of the turn (a later `turn_duration`). */
export function showTurnDuration(el, ms) {
  const shown = el.querySelector(".turn-dur");
  if (shown) {
    setText(shown, duration(ms));
    return;
  }
  const context = el.querySelector(".turn-line .turn-context");
  if (context) context.before(turnDuration(ms));
  else el.querySelector(".turn-line")?.append(turnDuration(ms));
}

/** The context the turn's last request used, as a share of the window (hidden when unknown). */
/** The sub-agents' part of a turn's tokens and cost (already in the turn's totals). */
function subagents(item) {
  if (item.subagent_tokens == null) return null;
  const c = item.subagent_cost_usd != null ? cost(item.subagent_cost_usd, item.cost_source) : null;
  return h("span", {
    class: "turn-subagents",
    title: "The sub-agents' part of this turn, included in its totals",
    text: `sub-agents ${compactNumber(item.subagent_tokens)}${c ? ` · ${c}` : ""}`,
  });
}

function turnContext(item) {
  const fig = contextFigure(item);
  if (!fig) return null;
  return h("span", {
    class: ["turn-context", fig.frac >= WARN_AT && "warn"],
    title: `Context: ${fig.text} tokens`,
    text: `ctx ${fig.pct}%`,
  });
}

function plan(item) {
  const list = h(
    "ul",
    { class: "plan-list" },
    (item.entries || []).map((e) =>
      h(
        "li",
        { class: ["plan-entry", `st-${safeToken(e.status)}`] },
        h("span", {
          class: "plan-mark",
          attrs: { "aria-hidden": "true" },
          text: e.status === "completed" ? "☑" : e.status === "in_progress" ? "◐" : "☐",
        }),
        h("span", { class: "visually-hidden", text: `${e.status || "pending"}: ` }),
        h("span", { class: "plan-text", text: e.content }),
      ),
    ),
  );
  return labelled(article(item, ["plan"], head(item, "Plan", h("span", { class: "tool-icon" }, icon("plan"))), list));
}

function system(item, ctx) {
  const sub = item.subtype || "unknown";
  if (sub === "compact" || sub === "compaction" || sub === "compact_boundary") {
    const body = h("div", { class: "text" });
    renderPlain(body, item.content || "");
    const id = nextId("h");
    return labelled(
      article(
        item,
        ["notice", "compact"],
        h(
          "details",
          {},
          h("summary", {}, icon("compact"), h("span", { class: "who", id, text: "Context compacted" })),
          body,
          more(item, ctx, body, renderPlain),
        ),
      ),
    );
  }
  const isError = /error/.test(sub);
  // A decision or note record says when in UTC ISO; the reader wants their own clock.
  const local = sub === "decision" || sub === "note";
  const render = local ? (el, text) => renderPlain(el, localTimesIn(text)) : renderPlain;
  const body = h("div", { class: "text" });
  render(body, item.content || "");
  return labelled(
    article(
      item,
      ["notice", isError ? "api-error" : "system", `sys-${safeToken(sub)}`],
      head(item, isError ? "API error" : SYSTEM_LABELS[sub] || `System · ${sub}`),
      body,
      more(item, ctx, body, render),
    ),
  );
}

const SYSTEM_LABELS = Object.freeze({
  mode: "Mode",
  notice: "Notice",
  task: "Task",
  status: "Status",
  interrupted: "Interrupted",
  permission_denied: "Permission denied",
  rewind: "Rewound",
  hook: "Hook",
  context: "Context",
  decision: "Decision",
  note: "You · note to the agent",
});

function error(item) {
  const body = h("div", { class: "text" });
  renderPlain(body, item.message || "");
  return labelled(article(item, ["error"], head(item, "Error"), body));
}

/** The bubble live partial text is appended to (`text`) until its item arrives: the assistant's
 * (`assistant_delta`) or its reasoning (`thinking_delta`). */
export function renderPartial(item) {
  const thinking = item.type === "thinking_delta";
  const who = thinking ? "Thinking" : "Assistant";
  const text = h("div", { class: "text" });
  const el = h(
    "article",
    {
      class: ["item", thinking ? "thinking-item" : "assistant", "streaming"],
      tabIndex: 0,
      dataset: { segmentId: item.segment_id || "" },
      attrs: { "aria-label": `${who} (writing…)`, "aria-busy": "true" },
    },
    h(
      "header",
      { class: "item-head" },
      h("span", { class: "who", text: who }),
      h("span", { class: "typing", text: "writing…" }),
    ),
    text,
  );
  return { el, text };
}

// --- text rendering (never HTML) ---

function firstLine(text) {
  const line = String(text || "")
    .trim()
    .split("\n", 1)[0];
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function safeToken(s) {
  return String(s || "").replace(/[^a-z0-9_-]/gi, "") || "unknown";
}

/** Plain text, whitespace preserved by CSS. */
export function renderPlain(target, text) {
  target.append(textNode(text));
}

/** Prompts and replies: Markdown drawn as DOM nodes, never as HTML (markdown.js). */
export function renderRich(target, text) {
  renderMarkdown(target, text);
}
