// Markdown in prompts and replies, without HTML: markdown-it (lib/page/vendor, pinned) only
// tokenizes; this file turns its tokens into DOM nodes, every string set as text (lib/page/dom.js).
//
// What a hostile transcript could try, and why it stays inert:
// - raw HTML: the tokenizer runs with `html: false`, so `<img onerror>` is literal text, and a
//   stray html token would be drawn as text anyway;
// - links: only http, https and mailto become anchors (new tab, no opener, no referrer); any other
//   scheme (javascript:, data:, relative paths that would resolve inside the extension) is text;
// - images: never an <img> (a remote image is a beacon that tells a server someone reads this):
//   an image is a link the user may click, or text;
// - depth and size: input nested past NESTING_LIMIT, or longer than MARKDOWN_MAX_CHARS, is shown
//   literally, since the tokenizer would drop what lies deeper and big inputs cost time.

import { h, textNode } from "../lib/page/dom.js";
import markdownit from "../lib/page/vendor/markdown-it.js";

/** Longer text is shown literally (a huge tool dump pasted as a prompt is not prose). */
export const MARKDOWN_MAX_CHARS = 100_000;
const NESTING_LIMIT = 40;

const md = markdownit("default", {
  html: false,
  linkify: true,
  breaks: true,
  typographer: false,
  maxNesting: NESTING_LIMIT,
});

const SAFE_LINK = /^(https?:\/\/|mailto:)/i;
const BLOCK_TAGS = new Set([
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "ul",
  "ol",
  "li",
  "blockquote",
  "thead",
  "tbody",
  "tr",
  "th",
  "td",
]);
const INLINE_TAGS = new Set(["em", "strong", "s"]);
const ALIGN = /text-align:\s*(left|right|center)/;

/** Render `text` as Markdown into `target`. */
export function renderMarkdown(target, text) {
  const src = String(text ?? "");
  if (src.length > MARKDOWN_MAX_CHARS) return literal(target, src);
  let tokens;
  try {
    tokens = md.parse(src, {});
  } catch (err) {
    console.warn("sidemirror: markdown", err.message);
    return literal(target, src);
  }
  if (tooDeep(tokens)) return literal(target, src);
  target.classList.add("md");
  target.append(blocks(tokens));
}

/** As written, whitespace kept (the plain-text style of the panel). */
function literal(target, src) {
  target.classList.remove("md");
  target.append(textNode(src));
}

function tooDeep(tokens) {
  for (const t of tokens) {
    if (t.level >= NESTING_LIMIT - 1) return true;
    if (t.children) for (const c of t.children) if (c.level >= NESTING_LIMIT - 1) return true;
  }
  return false;
}

function blocks(tokens) {
  const root = document.createDocumentFragment();
  const stack = [root];
  for (const t of tokens) {
    const parent = stack[stack.length - 1];
    if (t.nesting === 1) {
      const opened = openBlock(t);
      if (opened) parent.append(opened.node);
      stack.push(opened ? opened.target : parent);
    } else if (t.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (t.type === "inline") {
      parent.append(inline(t.children || []));
    } else if (t.type === "fence" || t.type === "code_block") {
      parent.append(codeBlock(t));
    } else if (t.type === "hr") {
      parent.append(h("hr"));
    } else if (t.content) {
      parent.append(textNode(t.content)); // html_block and anything newer: as text
    }
  }
  return root;
}

/** What a block token opens: `node` goes into the page, its content into `target`; null when
 * it opens nothing of its own (a tight list's paragraph: its text goes straight into the item). */
function openBlock(t) {
  if (t.hidden && t.type === "paragraph_open") return null;
  if (t.type === "table_open") {
    const table = h("table");
    // Wide tables scroll on their own, not the whole panel; focusable so keys can scroll it.
    return { node: h("div", { class: "md-table", tabIndex: 0 }, table), target: table };
  }
  const tag = BLOCK_TAGS.has(t.tag) ? t.tag : "div";
  const el = h(tag);
  if (t.type === "ordered_list_open") {
    const start = Number(t.attrGet("start"));
    if (Number.isInteger(start) && start !== 1) el.start = start;
  }
  if (tag === "th" || tag === "td") {
    const align = ALIGN.exec(t.attrGet("style") || "");
    if (align) el.className = `align-${align[1]}`;
  }
  return { node: el, target: el };
}

function codeBlock(t) {
  const lang = (t.info || "").trim().split(/\s+/, 1)[0].slice(0, 40);
  const code = h("code", { text: t.content.replace(/\n$/, "") });
  const pre = h("pre", { class: "code", tabIndex: 0 }, code);
  if (!lang) return pre;
  return h("figure", { class: "md-code" }, h("figcaption", { class: "code-lang", text: lang }), pre);
}

function inline(children) {
  const root = document.createDocumentFragment();
  const stack = [root];
  for (const t of children) {
    const parent = stack[stack.length - 1];
    if (t.nesting === 1) {
      const el =
        t.type === "link_open"
          ? link(t.attrGet("href"), t.attrGet("title"))
          : h(INLINE_TAGS.has(t.tag) ? t.tag : "span");
      parent.append(el);
      stack.push(el);
    } else if (t.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else if (t.type === "code_inline") {
      parent.append(h("code", { text: t.content }));
    } else if (t.type === "softbreak" || t.type === "hardbreak") {
      parent.append(h("br"));
    } else if (t.type === "image") {
      parent.append(image(t));
    } else if (t.content) {
      parent.append(textNode(t.content)); // text, text_special, html_inline: all as text
    }
  }
  return root;
}

/** An anchor for a web or mail link, opened in a new tab; anything else is its text only. */
function link(href, title) {
  const url = String(href || "");
  if (!SAFE_LINK.test(url))
    return h("span", { class: "md-link-refused", title: "Link not opened: only http, https and mailto links are" });
  const a = h("a", {
    target: "_blank",
    rel: "noopener noreferrer",
    referrerPolicy: "no-referrer",
    title: title || url,
  });
  a.href = url; // checked above; dom.js refuses href in `attrs` so no other path sets one
  return a;
}

/** An image is never loaded: its alt text, linked to it when it is on the web. */
function image(t) {
  const alt = t.content || "image";
  const src = String(t.attrGet("src") || "");
  if (!/^https?:\/\//i.test(src)) return h("span", { class: "md-image", text: `[image: ${alt}]` });
  const a = link(src, `Image (not loaded): ${src}`);
  a.classList.add("md-image");
  a.append(textNode(`[image: ${alt}]`));
  return a;
}
