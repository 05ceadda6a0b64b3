// Rewinds on the timeline's rows: which rows a rewind abandoned, the one group row standing in
// for them, what is shown closed and opened, and a later rewind that abandons an earlier one's
// line (its group nests inside).
import "./dom-env.js";

import assert from "node:assert/strict";
import { test } from "node:test";

const { RewindFolds, buildGroup, isRewind, setOpen } = await import("../../extension/sidepanel/rewinds.js");

const row = (item, extra = {}) => ({ item, result: null, children: null, partial: null, el: null, ...extra });
const user = (seq, text) => row({ id: `s.${seq}`, seq, type: "user", text });
const rewind = (seq, after) => row({ id: `s.${seq}`, seq, type: "system", subtype: "rewind", abandoned_after: after });
/** What the list shows: item texts, and each group as `[group N]`. */
const shown = (rows) => rows.map((r) => (r.fold ? `[group ${r.fold.count}]` : r.item.text || r.item.subtype));

test("only a system line with abandoned_after and a seq is a rewind", () => {
  assert.ok(isRewind(rewind(9, 3).item));
  assert.ok(!isRewind({ type: "system", subtype: "rewind", seq: 9 }));
  assert.ok(!isRewind({ type: "user", subtype: "rewind", abandoned_after: 1, seq: 9 }));
  assert.ok(!isRewind(null));
});

test("abandoned rows fold behind one group row until it is opened", () => {
  const rows = [user(1, "first"), user(2, "tried"), user(3, "tried again"), rewind(4, 1), user(5, "new branch")];
  const toggled = [];
  const folds = new RewindFolds((group) => toggled.push(group));
  folds.update(rows);
  assert.deepEqual(shown(folds.view(rows)), ["first", "[group 2]", "rewind", "new branch"]);
  assert.ok(folds.hides(rows[1]) && !folds.hides(rows[0]) && !folds.hides(rows[4]));
  const group = folds.standIn(rows[2]);
  const el = buildGroup(group);
  const button = el.querySelector("button");
  assert.equal(button.textContent, "Abandoned by the rewind · 2 items");
  assert.equal(button.getAttribute("aria-expanded"), "false");

  setOpen(group, true);
  assert.equal(button.getAttribute("aria-expanded"), "true");
  assert.deepEqual(shown(folds.view(rows)), ["first", "[group 2]", "tried", "tried again", "rewind", "new branch"]);
  assert.equal(folds.standIn(rows[2]), null);
});

test("a tool result and a sub-agent's items count in the group", () => {
  const call = row(
    { id: "s.2", seq: 2, type: "tool_call", text: "call" },
    { result: { id: "s.3", seq: 3, type: "tool_result" }, children: [row({ id: "s.4", seq: 4, type: "assistant" })] },
  );
  const rows = [user(1, "first"), call, rewind(5, 1)];
  const folds = new RewindFolds(() => {});
  folds.update(rows);
  assert.deepEqual(shown(folds.view(rows)), ["first", "[group 3]", "rewind"]);
});

test("a later rewind to an earlier point holds the earlier rewind's group inside its own", () => {
  const rows = [
    user(1, "start"),
    user(2, "a"),
    rewind(3, 1), // abandons "a"
    user(4, "b"),
    rewind(5, 0), // goes back before everything: abandons 1–4, the first rewind line included
    user(6, "c"),
  ];
  const folds = new RewindFolds(() => {});
  folds.update(rows);
  // Closed: one group for the later rewind; the earlier group shows only inside it.
  assert.deepEqual(shown(folds.view(rows)), ["[group 4]", "rewind", "c"]);
  const [outer, inner] = folds.active;
  assert.equal(outer.fold.rewind, rows[4]);
  setOpen(outer, true);
  assert.deepEqual(shown(folds.view(rows)), ["[group 4]", "start", "[group 1]", "rewind", "b", "rewind", "c"]);

  // Going to an abandoned item opens every group that hides it.
  setOpen(outer, false);
  assert.ok(folds.reveal(rows[1]));
  assert.ok(outer.fold.open && inner.fold.open);
  assert.ok(!folds.hides(rows[1]));
});
