import assert from "node:assert/strict";
import { test } from "node:test";

import { idRows, totalsRows } from "../../extension/sidepanel/card-figures.js";

const SUMMARY = {
  id: "5c0375b4",
  workspace: "35b5596d0955",
  started_at: "2026-12-05T09:12:00Z",
  duration_ms: 1_727_882,
  turns: 4,
  prompts: 5,
  tokens: { input: 1520, output: 9811, cache_read: 402_113, cache_write: 0 },
  subagent_tokens: 20_400,
  cost_usd: 2.360856,
  main_cost_usd: 0.081714,
  subagent_cost_usd: 2.279142,
  unpriced_turns: 1,
  models: ["claude-opus-4-6", "claude-haiku-4-5"],
};

const byKey = (rows) => Object.fromEntries(rows.map((r) => [r.key, r.value]));

test("the card writes every token kind whole, and the cost of each part", () => {
  const rows = byKey(totalsRows(SUMMARY, Date.parse("2026-12-05T12:00:00Z")));
  assert.equal(rows["tokens-input"], (1520).toLocaleString());
  assert.equal(rows["tokens-cache_read"], (402_113).toLocaleString());
  assert.equal(rows["tokens-cache_write"], "0"); // a kind never used still shows, as 0
  assert.equal(rows["tokens-subagents"], (20_400).toLocaleString());
  assert.equal(rows.cost, "$2.36 (1 turn unpriced)");
  assert.equal(rows["cost-main"], "$0.082");
  assert.equal(rows["cost-subagents"], "$2.28");
  assert.equal(rows.turns, "4");
  assert.equal(rows.duration, "28 m 48 s");
  assert.equal(rows.models, "claude-opus-4-6, claude-haiku-4-5");
});

test("a session without a price or sub-agents says so, with no empty parts", () => {
  const rows = byKey(totalsRows({ ...SUMMARY, cost_usd: null, subagent_tokens: 0, subagent_cost_usd: 0 }));
  assert.equal(rows.cost, "n/a (1 turn unpriced)");
  assert.equal(rows["cost-main"], undefined);
  assert.equal(rows["tokens-subagents"], undefined);
});

test("ids: the session's and its workspace's, and a parent's only when there is one", () => {
  assert.deepEqual(
    idRows(SUMMARY).map(([key]) => key),
    ["session", "workspace"],
  );
  assert.deepEqual(idRows({ ...SUMMARY, parent_id: "p1" }).at(-1), ["parent", "Parent session", "p1"]);
});
