// What an edit changed, on its tool card: the server's unified hunks (`diff` on a `tool_use`:
// path, +added −removed, hunks of "+", "-" and " " lines; docs/api.md) as a compact red/green
// diff, collapsible, with "Open the whole change" when the hunks were capped (the full item has
// them whole). A call that changed several files (a Codex patch) carries `diffs`: one block a
// file, in order. Lines are text nodes: nothing from the diff is parsed as HTML.

import { h } from "../lib/page/dom.js";
import { wrapToggle } from "./diff-wrap.js";

const MAX_LINES_SHOWN = 400; // beyond this, a card says how many more (the whole change opens them)

/** The diff block for a tool_use item (one a file it changed), or null when it carries none. */
export function diffBlock(item, ctx) {
  const files = Array.isArray(item?.diffs) ? item.diffs.filter(isDiff) : [];
  if (files.length > 1) {
    const blocks = files.map((diff, index) => fileBlock(item, ctx, diff, (full) => full?.diffs?.[index]));
    return h(
      "div",
      { class: "diff-files", attrs: { role: "group", "aria-label": `${files.length} files changed` } },
      ...blocks,
    );
  }
  return isDiff(item?.diff) ? fileBlock(item, ctx, item.diff, (full) => full?.diff) : null;
}

function isDiff(diff) {
  return Boolean(diff) && typeof diff === "object" && Array.isArray(diff.hunks);
}

/** One file's change; `pick` finds the same file's diff in the full item ("Open the whole change"). */
function fileBlock(item, ctx, diff, pick) {
  const body = h("div", { class: "diff-body" });
  fillHunks(body, diff);
  const stats = h(
    "span",
    { class: "diff-stats", attrs: { "aria-label": `${diff.added || 0} lines added, ${diff.removed || 0} removed` } },
    h("span", { class: "diff-added", text: `+${diff.added || 0}` }),
    " ",
    h("span", { class: "diff-removed", text: `−${diff.removed || 0}` }),
  );
  const summary = h("summary", {}, h("span", { class: "diff-path", text: diff.path || "(file)" }), " ", stats);
  const tools = h("div", { class: "diff-tools" }, wrapToggle());
  // `data-path` and each line's `data-line`: what a review comment names (review-comments.js).
  const details = h("details", { class: "diff", open: true, dataset: { path: diff.path || "" } }, summary, tools, body);
  if (diff.truncated || countLines(diff) > MAX_LINES_SHOWN) details.append(wholeChange(item, ctx, body, pick));
  return details;
}

function countLines(diff) {
  return diff.hunks.reduce((n, hunk) => n + (Array.isArray(hunk.lines) ? hunk.lines.length : 0), 0);
}

function fillHunks(body, diff, limit = MAX_LINES_SHOWN) {
  body.replaceChildren();
  let shown = 0;
  for (const hunk of diff.hunks) {
    if (shown >= limit) break;
    const head = `@@ −${hunk.old_start},${hunk.old_lines} +${hunk.new_start},${hunk.new_lines} @@`;
    const pre = h("pre", {
      class: "diff-hunk",
      tabIndex: 0,
      attrs: { "aria-label": `Lines ${hunk.new_start} to ${hunk.new_start + Math.max(0, hunk.new_lines - 1)}` },
    });
    pre.append(h("span", { class: "diff-line diff-head", text: head }));
    let oldNo = hunk.old_start;
    let newNo = hunk.new_start;
    for (const raw of hunk.lines || []) {
      if (shown >= limit) break;
      const line = String(raw);
      const mark = line[0];
      const cls = mark === "+" ? "add" : mark === "-" ? "del" : "ctx";
      const no = cls === "add" ? newNo++ : cls === "del" ? oldNo++ : (oldNo++, newNo++);
      pre.append(
        h(
          "span",
          { class: ["diff-line", `diff-${cls}`], dataset: { line: String(no), mark: cls } },
          h("span", { class: "diff-no", attrs: { "aria-hidden": "true" }, text: String(no) }),
          h("span", { class: "visually-hidden", text: cls === "add" ? "added: " : cls === "del" ? "removed: " : "" }),
          h("span", { class: "diff-text", text: line.slice(1) || " " }),
        ),
      );
      shown += 1;
    }
    body.append(pre);
  }
  const total = countLines(diff);
  if (total > shown)
    body.append(h("p", { class: "diff-more muted", text: `${(total - shown).toLocaleString()} more lines` }));
}

/** "Open the whole change": the full item's hunks, fetched once. */
function wholeChange(item, ctx, body, pick) {
  const btn = h("button", { type: "button", class: "more", text: "Open the whole change" });
  btn.addEventListener("click", async () => {
    btn.disabled = true;
    btn.textContent = "Loading…";
    try {
      const whole = pick(await ctx.fetchFull(item.id));
      if (!isDiff(whole)) throw new Error("no diff in the full item");
      fillHunks(body, whole, Infinity);
      btn.remove();
    } catch (err) {
      btn.disabled = false;
      btn.textContent = `Couldn't load (${err.message}) — retry`;
    }
  });
  return btn;
}
