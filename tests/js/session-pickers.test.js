import "./dom-env.js";

import assert from "node:assert/strict";
import { test } from "node:test";

const { AUTO, SETTLE_MS, autoWorkspace, browserWorkspace, sessionOptions, workspaceOptions } =
  await import("../../extension/sidepanel/session-pickers.js");

const now = Date.parse("2026-12-05T12:00:00Z");
const at = (msAgo) => new Date(now - msAgo).toISOString();

test("Auto follows the workspace that changed last", () => {
  const list = [
    { id: "b", last_activity: at(1000) },
    { id: "a", last_activity: at(60_000) },
  ];
  assert.equal(autoWorkspace(list, null, now).id, "b");
  assert.equal(autoWorkspace(list, "a", now).id, "b");
});

test("Auto stays on the workspace shown while it changed within the settle time", () => {
  const list = [
    { id: "b", last_activity: at(100) },
    { id: "a", last_activity: at(SETTLE_MS / 2) },
  ];
  assert.equal(autoWorkspace(list, "a", now).id, "a");
});

test("Auto shows the demo only while no real workspace exists", () => {
  const demo = { id: "d", directory: "/demo/sidemirror-demo", last_activity: at(100) };
  const real = { id: "r", directory: "/home/me/project", last_activity: at(3 * 60 * 60_000) };
  assert.equal(autoWorkspace([demo], null, now).id, "d");
  // The demo wrote a moment ago and is shown: a real workspace, however old, still wins.
  assert.equal(autoWorkspace([demo, real], "d", now).id, "r");
  assert.equal(autoWorkspace([demo, real], null, now).id, "r");
});

test("the browser hint lasts two minutes", () => {
  assert.equal(browserWorkspace({ workspace: "w", ts: at(60_000) }, now), "w");
  assert.equal(browserWorkspace({ workspace: "w", ts: at(3 * 60_000) }, now), null);
  assert.equal(browserWorkspace(null, now), null);
});

test("a sub-agent's thread is listed right under the session that spawned it", () => {
  const sessions = [
    { id: "s2", title: "second", last_activity: at(1000) },
    { id: "sub", title: "helper", parent_id: "s1", last_activity: at(2000) },
    { id: "s1", title: "first", last_activity: at(3000) },
  ];
  const options = sessionOptions(sessions);
  assert.equal(options[0].value, AUTO);
  assert.deepEqual(
    options.slice(1).map((o) => o.value),
    ["s2", "s1", "sub"],
  );
  assert.match(options[3].textContent, /^↳ /);
});

test("a forwarded host whose forwarder is gone says so, with the time since", () => {
  const base = { directory: "devbox:/home/dev/app", name: "devbox:app", active: false, branch: null };
  const list = [
    { ...base, id: "gone", host: { label: "devbox", connected: false, since: at(5 * 60_000) } },
    { ...base, id: "never", host: { label: "devbox", connected: false, since: null } },
    { ...base, id: "here", host: { label: "devbox", connected: true, since: at(60_000) } },
    { ...base, id: "local", name: "app", directory: "/home/dev/app", host: null },
  ];
  const texts = workspaceOptions(list, null, null, now)
    .slice(1)
    .map((o) => o.textContent);
  assert.deepEqual(texts, ["devbox:app (disconnected 5 min ago)", "devbox:app (disconnected)", "devbox:app", "app"]);
});

test("sessions titled alike are told apart by their start time and short id", () => {
  const sessions = [
    { id: "1af7fc5e-8455-4414", title: "/init", started_at: "2026-12-04T09:05:00Z", last_activity: at(1000) },
    { id: "5c0375b4-57a5-4f26", title: "/init", started_at: "2026-12-01T15:25:00Z", last_activity: at(2000) },
    { id: "fe5e1c67-53e7-4862", title: "Fix the parser", started_at: "2026-12-01T15:00:00Z", last_activity: at(3000) },
  ];
  const texts = sessionOptions(sessions).map((o) => o.textContent);
  assert.match(texts[1], /^\/init · started .+ · 1af7fc5e · /);
  assert.match(texts[2], /^\/init · started .+ · 5c0375b4 · /);
  assert.notEqual(texts[1].split(" · ")[1], texts[2].split(" · ")[1]); // the start times differ
  assert.match(texts[3], /^Fix the parser · \d+ min ago|^Fix the parser · just now/); // unique: as before
  assert.match(texts[0], /^Latest — \/init · started .+ · 1af7fc5e$/);
});
