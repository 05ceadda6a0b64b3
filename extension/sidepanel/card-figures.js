// What the session card says of a session's totals (`GET …/session/summary`, docs/api.md), as
// label/value rows: DOM-free, so node:test checks the words (tests/js/card-figures.test.js).
// Counts are written whole ("12,345"), not rounded as the timeline's turn rows write them: the
// card is where a reader copies a figure.

import { cost, dayClock, duration } from "../lib/page/format.js";

const TOKEN_KINDS = [
  ["input", "Input tokens"],
  ["output", "Output tokens"],
  ["cache_read", "Cache read"],
  ["cache_write", "Cache write"],
];

const whole = (n) => (Number.isFinite(n) ? Number(n).toLocaleString() : "–");

/**
 * @param {any} s  the summary
 * @param {number} [now]  for the start date ("14:05" today, "3 Dec, 14:05" another day)
 * @returns {{key: string, label: string, value: string, title?: string}[]}
 */
export function totalsRows(s, now = Date.now()) {
  const rows = [];
  const add = (key, label, value, title = undefined) => value && rows.push({ key, label, value, title });
  add("started", "Started", s.started_at ? dayClock(s.started_at, now) : "");
  add("duration", "Duration", s.duration_ms != null ? duration(s.duration_ms) : "");
  add("turns", "Turns", whole(s.turns));
  add("prompts", "Prompts", whole(s.prompts));
  const tokens = s.tokens || {};
  for (const [kind, label] of TOKEN_KINDS) add(`tokens-${kind}`, label, whole(tokens[kind] ?? 0));
  if (s.subagent_tokens) {
    const title = "The sub-agents' part of the tokens above, already counted in them";
    add("tokens-subagents", "of which sub-agents", whole(s.subagent_tokens), title);
  }
  const unpriced = s.unpriced_turns
    ? ` (${s.unpriced_turns} ${s.unpriced_turns === 1 ? "turn" : "turns"} unpriced)`
    : "";
  const total = cost(s.cost_usd, "reported");
  add("cost", "Cost", total ? `${total}${unpriced}` : `n/a${unpriced}`, "Main thread and sub-agents together");
  if (total && s.subagent_cost_usd) {
    add("cost-main", "Main thread", cost(s.main_cost_usd, "reported"));
    add("cost-subagents", "Sub-agents", cost(s.subagent_cost_usd, "reported"));
  }
  add("models", "Models", Array.isArray(s.models) ? s.models.join(", ") : "");
  return rows;
}

/** The session's ids worth copying, in the order a reader wants them. */
export function idRows(s) {
  return [
    ["session", "Session id", s.id],
    ["workspace", "Workspace id", s.workspace],
    ["parent", "Parent session", s.parent_id],
  ].filter(([, , value]) => value);
}
