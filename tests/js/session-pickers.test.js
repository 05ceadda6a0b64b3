import "./dom-env.js";

import assert from "node:assert/strict";
import { test } from "node:test";

const { SETTLE_MS, autoWorkspace, browserWorkspace, hostGone, nestedByParent } =
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
  assert.deepEqual(
    nestedByParent(sessions).map((s) => s.id),
    ["s2", "s1", "sub"],
  );
});

test("a forwarded host whose forwarder is gone says so, with the time since", () => {
  assert.equal(hostGone({ label: "devbox", connected: false, since: at(5 * 60_000) }, now), "disconnected 5 min ago");
  assert.equal(hostGone({ label: "devbox", connected: false, since: null }, now), "disconnected");
  assert.equal(hostGone({ label: "devbox", connected: true, since: at(60_000) }, now), null);
  assert.equal(hostGone(null, now), null);
});
