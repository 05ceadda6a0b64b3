import "./dom-env.js";

import assert from "node:assert/strict";
import { test } from "node:test";

const { ContextGauge, agentExtras, agentFigure } = await import("../../extension/sidepanel/context-gauge.js");

const FIGURES = {
  reported_at: "2026-12-05T12:30:00.000Z",
  context: { used_tokens: 15500, window_tokens: 200000, used_percentage: 8 },
  cost_usd: 0.01234,
  rate_limits: { five_hour: { used_percentage: 23.5, resets_at: 1738425600 } },
};
const TURN = { type: "turn_complete", seq: 5, context_tokens: 24000, context_window: 200000 };

test("the agent's own figure needs its percentage; counts are shown when it gave them", () => {
  assert.deepEqual(agentFigure(FIGURES), { frac: 0.08, pct: 8, text: "16k / 200k" });
  assert.equal(agentFigure({ context: { used_tokens: null, window_tokens: 200000, used_percentage: null } }), null);
  assert.equal(agentFigure(null), null);
  assert.equal(agentFigure({ context: { used_percentage: 41.6 } }).text, "42%");
});

test("cost and rate limits are listed as the agent's, absent windows left out", () => {
  const lines = agentExtras(FIGURES);
  assert.equal(lines[0], "Cost: $0.01 (Claude Code's own sum)");
  assert.match(lines[1], /^5-hour limit: 24% used, resets /);
  assert.equal(lines.length, 2);
});

test("the gauge prefers the agent's figure and marks the estimate", () => {
  const gauge = new ContextGauge();
  gauge.offer([TURN]);
  assert.equal(gauge.el.dataset.source, "transcript");
  assert.equal(gauge.label.textContent, "≈12%");
  gauge.offerAgent(FIGURES);
  assert.equal(gauge.el.dataset.source, "agent");
  assert.equal(gauge.label.textContent, "8%");
  assert.match(gauge.el.title, /Claude Code's own figure/);
  gauge.offerAgent(null); // none for this session (or after /compact): the estimate again
  assert.equal(gauge.label.textContent, "≈12%");
});
