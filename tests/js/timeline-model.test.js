import "./dom-env.js";

import assert from "node:assert/strict";
import { test } from "node:test";

const { TimelineModel } = await import("../../extension/sidepanel/timeline-model.js");
const { renderItem } = await import("../../extension/sidepanel/item-renderers.js");
const { duration } = await import("../../extension/lib/page/format.js");

// The model with a view that draws nothing: what the tests read is where each item went.
class Model extends TimelineModel {
  constructor() {
    super();
    this.clearModel();
    this.vlist = /** @type {any} */ ({ pinned: true });
  }
  _replace(old, row) {
    this.rows[this.rows.indexOf(old)] = row;
  }
  _stale() {}
  _refilter() {}
  _visibleRows() {
    return this.rows;
  }
  _view() {}
}

const add = (model, items) => items.forEach((item) => model._add(item));
const types = (model) => model.rows.map((r) => r.item.type);

test("an item seen again (a reconnect's replay) is not shown twice", () => {
  const model = new Model();
  add(model, [
    { id: "s.1", seq: 1, type: "user", text: "hi" },
    { id: "s.2", seq: 2, type: "assistant", text: "hello" },
    { id: "s.2", seq: 2, type: "assistant", text: "hello" },
  ]);
  assert.deepEqual(types(model), ["user", "assistant"]);
});

test("a tool result lands on its tool card, not as a row of its own", () => {
  const model = new Model();
  add(model, [
    { id: "s.1", seq: 1, type: "tool_use", tool_use_id: "t1", name: "Bash" },
    { id: "s.2", seq: 2, type: "tool_result", tool_use_id: "t1", text: "ok" },
  ]);
  assert.deepEqual(types(model), ["tool_use"]);
  assert.equal(model.rows[0].result.text, "ok");
  assert.equal(model.running.size, 0);
});

test("a sub-agent's items nest under its Task card", () => {
  const model = new Model();
  add(model, [
    { id: "s.1", seq: 1, type: "tool_use", tool_use_id: "task", name: "Task" },
    { id: "s.2", seq: 2, type: "assistant", text: "inside", parent_tool_use_id: "task" },
  ]);
  assert.deepEqual(types(model), ["tool_use"]);
  assert.equal(model.rows[0].children[0].item.text, "inside");
});

test("live text gives way to the complete reply with the same segment", () => {
  const model = new Model();
  add(model, [
    { type: "assistant_delta", segment_id: "g1", text: "Hel" },
    { type: "assistant_delta", segment_id: "g1", text: "lo" },
  ]);
  assert.deepEqual(model.rows[0].partial, ["Hel", "lo"]);
  add(model, [{ id: "s.5", seq: 5, type: "assistant", segment_id: "g1", text: "Hello" }]);
  assert.equal(model.rows.length, 1);
  assert.equal(model.rows[0].item.text, "Hello");
  assert.equal(model.rows[0].partial, null);
});

test("an earlier page goes before the rows held, and its results find their cards", () => {
  const model = new Model();
  add(model, [{ id: "s.9", seq: 9, type: "tool_result", tool_use_id: "t1", text: "late" }]);
  assert.deepEqual(types(model), ["tool_result"]);
  model.placeEarlier([
    { id: "s.1", seq: 1, type: "user", text: "go" },
    { id: "s.2", seq: 2, type: "tool_use", tool_use_id: "t1", name: "Bash" },
  ]);
  assert.deepEqual(types(model), ["user", "tool_use"]);
  assert.equal(model.rows[1].result.text, "late");
});

// turn-2's last turn (Claude Code 2.1.7): closed at its end_turn after 547,831 ms of wall time,
// then the agent's own `turn_duration` of 529,891 ms (it leaves out a permission's wait).
const TURN = { id: "s.20", seq: 20, type: "turn_complete", turn: 1, status: "ok", duration_ms: 547831 };
const MEASURED = { id: "s.30", seq: 30, type: "turn_duration", turn_seq: 20, duration_ms: 529891 };

test("the agent's own duration of a closed turn replaces its wall time on the turn's row", () => {
  const model = new Model();
  add(model, [{ id: "s.10", seq: 10, type: "user", content: "go" }, { ...TURN }]);
  const row = model.rows[1];
  row.el = renderItem(row.item, {}); // on screen
  assert.equal(row.el.querySelector(".turn-dur").textContent, duration(547831));
  add(model, [MEASURED]);
  assert.deepEqual(types(model), ["user", "turn_complete"]); // never a row of its own
  assert.equal(row.el.querySelector(".turn-dur").textContent, duration(529891));
  assert.equal(row.item.duration_ms, 529891); // and when it is built again
});

test("a turn's own duration that came before its turn was paged in applies once it is", () => {
  const model = new Model();
  add(model, [MEASURED]);
  assert.equal(model.rows.length, 0);
  model.placeEarlier([{ ...TURN }]);
  assert.equal(model.rows[0].item.duration_ms, 529891);
  assert.equal(renderItem(model.rows[0].item, {}).querySelector(".turn-dur").textContent, duration(529891));
});

test("a sub-agent's item on screen before its Task was paged in moves into the Task, no stray left", async () => {
  const { RowElements } = await import("../../extension/sidepanel/row-elements.js");
  const { buildRow } = await import("../../extension/sidepanel/timeline-rows.js");
  const list = document.createElement("div");
  const watched = new Set();
  const resizes = /** @type {any} */ ({ observe: (el) => watched.add(el), unobserve: (el) => watched.delete(el) });
  const elements = new RowElements(list, (row) => buildRow(row, {}), resizes);
  const model = new Model();
  model.vlist = /** @type {any} */ ({ pinned: true, drop: (row) => elements.drop(row) });
  add(model, [
    { id: "s.5", seq: 5, type: "assistant", content: "inside the task", parent_tool_use_id: "task" },
    { id: "s.6", seq: 6, type: "user", content: "next" },
  ]);
  elements.mount(model.rows, 0); // both on screen: the sub-agent's reply shown on its own
  assert.deepEqual(
    [...list.children].map((el) => el.dataset.itemId),
    ["s.5", "s.6"],
  );
  const stray = list.children[0];

  model.placeEarlier([{ id: "s.1", seq: 1, type: "tool_use", tool_use_id: "task", name: "Task" }]);
  elements.mount(model.rows, 0);

  assert.deepEqual(
    [...list.children].map((el) => el.dataset.itemId),
    ["s.1", "s.6"],
  );
  const nested = list.querySelectorAll('[data-item-id="s.5"]');
  assert.equal(nested.length, 1); // once, inside the Task's sub-agent group
  assert.ok(list.children[0].contains(nested[0]));
  assert.ok(!watched.has(stray)); // the list no longer measures the element it dropped
});
