// DOM building without HTML parsing: every string from the server goes through textContent
// or createTextNode, so markup in session data is always inert text, and through `visible`, so
// bidi controls and other invisible characters show as markers (docs/security.md).

import { visible } from "./visible-text.js";

const SVG_NS = "http://www.w3.org/2000/svg";

/**
 * Build an element. `props`: `class`, `text` and `title` (shown text, made visible), `attrs` (set
 * with setAttribute; event-handler attributes, `style` and `src`/`href` are refused), `on`
 * (event listeners), `dataset`, and plain DOM properties (`type`, `value`, `hidden`, `id`...).
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  applyProps(el, props);
  append(el, children);
  return el;
}

function applyProps(el, props) {
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null) continue;
    if (key === "class") el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    else if (key === "text") el.textContent = visible(value);
    else if (key === "title") el.title = visible(value);
    else if (key === "attrs") setAttrs(el, value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "on") for (const [ev, fn] of Object.entries(value)) el.addEventListener(ev, fn);
    else el[key] = value;
  }
}

// Attributes a user reads (tooltips) or hears (screen readers): shown like text.
const SHOWN_ATTR = new Set(["title", "aria-label", "aria-description"]);
const FORBIDDEN_ATTR = /^(on|style$|src$|href$|srcdoc$|formaction$|xlink:href$)/i;

export function setAttrs(el, attrs) {
  for (const [name, value] of Object.entries(attrs)) {
    if (FORBIDDEN_ATTR.test(name)) throw new Error(`refusing to set attribute ${name}`);
    if (value === false || value === null || value === undefined) el.removeAttribute(name);
    else if (SHOWN_ATTR.has(name)) el.setAttribute(name, visible(value));
    else el.setAttribute(name, value === true ? "" : String(value));
  }
}

/** Append children: nodes, strings (as text), arrays; null/false/undefined are skipped. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : textNode(child));
  }
  return parent;
}

/** A text node for a string from the server (never parsed, invisible characters shown). */
export function textNode(text) {
  return document.createTextNode(visible(text));
}

/** Set an element's text to a string from the server; unchanged text is not rewritten. */
export function setText(el, text) {
  const shown = visible(text);
  if (el.textContent !== shown) el.textContent = shown;
}

export function clear(el) {
  el.replaceChildren();
  return el;
}

/** An inline SVG icon from constant shape descriptions: [[tag, {attr: value}], ...]. */
export function svgIcon(shapes, { size = 16, label = null } = {}) {
  const svg = document.createElementNS(SVG_NS, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("width", String(size));
  svg.setAttribute("height", String(size));
  svg.setAttribute("fill", "none");
  svg.setAttribute("stroke", "currentColor");
  svg.setAttribute("stroke-width", "1.5");
  svg.setAttribute("stroke-linecap", "round");
  svg.setAttribute("stroke-linejoin", "round");
  svg.setAttribute("focusable", "false");
  if (label) {
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", label);
  } else {
    svg.setAttribute("aria-hidden", "true");
  }
  svg.classList.add("icon");
  for (const [tag, attrs] of shapes) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    svg.append(node);
  }
  return svg;
}

/** Copy text to the clipboard; falls back to a selection-based copy. Resolves to success. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h("textarea", { value: text, attrs: { "aria-hidden": "true" }, class: "offscreen" });
    document.body.append(area);
    area.select();
    let ok;
    try {
      ok = document.execCommand("copy");
    } catch {
      ok = false;
    }
    area.remove();
    return ok;
  }
}
