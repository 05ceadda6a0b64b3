// Decision cards: a permission request that Claude Code or Codex holds open (docs/api.md, `GET
// /api/decisions`), with the tool, its whole input as the server's `card` gives it
// (decision-input.js) and Allow / Deny, and "Always allow" with each rule the agent itself
// suggested, its sentence shown on the button before it is applied. Allow stays disabled until the whole input is in the
// page, and a card whose input could not be shown whole offers only Deny. A decision is sent
// only from a click (`POST /api/decisions/{id}`, which also needs this extension's Origin); a
// request settled otherwise (the terminal, the timeout) says how, from the server's `outcome`.
// Each card names its workspace and session, as the pickers do.

import { ApiError, api, path } from "../lib/page/client.js";
import { h, setText } from "../lib/page/dom.js";
import { attentionFeed, sessionKey } from "../lib/page/attention-feed.js";
import { BatchCards } from "./decision-batch.js";
import { decisionInput } from "./decision-input.js";
import { questionCard } from "./question-card.js";
import { sessionLabel, workspaceLabel } from "./session-pickers.js";

/** "Demo · Fix the build": the request's workspace and session, named as the pickers name them
 * (the live session row gives both; until it arrives, the short ids). Two sessions can wait at
 * once, and the Sessions view lists every one's cards. */
function whereText(request, row) {
  const ws = row ? workspaceLabel({ directory: row.directory, name: row.workspace_name }) : request.workspace;
  return `${ws || request.workspace} · ${sessionLabel({ title: row?.title, id: request.session })}`;
}

// The server's `outcome` of a request settled before this card's answer reached it.
const SETTLED = {
  allow: "Already allowed from the side panel",
  deny: "Already denied from the side panel",
  timeout: "Not allowed: no decision came in time, so it is asked in the terminal",
  terminal: "Not allowed from here: it was answered in the terminal",
  gone: "Not allowed: the agent stopped waiting for this request",
};

/** The agent's name as the user knows it, from the request's `agent`. */
export function agentName(request) {
  return request.agent === "codex" ? "Codex" : "Claude";
}

function refusal(err) {
  if (!(err instanceof ApiError)) return { text: `Could not send: ${err.message}`, settled: false };
  if (err.code === "input_not_shown")
    return { text: "Not allowed: the input could not be shown whole", settled: false };
  if (err.status === 409)
    return {
      text: SETTLED[err.detail?.outcome] || "Already answered (in the terminal, or it timed out)",
      settled: true,
    };
  if (err.status === 404) return { text: "No longer waiting: this request is unknown to the server", settled: true };
  return { text: `Could not send: ${err.message}`, settled: false };
}

/** "Always allow" buttons, one per rule the agent suggested (`request.rules`), each saying in
 * full what it makes the agent remember; none when the input cannot be shown whole. */
function ruleButtons(request, whole) {
  if (!whole) return [];
  return (request.rules || []).map((rule) =>
    h("button", {
      type: "button",
      class: "decision-rule",
      text: String(rule.text),
      disabled: true,
      dataset: { index: String(rule.index) },
      attrs: { "aria-label": `Allow, and: ${rule.text}` },
    }),
  );
}

function decisionCard(request, row) {
  const agent = agentName(request);
  const where = h("p", { class: "decision-where", text: whereText(request, row) });
  const status = h("p", { class: "decision-status", attrs: { role: "status", "aria-live": "polite" } });
  const input = decisionInput(request, (err) => setText(status, `Could not reveal: ${err.message}`));
  const message = h("textarea", {
    class: "decision-message",
    rows: 2,
    placeholder: `Message to ${agent} (optional, sent with Deny)`,
    attrs: { "aria-label": `Message to ${agent}, sent with Deny` },
  });
  // Disabled until the whole input is in the page (`showWhenRendered`); absent when it cannot be.
  const allow = input.whole
    ? h("button", { type: "button", class: "decision-allow", text: "Allow", disabled: true })
    : null;
  const deny = h("button", { type: "button", class: "decision-deny", text: "Deny" });
  const rules = ruleButtons(request, input.whole);
  const ruleBox = rules.length
    ? h(
        "div",
        { class: "decision-rules" },
        h("p", { class: "decision-rules-head", text: "Allow and remember:" }),
        ...rules,
      )
    : null;
  const card = h(
    "article",
    {
      class: "decision-card",
      dataset: { id: request.id },
      attrs: { "aria-label": `Permission request: ${request.tool_name}` },
    },
    h("header", { class: "decision-head", text: `${agent} wants to use ${request.tool_name}` }),
    where,
    input.el,
    message,
    h("div", { class: "decision-actions" }, allow, deny),
    ruleBox,
    status,
  );
  const buttons = () => [allow, deny, ...rules].filter(Boolean);
  const decide = async (behavior, rule = null) => {
    for (const b of buttons()) b.disabled = true;
    try {
      await api(path.decision(request.id), {
        method: "POST",
        body: { behavior, message: behavior === "deny" ? message.value : "", ...(rule ? { rule: rule.index } : {}) },
      });
      card.dataset.answered = behavior;
      setText(status, behavior === "deny" ? "Denied" : rule ? `Allowed. ${agent} remembers: ${rule.text}` : "Allowed");
    } catch (err) {
      const { text, settled } = refusal(err);
      card.dataset.answered = settled ? "elsewhere" : "";
      if (settled) card.dataset.outcome = String(err.detail?.outcome || "");
      setText(status, text);
      if (!settled) {
        deny.disabled = false;
        for (const b of [allow, ...rules]) if (b) b.disabled = !input.rendered();
      }
    }
  };
  allow?.addEventListener("click", () => decide("allow"));
  rules.forEach((b, i) => b.addEventListener("click", () => decide("allow", request.rules[i])));
  deny.addEventListener("click", () => decide("deny"));
  // Called once the card is in the list: Allow waits for a frame with the whole input laid out.
  const showWhenRendered = async () => {
    if (!allow) return;
    await input.ready; // what a browser tool will type, revealed on this card first
    requestAnimationFrame(() => {
      if (card.dataset.answered === undefined && input.rendered()) {
        for (const b of [allow, ...rules]) b.disabled = false;
        card.dataset.rendered = "1";
      }
    });
  };
  return { card, showWhenRendered, where };
}

