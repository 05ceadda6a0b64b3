import "./dom-env.js";

import assert from "node:assert/strict";
import { test } from "node:test";

const { buildRows, countRows, filterRows, nextIndex, sessionSpan, shortId, spanText } =
  await import("../../extension/sidepanel/session-list-model.js");

const now = Date.parse("2026-12-05T12:00:00Z");
const at = (msAgo) => new Date(now - msAgo).toISOString();

const workspaces = [
  { id: "w-old", name: "parser", directory: "/src/parser", branch: "main", last_activity: at(90_000) },
  { id: "w-demo", name: "Demo", directory: "/demo/sidemirror-demo", last_activity: at(0) },
  { id: "w-new", name: "devbox:/srv/api", directory: "devbox:/srv/api", last_activity: at(1000) },
];
const sessions = new Map([
  [
    "w-old",
    [
      { id: "aaaa1111-x", title: "Fix the tokenizer", last_activity: at(95_000) },
      { id: "bbbb2222-x", title: "Add a lexer test", last_activity: at(90_000) },
    ],
  ],
  ["w-new", [{ id: "cccc3333-x", title: "Deploy the API", last_activity: at(1000) }]],
  ["w-demo", [{ id: "dddd4444-x", title: "Demo run", last_activity: at(0) }]],
]);

const keys = (rows) => rows.map((r) => r.key);

test("rows are grouped by workspace, newest first, the demo last", () => {
  const rows = buildRows(workspaces, sessions);
  assert.deepEqual(keys(rows), [
    "w:w-new",
    "s:w-new:cccc3333-x",
    "w:w-old",
    "s:w-old:bbbb2222-x",
    "s:w-old:aaaa1111-x",
    "w:w-demo",
    "s:w-demo:dddd4444-x",
  ]);
  assert.deepEqual(countRows(rows), { sessions: 4, groups: 3 });
});

test("no filter: every row, after Auto", () => {
  const rows = buildRows(workspaces, sessions);
  const shown = filterRows(rows, "  ");
  assert.equal(shown[0].kind, "auto");
  assert.equal(shown.length, rows.length + 1);
});

test("the filter matches titles, ids and workspaces, every word, in any case", () => {
  const rows = buildRows(workspaces, sessions);
  // A title's word: the session under its workspace's group row.
  assert.deepEqual(keys(filterRows(rows, "LEXER")), ["w:w-old", "s:w-old:bbbb2222-x"]);
  // A workspace's name (a forwarded host's label): the group and all its sessions.
  assert.deepEqual(keys(filterRows(rows, "devbox")), ["w:w-new", "s:w-new:cccc3333-x"]);
  // Words from the workspace and from the title together.
  assert.deepEqual(keys(filterRows(rows, "parser fix")), ["w:w-old", "s:w-old:aaaa1111-x"]);
  // A short id.
  assert.deepEqual(keys(filterRows(rows, "cccc33")), ["w:w-new", "s:w-new:cccc3333-x"]);
  assert.deepEqual(filterRows(rows, "nothing like this"), []);
});

test("ten thousand sessions filter well within a keystroke", () => {
  const many = [];
  const byWs = new Map();
  for (let w = 0; w < 100; w++) {
    many.push({ id: `w${w}`, name: `project-${w}`, directory: `/src/project-${w}`, last_activity: at(w * 1000) });
    byWs.set(
      `w${w}`,
      Array.from({ length: 100 }, (_, i) => ({ id: `s${w}-${i}`, title: `task ${i} of ${w}`, last_activity: at(i) })),
    );
  }
  const rows = buildRows(many, byWs);
  const started = performance.now();
  for (const q of ["t", "ta", "tas", "task", "task 4", "task 42"]) filterRows(rows, q);
  assert.ok(performance.now() - started < 1000); // six keystrokes, on a loaded machine (the bench: the DOM too)
  assert.deepEqual(keys(filterRows(rows, "s7-42")), ["w:w7", "s:w7:s7-42"]);
});

test("keys move within the list and stop at its ends", () => {
  const rows = [1, 2, 3];
  assert.equal(nextIndex(rows, -1, 1), 0);
  assert.equal(nextIndex(rows, -1, -1), 2);
  assert.equal(nextIndex(rows, 2, 1), 2);
  assert.equal(nextIndex(rows, 0, -1), 0);
  assert.equal(nextIndex(rows, 0, 10), 2);
  assert.equal(nextIndex([], 0, 1), -1);
});

test("a session's span and short id", () => {
  assert.equal(sessionSpan({ started_at: at(60_000), last_activity: at(0) }), 60_000);
  assert.equal(sessionSpan({ started_at: null, last_activity: at(0) }), null);
  assert.equal(shortId("1af7fc5e-8455-4414"), "1af7fc5e");
});

test("a span of days reads in days", () => {
  assert.equal(spanText(90 * 60_000), "1 h 30 m");
  assert.equal(spanText(3 * 24 * 3600_000 + 5), "3 d");
});
