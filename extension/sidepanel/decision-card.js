// Decision cards: a permission request that Claude Code holds open (docs/api.md, `GET
// /api/decisions`), with the tool, its full input (redacted by the server) and Allow / Deny.
// A decision is sent only from a click (`POST /api/decisions/{id}`, which also needs this
// extension's Origin); a request answered elsewhere (the terminal, the timeout) says so.

import { ApiError, api, path } from "../lib/page/client.js";
import { h, setText } from "../lib/page/dom.js";
import { attentionFeed } from "../lib/page/attention-feed.js";

const PREVIEW_CHARS = 4000;

/** The input as the user should judge it: the command, the file change, the URL, else JSON. */
function inputView(toolName, input) {
  const rows = [];
  const obj = input && typeof input === "object" ? input : null;
  if (obj?.command) rows.push(h("pre", { class: "decision-command", text: String(obj.command) }));
  if (obj?.file_path || obj?.notebook_path) rows.push(h("div", { class: "decision-path", text: String(obj.file_path || obj.notebook_path) }));
  if (obj && ("old_string" in obj || "new_string" in obj)) {
    const lines = [
      ...String(obj.old_string ?? "").split("\n").map((l) => ["del", `- ${l}`]),
      ...String(obj.new_string ?? "").split("\n").map((l) => ["add", `+ ${l}`]),
    ];
    rows.push(h("pre", { class: "decision-diff" }, lines.map(([cls, text]) => h("span", { class: `diff-${cls}`, text: `${text}\n` }))));
  } else if (obj && typeof obj.content === "string") {
    rows.push(h("pre", { class: "decision-diff" }, h("span", { class: "diff-add", text: obj.content.slice(0, PREVIEW_CHARS) })));
  }
  if (obj?.url) rows.push(h("div", { class: "decision-url", text: String(obj.url) }));
  if (obj?.description) rows.push(h("div", { class: "decision-description", text: String(obj.description) }));
  if (!rows.length) rows.push(h("pre", { class: "decision-json", text: JSON.stringify(input, null, 2).slice(0, PREVIEW_CHARS) }));
  return rows;
}

function decisionCard(request) {
  const status = h("p", { class: "decision-status", attrs: { role: "status", "aria-live": "polite" } });
  const message = h("textarea", {
    class: "decision-message",
    rows: 2,
    placeholder: "Message to Claude (optional, sent with Deny)",
    attrs: { "aria-label": "Message to Claude, sent with Deny" },
  });
  const allow = h("button", { type: "button", class: "decision-allow", text: "Allow" });
  const deny = h("button", { type: "button", class: "decision-deny", text: "Deny" });
  const card = h(
    "article",
    { class: "decision-card", dataset: { id: request.id }, attrs: { "aria-label": `Permission request: ${request.tool_name}` } },
    h("header", { class: "decision-head", text: `Claude wants to use ${request.tool_name}` }),
    inputView(request.tool_name, request.tool_input),
    message,
    h("div", { class: "decision-actions" }, allow, deny),
    status,
  );
  const decide = async (behavior) => {
    allow.disabled = deny.disabled = true;
    try {
      await api(path.decision(request.id), { method: "POST", body: { behavior, message: behavior === "deny" ? message.value : "" } });
      card.dataset.answered = behavior;
      setText(status, behavior === "allow" ? "Allowed" : "Denied");
    } catch (err) {
      const gone = err instanceof ApiError && (err.status === 404 || err.status === 409);
      card.dataset.answered = gone ? "elsewhere" : "";
      setText(status, gone ? "Already answered (in the terminal, or it timed out)" : `Could not send: ${err.message}`);
      allow.disabled = deny.disabled = gone;
    }
  };
  allow.addEventListener("click", () => decide("allow"));
  deny.addEventListener("click", () => decide("deny"));
  return card;
}

// A session can wait for a permission that no one can answer from here: an ACP agent's request
// goes to the editor (acp-tap only mirrors it; a second answer would race the editor's), a
// `claude -p` run or a session without hooks asks in its terminal, and a request whose wait
// timed out is asked in the terminal.
const ELSEWHERE =
  "Waiting for your permission in the editor or terminal that runs the agent: answer it there. " +
  "Sidemirror mirrors this request but cannot answer it (an ACP editor holds it, and an answer " +
  "from here would race the editor's).";

/** The pending requests that `filter(request)` keeps, kept current from the attention feed.
 * `shown()` → {workspace, session} | null names the session whose read-only wait is explained. */
export class DecisionList {
  constructor(filter = () => true, shown = () => null) {
    this.filter = filter;
    this.shown = shown;
    this.cards = new Map(); // id → card
    this.sessions = [];
    this.notice = h("article", { class: "decision-notice", hidden: true, attrs: { role: "note" } },
      h("header", { class: "decision-head", text: "Waiting for permission" }),
      h("p", { class: "decision-status", text: ELSEWHERE }));
    this.el = h("section", { class: "decision-list", attrs: { "aria-label": "Permission requests" } }, this.notice);
    this.loading = null;
    attentionFeed().subscribe((sessions) => {
      this.sessions = sessions;
      this.refresh();
    });
  }

  /** Fetch the pending requests again (single-flight). */
  refresh() {
    this.loading ||= this._load().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  async _load() {
    let pending;
    try {
      pending = (await api(path.decisions())).decisions || [];
    } catch {
      return; // not connected, or an older server: nothing to show
    }
    const wanted = pending.filter((r) => this.filter(r));
    const ids = new Set(wanted.map((r) => r.id));
    for (const [id, card] of this.cards) {
      if (ids.has(id)) continue;
      // Gone from the server's list: say so now, remove it at the next change.
      if (card.dataset.gone) {
        this.cards.delete(id);
        card.remove();
        continue;
      }
      card.dataset.gone = "1";
      if (!card.dataset.answered) {
        card.dataset.answered = "elsewhere";
        setText(card.querySelector(".decision-status"), "No longer waiting here: answered in the terminal, or it is asked there now");
        for (const b of card.querySelectorAll("button")) b.disabled = true;
      }
    }
    for (const request of wanted) {
      if (this.cards.has(request.id)) continue;
      const card = decisionCard(request);
      this.cards.set(request.id, card);
      this.el.append(card);
    }
    const shown = this.shown();
    const row = shown && this.sessions.find((s) => s.workspace === shown.workspace && s.session === shown.session);
    this.notice.hidden = !(row?.state === "waiting" && row.reason === "permission" && !wanted.length);
  }
}
