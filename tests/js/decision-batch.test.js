import "./dom-env.js";

import assert from "node:assert/strict";
import { test } from "node:test";

const { requestSummary, resultText } = await import("../../extension/sidepanel/decision-batch.js");

test("each listed request names its command, else its file, else its input", () => {
  assert.equal(
    requestSummary({ tool_name: "Bash", tool_input: { command: "npm test", description: "x" } }),
    "Bash: npm test",
  );
  assert.equal(
    requestSummary({ tool_name: "Edit", tool_input: { file_path: "/a/b.py", old_string: "x" } }),
    "Edit: /a/b.py",
  );
  assert.equal(requestSummary({ tool_name: "Task", tool_input: { n: 1 } }), 'Task: {"n":1}');
});

test("a request that closed meanwhile says how, not that it was allowed", () => {
  assert.equal(resultText({ result: "allowed" }, "Bash: npm test"), "Bash: npm test: allowed");
  assert.equal(
    resultText({ result: "already_answered", outcome: "terminal" }, "Bash: npm test"),
    "Bash: npm test: not answered again, answered in the terminal",
  );
  assert.equal(resultText({ result: "other_session" }, "Bash: x"), "Bash: x: not allowed (other_session)");
});

test("a session row says whose it is and for how long", async () => {
  const { sinceText } = await import("../../extension/sidepanel/sessions-view.js");
  const now = Date.parse("2026-12-05T12:02:10Z");
  assert.equal(sinceText({ agent: "codex", since: "2026-12-05T12:00:00Z" }, now), "Codex · for 2 m 10 s");
  assert.equal(sinceText({ agent: "claude" }, now), "Claude");
});

test("a state that just changed reads 'just now', then whole seconds", async () => {
  const { sinceText } = await import("../../extension/sidepanel/sessions-view.js");
  const since = "2026-12-05T12:00:00Z";
  const at = (ms) => sinceText({ agent: "claude", since }, Date.parse(since) + ms);
  assert.equal(at(983), "Claude · just now");
  assert.equal(at(-40), "Claude · just now"); // the panel's clock a little behind the server's
  assert.equal(at(1000), "Claude · for 1 s");
  assert.equal(at(9960), "Claude · for 9 s");
  assert.equal(at(59_999), "Claude · for 59 s");
  assert.equal(at(61_000), "Claude · for 1 m 1 s");
});
