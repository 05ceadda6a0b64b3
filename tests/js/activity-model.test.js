import assert from "node:assert/strict";
import { test } from "node:test";

import { isOwnNoise } from "../../extension/sidepanel/activity-model.js";

const OWN = "chrome-extension://abcdefghijklmnopabcdefghijklmnop/";

test("a blank tab and this extension's own pages are not the agent's activity", () => {
  assert.equal(isOwnNoise({ url: "about:blank", args: ["about:blank"] }, OWN), true);
  assert.equal(isOwnNoise({ url: `${OWN}sidepanel/sidepanel.html`, args: [] }, OWN), true);
  const consoleOnPanel = { url: `${OWN}sidepanel/sidepanel.html`, args: [`at f (${OWN}x.js:1)`] };
  assert.equal(isOwnNoise(consoleOnPanel, OWN), true);
});

test("pages the agent works on are kept, another extension's too", () => {
  assert.equal(isOwnNoise({ url: "https://example.com/", args: [] }, OWN), false);
  assert.equal(isOwnNoise({ url: "about:blank", args: ["https://example.com/"] }, OWN), false); // goto from a blank tab
  assert.equal(isOwnNoise({ url: "chrome-extension://other/page.html" }, OWN), false);
  assert.equal(isOwnNoise({ url: null, args: ["about:blank"] }, OWN), false); // no page: a command
});
