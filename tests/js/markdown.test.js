import "./dom-env.js";

import assert from "node:assert/strict";
import { test } from "node:test";

const { renderMarkdown, MARKDOWN_MAX_CHARS } = await import("../../extension/sidepanel/markdown.js");

function render(text) {
  const target = document.createElement("div");
  renderMarkdown(target, text);
  return target;
}

test("raw HTML in a reply stays text", () => {
  const out = render('Hello <img src=x onerror="alert(1)"> <script>alert(2)</script>');
  assert.equal(out.querySelector("img"), null);
  assert.equal(out.querySelector("script"), null);
  assert.match(out.textContent, /<img src=x onerror="alert\(1\)">/);
});

test("only http, https and mailto links become anchors", () => {
  const out = render("[safe](https://example.test/a) [bad](javascript:alert(1)) [data](data:text/html,x)");
  const anchors = [...out.querySelectorAll("a")];
  assert.deepEqual(
    anchors.map((a) => a.getAttribute("href")),
    ["https://example.test/a"],
  );
  assert.match(out.textContent, /bad/);
});

test("an image is never loaded", () => {
  const out = render("![tracker](https://tracker.test/pixel.png)");
  assert.equal(out.querySelector("img"), null);
  assert.match(out.textContent, /tracker/);
});

test("emphasis, lists and code become their elements", () => {
  const out = render("**bold** and *em*\n\n- one\n- two\n\n`code`");
  assert.equal(out.querySelector("strong")?.textContent, "bold");
  assert.equal(out.querySelectorAll("li").length, 2);
  assert.equal(out.querySelector("code")?.textContent, "code");
});

test("text past the size limit is shown literally", () => {
  const big = "**x** ".repeat(Math.ceil(MARKDOWN_MAX_CHARS / 6) + 1);
  const out = render(big);
  assert.equal(out.querySelector("strong"), null);
  assert.equal(out.textContent, big);
});
