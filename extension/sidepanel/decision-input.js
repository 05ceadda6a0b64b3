// What a decision card shows: the whole input that Allow approves (docs/api.md, the `card` of
// `GET /api/decisions`). Every field whole in a scrollable block, never cut; a masked secret as a
// mask with its own Reveal (`POST /api/decisions/{id}/reveal`, the value is kept on this card
// only). What a browser tool will type is a mask too (rule `typed`: the listing, readable with the
// runtime-file token, does not carry it), revealed by the card itself, since it is the action
// being approved. `rendered()` says whether every field is in the page whole, typed text
// revealed: the card enables Allow only then. Server text goes in through text nodes only.

import { api, path } from "../lib/page/client.js";
import { h, setText, textNode } from "../lib/page/dom.js";
import { visible } from "../lib/page/visible-text.js";

const LONG_FIELD = 2000; // a field longer than this says how long it is, so a scroll is expected

/** The server's card, or for an older server the whole redacted input as JSON (nothing cut). */
function cardOf(request) {
  if (request.card && Array.isArray(request.card.fields)) return request.card;
  const text = JSON.stringify(request.tool_input ?? null, null, 2) ?? "null";
  return { whole: true, chars: text.length, fields: [{ path: "input", text, masks: [] }] };
}

/** Masks in order, each inside its field's text and after the one before (else ignored). */
function usableMasks(field) {
  const text = String(field.text);
  let at = 0;
  const masks = [];
  for (const m of [...(field.masks || [])].sort((a, b) => a.start - b.start)) {
    if (!(
      Number.isInteger(m.start) &&
      Number.isInteger(m.end) &&
      m.start >= at &&
      m.end <= text.length &&
      m.end > m.start
    ))
      continue;
    masks.push(m);
    at = m.end;
  }
  return masks;
}

class Reveals {
  constructor(requestId, onError) {
    this.requestId = requestId;
    this.onError = onError;
    this.values = null; // id → value, fetched on the first Reveal, dropped with the card
  }

  async value(maskId) {
    this.values ||= api(path.reveal(this.requestId), { method: "POST" }).then((r) => r.values || {});
    try {
      return (await this.values)[maskId];
    } catch (err) {
      this.values = null;
      this.onError(err);
      return undefined;
    }
  }
}

/** A mask and its Reveal / Hide button: {el, reveal()}; `reveal()` resolves to whether it shows. */
function maskView(mask, marker, reveals) {
  const shown = h("span", { class: "decision-mask-text", text: marker });
  const button = h("button", {
    type: "button",
    class: "decision-reveal",
    text: "Reveal",
    attrs: { "aria-label": `Reveal the masked ${mask.rule}`, "aria-pressed": "false" },
  });
  const el = h(
    "span",
    { class: "decision-mask", dataset: { maskId: String(mask.id), rule: String(mask.rule), marker } },
    shown,
    button,
  );
  const label = () => {
    setText(button, el.dataset.revealed ? "Hide" : "Reveal");
    button.setAttribute("aria-pressed", el.dataset.revealed ? "true" : "false");
  };
  const reveal = async () => {
    const value = await reveals.value(mask.id);
    if (typeof value !== "string") return false;
    setText(shown, value);
    el.dataset.revealed = "1";
    label();
    return true;
  };
  button.addEventListener("click", async () => {
    if (!el.dataset.revealed) return reveal();
    setText(shown, marker);
    delete el.dataset.revealed;
    label();
  });
  return { el, reveal };
}

function fieldView(field, reveals, typedReveals) {
  const text = String(field.text);
  const pre = h("pre", {
    class: "decision-field-text",
    tabIndex: 0,
    attrs: { "aria-label": `${field.path}, in full` },
  });
  const expected = [];
  let at = 0;
  for (const mask of usableMasks(field)) {
    const before = text.slice(at, mask.start);
    pre.append(textNode(before));
    expected.push(visible(before));
    const marker = text.slice(mask.start, mask.end);
    const view = maskView(mask, marker, reveals);
    if (mask.rule === "typed") typedReveals.push(view.reveal());
    pre.append(view.el);
    expected.push(marker);
    at = mask.end;
  }
  pre.append(textNode(text.slice(at)));
  expected.push(visible(text.slice(at)));
  const size =
    text.length > LONG_FIELD
      ? h("span", {
          class: "decision-field-size",
          text: `${text.length.toLocaleString()} characters, shown whole: scroll to read it all`,
        })
      : null;
  const el = h(
    "section",
    { class: "decision-field", dataset: { path: String(field.path) } },
    h("div", { class: "decision-field-path" }, h("code", { text: String(field.path) }), size),
    pre,
  );
  return { el, pre, expected: expected.join("") };
}

/** What the pre shows, each mask as its marker: to compare with what the server sent. Typed
 * text counts as shown only once revealed. */
function shownText(pre) {
  let out = "";
  for (const node of pre.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) out += node.data;
    else if (node.classList?.contains("decision-mask")) {
      if (node.dataset.rule === "typed" && !node.dataset.revealed) return null;
      out += node.dataset.marker;
    }
  }
  return out;
}

/** The card's input view: {el, whole, rendered(), ready}; `ready` settles once typed text is
 * revealed (or could not be). */
export function decisionInput(request, onRevealError) {
  const card = cardOf(request);
  if (!card.whole) {
    const chars = Number(card.chars) || 0;
    const el = h("p", {
      class: "decision-not-shown",
      attrs: { role: "alert" },
      text: `This input${chars ? ` (${chars.toLocaleString()} characters)` : ""} could not be shown whole here, so it cannot be allowed from the panel. Deny it, or answer in the terminal.`,
    });
    return { el, whole: false, rendered: () => false, ready: Promise.resolve() };
  }
  const reveals = new Reveals(request.id, onRevealError);
  const typedReveals = [];
  const fields = card.fields.map((f) => fieldView(f, reveals, typedReveals));
  const el = h(
    "div",
    { class: "decision-input" },
    fields.map((f) => f.el),
  );
  const rendered = () => el.isConnected && fields.every((f) => f.pre.isConnected && shownText(f.pre) === f.expected);
  return { el, whole: true, rendered, ready: Promise.all(typedReveals) };
}
