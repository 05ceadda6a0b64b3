// Review comments on any diff the panel shows (diff-view.js: Edit, Write, MultiEdit and
// apply_patch cards, which the Changes view jumps to). Click a line's number to select it,
// shift-click another in the same hunk for a range (or press `c` on a focused hunk for its
// changed lines), write the comment, "Add to review". The
// comments gather in a ReviewDraft that the note composer sends as one note (docs/api.md,
// `POST /api/notes` with `review`): each with its file, its lines and the quoted lines.

import { h, setText } from "../lib/page/dom.js";

const MARK = { add: "+", del: "-", ctx: " " };

export class ReviewDraft {
  constructor() {
    this.comments = [];
    this.onChange = () => {};
  }

  add(comment) {
    this.comments.push(comment);
    this.onChange();
  }

  clear() {
    if (!this.comments.length) return;
    this.comments = [];
    this.onChange();
  }
}

/** The line as the diff shows it: its mark and its text (the last text node of the row). */
function quoted(line) {
  return `${MARK[line.dataset.mark] || " "}${line.lastChild?.textContent ?? ""}`;
}

/** Listen on `root` for clicks on diff line numbers, and for `c` on a focused hunk (the keyboard
 * way: a comment on the hunk's changed lines); comments go to `draft`. */
export function installReviewComments(root, draft) {
  let anchor = null; // the line a shift-click extends from
  let form = null;
  const close = () => {
    form?.remove();
    form = null;
    for (const el of root.querySelectorAll(".review-selected")) el.classList.remove("review-selected");
  };
  const open = (hunk, picked) => {
    close();
    for (const el of picked) el.classList.add("review-selected");
    form = commentForm(hunk, picked, draft, close);
    hunk.after(form);
    form.querySelector("textarea")?.focus();
  };
  root.addEventListener("click", (event) => {
    const target = /** @type {Element} */ (event.target);
    const line = target.closest?.(".diff-no")?.closest(".diff-line[data-line]");
    const hunk = line?.closest(".diff-hunk");
    if (!line || !hunk) return;
    const lines = [...hunk.querySelectorAll(".diff-line[data-line]")];
    const extend = event.shiftKey && anchor && lines.includes(anchor);
    if (!extend) anchor = line;
    const from = lines.indexOf(extend ? anchor : line);
    const to = lines.indexOf(line);
    open(hunk, lines.slice(Math.min(from, to), Math.max(from, to) + 1));
  });
  root.addEventListener("keydown", (event) => {
    const hunk = /** @type {Element} */ (event.target);
    if (event.key !== "c" || event.ctrlKey || event.metaKey || event.altKey) return;
    if (!hunk.matches?.(".diff-hunk")) return;
    const lines = /** @type {HTMLElement[]} */ ([...hunk.querySelectorAll(".diff-line[data-line]")]);
    const changed = lines.filter((l) => l.dataset.mark !== "ctx");
    if (!lines.length) return;
    event.preventDefault();
    open(hunk, changed.length ? changed : lines);
  });
}

function commentForm(hunk, picked, draft, close) {
  const path = hunk.closest("[data-path]")?.getAttribute("data-path") || "(file)";
  // Lines are named as the file has them now; a removed line's number is the old file's, used
  // only when every picked line was removed.
  const kept = picked.filter((l) => l.dataset.mark !== "del");
  const named = kept.length ? kept : picked;
  const first = Number(named[0].dataset.line);
  const last = Number(named[named.length - 1].dataset.line);
  const where = first === last ? `${path}:${first}` : `${path}:${first}-${last}`;
  const text = h("textarea", {
    rows: 2,
    placeholder: "What should the agent change here?",
    attrs: { "aria-label": `Comment on ${where}` },
  });
  const add = h("button", { type: "button", class: "review-add", text: "Add to review", disabled: true });
  const cancel = h("button", { type: "button", class: "link-button", text: "Cancel" });
  const label = h("span", { class: "muted" });
  setText(label, `Comment on ${where}`);
  text.addEventListener("input", () => (add.disabled = !text.value.trim()));
  add.addEventListener("click", () => {
    draft.add({
      path,
      line: first,
      end_line: Math.max(first, last),
      quote: picked.map(quoted),
      comment: text.value.trim(),
    });
    close();
  });
  cancel.addEventListener("click", close);
  return h("div", { class: "review-form" }, label, text, h("div", { class: "review-actions" }, add, cancel));
}