/** Claude's AskUserQuestion: a question card (question-card.js) instead of Allow / Deny. */
function askCard(request, row) {
  const where = h("p", { class: "decision-where", text: whereText(request, row) });
  return { ...questionCard(request, where, refusal), where };
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
  /**
   * @param {(request: any) => boolean} [filter]
   * @param {() => {workspace: string, session: string} | null} [shown]
   */
  constructor(filter = () => true, shown = () => null) {
    this.filter = filter;
    this.shown = shown;
    this.cards = new Map(); // id → card
    this.wheres = new Map(); // id → {request, el}: the where line, named again as rows arrive
    this.sessions = [];
    this.notice = h(
      "article",
      { class: "decision-notice", hidden: true, attrs: { role: "note" } },
      h("header", { class: "decision-head", text: "Waiting for permission" }),
      h("p", { class: "decision-status", text: ELSEWHERE }),
    );
    this.batches = new BatchCards();
    this.el = h(
      "section",
      { class: "decision-list", attrs: { "aria-label": "Permission requests" } },
      this.notice,
      this.batches.el,
    );
    /** @type {(() => void) | null} cards came or went (a view that places them elsewhere) */
    this.onChange = null;
    this.loading = null;
    this.again = false; // a change came while a fetch was on the way: fetch once more
    this.lastKey = null; // the pending ids of the last fetch
    this.waiting = new Set(); // the sessions last seen waiting (keys)
    attentionFeed().subscribe((sessions, change) => {
      this.sessions = sessions;
      const was = this.waiting;
      this.waiting = new Set(sessions.filter((s) => s.state === "waiting").map(sessionKey));
      // A request held open keeps its session waiting: only a change into or out of waiting can
      // add or settle one. A busy fleet's other state changes (many a second) each cost a fetch
      // here before.
      if (!change || change.state === "waiting" || was.has(sessionKey(change))) this.refresh();
    });
  }

  /** The cards of one session's requests (the Sessions view puts them in its row). */
  cardsOf(workspace, session) {
    const mine = [];
    for (const [id, { request }] of this.wheres)
      if (request.workspace === workspace && request.session === session) mine.push(this.cards.get(id));
    return mine.filter(Boolean);
  }

  /** Fetch the pending requests again. One fetch at a time; a change that arrives while one is
   * on the way asks for one more after it, since that fetch may have read the list before the
   * change (a request opened just after it would otherwise wait unseen). */
  refresh() {
    if (this.loading) {
      this.again = true;
      return this.loading;
    }
    this.again = false;
    this.loading = this._load().finally(() => {
      this.loading = null;
      if (this.again) this.refresh();
    });
    return this.loading;
  }

  async _load() {
    let pending;
    let settled;
    try {
      const listing = await api(path.decisions());
      pending = listing.decisions || [];
      settled = new Map((listing.settled || []).map((s) => [s.id, s.outcome]));
    } catch {
      return; // not connected, or an older server: nothing to show
    }
    const wanted = pending.filter((r) => this.filter(r));
    const ids = new Set(wanted.map((r) => r.id));
    // The list changed since the last fetch (not merely fetched again): cards marked gone go now.
    const key = [...ids].sort().join(" ");
    const changed = key !== this.lastKey;
    this.lastKey = key;
    for (const [id, card] of this.cards) {
      if (ids.has(id)) continue;
      // Gone from the server's list: say so now, remove it at the next change.
      if (card.dataset.gone) {
        if (!changed) continue;
        this.cards.delete(id);
        this.wheres.delete(id);
        card.remove();
        continue;
      }
      card.dataset.gone = "1";
      if (!card.dataset.answered) {
        card.dataset.answered = "elsewhere";
        const outcome = settled.get(id);
        if (outcome) card.dataset.outcome = outcome;
        setText(
          card.querySelector(".decision-status"),
          SETTLED[outcome] || "No longer waiting here: answered in the terminal, or it is asked there now",
        );
        for (const b of card.querySelectorAll("button")) b.disabled = true;
      }
    }
    const rowOf = (r) => this.sessions.find((s) => s.workspace === r.workspace && s.session === r.session);
    for (const { request, el } of this.wheres.values()) setText(el, whereText(request, rowOf(request)));
    for (const request of wanted) {
      if (this.cards.has(request.id)) continue;
      const make = request.tool_name === "AskUserQuestion" ? askCard : decisionCard;
      const { card, showWhenRendered, where } = make(request, rowOf(request));
      this.cards.set(request.id, card);
      this.wheres.set(request.id, { request, el: where });
      this.el.append(card);
      showWhenRendered();
    }
    this.batches.show(wanted, this.cards, (r) => whereText(r, rowOf(r)));
    if (changed) this.onChange?.();
    const shown = this.shown();
    const row = shown && this.sessions.find((s) => s.workspace === shown.workspace && s.session === shown.session);
    this.notice.hidden = !(row?.state === "waiting" && row.reason === "permission" && !wanted.length);
  }
}
