// How full the model's context window is. Two sources, and the gauge says which one it shows:
// the agent's own figures, when its status line reports them (agent-figures.js: exact, with its
// cost and rate limits), else an estimate from the transcript: the latest turn's
// `context_tokens` (what the model saw in its last request) over `context_window` (from the
// dated table), marked "≈". Hidden while unknown; warns from 80 %.

import { h } from "../lib/page/dom.js";
import { compactNumber } from "../lib/page/format.js";

export const WARN_AT = 0.8;

/** "45k / 200k · 23%" and the fraction, or null when the figures are unknown. */
export function contextFigure(item) {
  const used = item?.context_tokens;
  const window = item?.context_window;
  if (typeof used !== "number" || typeof window !== "number" || window <= 0) return null;
  const frac = used / window;
  return { frac, pct: Math.round(frac * 100), text: `${compactNumber(used)} / ${compactNumber(window)}` };
}

/** The agent's own context figure (`GET /api/statusline/claude` `figures`), or null. */
export function agentFigure(figures) {
  const ctx = figures?.context;
  const pct = ctx?.used_percentage;
  if (typeof pct !== "number") return null;
  const used = ctx.used_tokens;
  const window = ctx.window_tokens;
  const text =
    typeof used === "number" && typeof window === "number"
      ? `${compactNumber(used)} / ${compactNumber(window)}`
      : `${Math.round(pct)}%`;
  return { frac: pct / 100, pct: Math.round(pct), text };
}

const LIMITS = [
  ["five_hour", "5-hour limit"],
  ["seven_day", "7-day limit"],
];

/** The lines of the agent's own figures besides the context: cost and rate limits. */
export function agentExtras(figures) {
  const lines = [];
  if (typeof figures?.cost_usd === "number")
    lines.push(`Cost: $${figures.cost_usd.toFixed(2)} (Claude Code's own sum)`);
  for (const [key, label] of LIMITS) {
    const w = figures?.rate_limits?.[key];
    if (typeof w?.used_percentage !== "number") continue;
    const resets = typeof w.resets_at === "number" ? `, resets ${new Date(w.resets_at * 1000).toLocaleString()}` : "";
    lines.push(`${label}: ${Math.round(w.used_percentage)}% used${resets}`);
  }
  return lines;
}

export class ContextGauge {
  constructor() {
    this.seq = -1;
    this.estimate = null; // from the transcript
    this.agent = null; // the agent's own figures
    this.bar = h("span", { class: "gauge-fill" });
    this.label = h("span", { class: "gauge-text" });
    this.el = h(
      "span",
      {
        class: "context-gauge",
        hidden: true,
        attrs: { role: "meter", "aria-valuemin": "0", "aria-valuemax": "100", "aria-label": "Context window used" },
      },
      h("span", { class: "gauge-track", attrs: { "aria-hidden": "true" } }, this.bar),
      this.label,
    );
  }

  reset() {
    this.seq = -1;
    this.estimate = null;
    this.agent = null;
    this.el.hidden = true;
  }

  /** The agent's own figures for this session (null: none reported). */
  offerAgent(figures) {
    this.agent = figures;
    this._render();
  }

  offer(items) {
    for (const item of items) {
      if (item?.type !== "turn_complete" || item.parent_tool_use_id) continue;
      const seq = typeof item.seq === "number" ? item.seq : 0;
      if (seq <= this.seq) continue;
      this.seq = seq;
      this.estimate = contextFigure(item);
      this._render();
    }
  }

  _render() {
    const own = agentFigure(this.agent);
    const fig = own || this.estimate;
    this.el.hidden = !fig;
    if (!fig) return;
    const source = own ? "agent" : "transcript";
    const said = own
      ? `Claude Code's own figure (its status line, ${new Date(this.agent.reported_at).toLocaleTimeString()})`
      : "estimated from the transcript (the last turn's tokens over the model's window)";
    this.el.dataset.source = source;
    this.el.classList.toggle("exact", !!own);
    this.el.classList.toggle("warn", fig.frac >= WARN_AT);
    this.bar.style.width = `${Math.min(100, fig.pct)}%`;
    this.label.textContent = own ? `${fig.pct}%` : `≈${fig.pct}%`;
    const tokens = fig.text.endsWith("%") ? fig.text : `${fig.text} tokens (${fig.pct}%)`;
    const extras = own ? agentExtras(this.agent) : [];
    this.el.title = [`Context: ${tokens}, ${said}`, ...extras].join("\n");
    this.el.setAttribute("aria-valuenow", String(Math.min(100, fig.pct)));
    this.el.setAttribute("aria-valuetext", `${fig.pct}% of the context window, ${said}`);
  }
}
