// What the opened item highlights for a search: the words as typed and, for a word the server's
// tokenizer splits, its parts; found without case, never overlapping.
import assert from "node:assert/strict";
import { test } from "node:test";

const { searchTerms, termSpans } = await import("../../extension/sidepanel/search-highlight.js");

test("a search's terms: each word, and the parts of one with punctuation, longest first", () => {
  assert.deepEqual(searchTerms("  Sync  tech-spec "), ["tech-spec", "sync", "tech", "spec"]);
  assert.deepEqual(searchTerms("src/providers README.md"), [
    "src/providers",
    "providers",
    "readme.md",
    "readme",
    "src",
    "md",
  ]);
  assert.deepEqual(searchTerms('"(" *'), ['"("', "*"]);
  assert.deepEqual(searchTerms(""), []);
});

test("spans are found without case, in order, the whole word winning over its parts", () => {
  const text = "Read the Tech-Spec, then the tech notes and SyncState.";
  const spans = termSpans(text, searchTerms("tech-spec sync"));
  assert.deepEqual(
    spans.map(([s, e]) => text.slice(s, e)),
    ["Tech-Spec", "tech", "Sync"],
  );
});
