import assert from "node:assert/strict";
import { test } from "node:test";

import { visible } from "../../extension/lib/page/visible-text.js";

test("a bidi override in a command is shown, not obeyed", () => {
  assert.equal(visible("rm -rf /tmp/\u202Efdp.exe"), "rm -rf /tmp/⟨U+202E⟩fdp.exe");
});

test("a zero-width space between ASCII letters is shown", () => {
  assert.equal(visible("pass\u200Bword"), "pass⟨U+200B⟩word");
});

test("a joiner inside an emoji or a Persian word is left alone", () => {
  assert.equal(visible("👩\u200D💻"), "👩\u200D💻");
  assert.equal(visible("می\u200Cخواهم"), "می\u200Cخواهم");
});

test("a joiner next to ASCII only hides, so it is shown", () => {
  assert.equal(visible("a\u200Db"), "a⟨U+200D⟩b");
});

test("plain text comes back as it was", () => {
  assert.equal(visible("plain text"), "plain text");
  assert.equal(visible(null), "");
});
