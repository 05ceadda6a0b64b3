// Review comments on a diff (review-comments.js over diff-view.js's lines): a click on a line's
// number picks it, a shift-click extends the pick within the hunk, and "Add to review" gathers
// the file, the lines and the quoted lines the agent will be sent.
import "./dom-env.js";

import assert from "node:assert/strict";
import { test } from "node:test";

const { diffBlock } = await import("../../extension/sidepanel/diff-view.js");
const { ReviewDraft, installReviewComments } = await import("../../extension/sidepanel/review-comments.js");

const EDIT = {
  id: "e.1",
  type: "tool_use",
  diff: {
    path: "src/app.js",
    added: 2,
    removed: 1,
    hunks: [
      { old_start: 10, old_lines: 2, new_start: 10, new_lines: 3, lines: [" keep", "-old", "+new one", "+new two"] },
    ],
  },
};

function click(el, shiftKey = false) {
  const event = new globalThis.window.Event("click", { bubbles: true });
  Object.defineProperty(event, "shiftKey", { value: shiftKey });
  el.dispatchEvent(event);
}

test("a shift-click range becomes one comment with its file, lines and quotes", () => {
  const root = document.createElement("div");
  root.append(diffBlock(EDIT, {}));
  document.body.append(root);
  const draft = new ReviewDraft();
  let changes = 0;
  draft.onChange = () => (changes += 1);
  installReviewComments(root, draft);
  const lines = [...root.querySelectorAll(".diff-line[data-line]")];
  assert.deepEqual(
    lines.map((l) => l.dataset.line),
    ["10", "11", "11", "12"], // the kept line, the removed one (old numbering), the two added
  );
  click(lines[2].querySelector(".diff-no"));
  click(lines[3].querySelector(".diff-no"), true);
  assert.equal(root.querySelectorAll(".review-selected").length, 2);
  const form = root.querySelector(".review-form");
  assert.match(form.textContent, /Comment on src\/app\.js:11-12/);
  const text = form.querySelector("textarea");
  text.value = "Name these better.";
  text.dispatchEvent(new globalThis.window.Event("input"));
  click(form.querySelector(".review-add"));
  assert.deepEqual(draft.comments, [
    { path: "src/app.js", line: 11, end_line: 12, quote: ["+new one", "+new two"], comment: "Name these better." },
  ]);
  assert.equal(changes, 1);
  assert.equal(root.querySelector(".review-form"), null);
  assert.equal(root.querySelectorAll(".review-selected").length, 0);
  draft.clear();
  assert.deepEqual(draft.comments, []);
});

test("a range over a removed line is named by the new file's lines", () => {
  const root = document.createElement("div");
  root.append(diffBlock(EDIT, {}));
  const draft = new ReviewDraft();
  installReviewComments(root, draft);
  const lines = [...root.querySelectorAll(".diff-line[data-line]")];
  click(lines[0].querySelector(".diff-no"));
  click(lines[2].querySelector(".diff-no"), true);
  const form = root.querySelector(".review-form");
  assert.match(form.textContent, /src\/app\.js:10-11/);
  form.querySelector("textarea").value = "Why?";
  click(form.querySelector(".review-add"));
  assert.deepEqual(draft.comments[0].quote, [" keep", "-old", "+new one"]);
});

test("c on a focused hunk comments on its changed lines", () => {
  const root = document.createElement("div");
  root.append(diffBlock(EDIT, {}));
  const draft = new ReviewDraft();
  installReviewComments(root, draft);
  const key = new globalThis.window.Event("keydown", { bubbles: true });
  Object.defineProperty(key, "key", { value: "c" });
  root.querySelector(".diff-hunk").dispatchEvent(key);
  const form = root.querySelector(".review-form");
  assert.match(form.textContent, /src\/app\.js:11-12/);
  assert.equal(root.querySelectorAll(".review-selected").length, 3);
});
