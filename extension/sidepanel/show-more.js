// "Show more" for a truncated item, and what the item says about how much was cut.
//
// Every long text arrives cut (500 characters by default) with `full_length`, its length before
// the cut. Most items are a few thousand characters: "Show more (12.3k chars)" says enough. Some
// are huge (a 10 MB reply or tool output; the server may even have read only the head of such a
// line): then the size itself is the news, so the item says so in a line of its own, and "Show
// more" loads what the server holds, saying so when that is less than `full_length`. Sizes are
// the item's own numbers: `full_length` counts characters (code points), so that is the unit.

import { h, setText } from "../lib/page/dom.js";
import { compactNumber } from "../lib/page/format.js";
import { TRUNCATED_FIELDS } from "../lib/shared/protocol.gen.js";

/** From this length up, an item is said to be huge: far more than anyone reads in a panel. */
export const HUGE_CHARS = 100_000;

const NOUNS = Object.freeze({
  assistant: "Reply",
  user: "Prompt",
  thinking: "Thinking",
  tool_use: "Tool input",
  tool_result: "Tool output",
  system: "Notice",
});

/** "Reply of 10.8M characters: shown cut" for a huge truncated item, else null. */
export function cutNote(item) {
  const fields = TRUNCATED_FIELDS[item.type];
  if (!fields || !item[fields[1]] || !(item.full_length >= HUGE_CHARS)) return null;
  return `${NOUNS[item.type] || "Item"} of ${compactNumber(item.full_length)} characters: shown cut`;
}

/** Code points, as the server counts `full_length` (a surrogate pair is one). */
function codePoints(text) {
  return text.length - (text.match(/[\udc00-\udfff]/g)?.length ?? 0);
}

/** What a huge item's note says once opened: all of it, or as much as the server holds. */
function openNote(item, full) {
  const held = codePoints(full);
  const total = compactNumber(item.full_length);
  if (held < item.full_length)
    return `Showing ${compactNumber(held)} of ${total} characters: the server holds no more of it`;
  return `${NOUNS[item.type] || "Item"} of ${total} characters, shown whole`;
}

/**
 * The note (huge items) and the "Show more" button for a truncated item, or null. The button
 * fetches the full item once, then toggles `target` between the short and the full text.
 */
export function more(item, ctx, target, render) {
  const fields = TRUNCATED_FIELDS[item.type];
  if (!fields) return null;
  const [field, flag] = fields;
  if (!item[flag]) return null;
  const short = item[field];
  const noteText = cutNote(item);
  const note = noteText ? h("p", { class: "cut-note", text: noteText }) : null;
  const closedLabel = noteText ? "Show more" : `Show more (${compactNumber(item.full_length)} chars)`;
  let full = null;
  let expanded = false;
  const btn = h("button", { type: "button", class: "more", text: closedLabel, attrs: { "aria-expanded": "false" } });
  btn.addEventListener("click", async () => {
    if (!expanded && full === null) {
      btn.disabled = true;
      btn.textContent = "Loading…";
      try {
        const data = await ctx.fetchFull(item.id);
        full = String(data?.[field] ?? "");
      } catch (err) {
        btn.disabled = false;
        setText(btn, `Couldn't load (${err.message}) — retry`);
        return;
      }
      btn.disabled = false;
    }
    expanded = !expanded;
    target.replaceChildren();
    render(target, expanded ? full : short);
    // Opened, the text takes its full height in place (no scroll box inside the scrolling feed);
    // closed again, the button stays in view so the reader keeps their place.
    target.classList.toggle("expanded", expanded);
    btn.textContent = expanded ? "Show less" : closedLabel;
    btn.setAttribute("aria-expanded", String(expanded));
    if (note) setText(note, expanded ? openNote(item, full) : noteText);
    if (!expanded) btn.scrollIntoView({ block: "nearest" });
  });
  return [note, btn];
}
