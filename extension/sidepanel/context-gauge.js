// How full the model's context window is: the latest turn's `context_tokens` (what the model saw
// in its last request) over `context_window` (from the dated table). Hidden while unknown; warns
// from 80 %.

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

export class ContextGauge {
  constructor() {
    this.seq = -1;
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
    this.el.hidden = true;
  }

  offer(items) {
    for (const item of items) {
      if (item?.type !== "turn_complete" || item.parent_tool_use_id) continue;
      const seq = typeof item.seq === "number" ? item.seq : 0;
      if (seq <= this.seq) continue;
      this.seq = seq;
      this._show(contextFigure(item));
    }
  }

  _show(fig) {
    this.el.hidden = !fig;
    if (!fig) return;
    this.el.classList.toggle("warn", fig.frac >= WARN_AT);
    this.bar.style.width = `${Math.min(100, fig.pct)}%`;
    this.label.textContent = `${fig.pct}%`;
    this.el.title = `Context: ${fig.text} tokens (${fig.pct}%)`;
    this.el.setAttribute("aria-valuenow", String(Math.min(100, fig.pct)));
    this.el.setAttribute("aria-valuetext", `${fig.pct}% of the context window: ${fig.text} tokens`);
  }
}
