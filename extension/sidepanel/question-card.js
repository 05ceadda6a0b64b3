// Question cards: Claude Code's AskUserQuestion, held open as a permission request (docs/api.md,
// `POST /api/decisions/{id}/answer`). Each question shows its options (one choice, or several
// when it is multiSelect) and a field for the user's own answer; "Send answers" is enabled once
// every question has one, and sends them only from that click. A question the server cannot
// answer from here (`answerable: false`) says "answer in the terminal". Every text from the
// server goes in as text nodes.

import { api, path } from "../lib/page/client.js";
import { h, setText } from "../lib/page/dom.js";

const OTHER = "\u0000other"; // the value of the "own answer" choice (no label can be this)

/** The answer to one question from its form: the chosen labels joined with ", " (multiSelect),
 * or the user's own words; "" when it has none yet. */
function answerOf(fieldset, question) {
  const own = fieldset.querySelector(".question-own");
  const picked = [...fieldset.querySelectorAll("input:checked")].map((i) => i.value);
  const labels = picked.filter((v) => v !== OTHER);
  const words = picked.includes(OTHER) || !question.options?.length ? own.value.trim() : "";
  return [...labels, ...(words ? [words] : [])].join(", ");
}

function questionField(question, index, id, onChange) {
  const multi = question.multiSelect === true;
  const name = `q-${id}-${index}`;
  const own = h("input", {
    type: "text",
    class: "question-own",
    placeholder: "Your own answer",
    attrs: { "aria-label": `Your own answer to: ${question.question}` },
  });
  const choice = (value, label, description) =>
    h(
      "label",
      { class: "question-option" },
      h("input", { type: multi ? "checkbox" : "radio", name, value, attrs: { "aria-label": label } }),
      h("span", { class: "question-label", text: label }),
      description ? h("span", { class: "question-description muted", text: description }) : null,
    );
  const options = (Array.isArray(question.options) ? question.options : []).map((o) =>
    choice(String(o.label), String(o.label), o.description ? String(o.description) : ""),
  );
  const fieldset = h(
    "fieldset",
    { class: "question", dataset: { index: String(index) } },
    h("legend", { class: "question-text", text: String(question.question) }),
    question.header ? h("span", { class: "chip question-header", text: String(question.header) }) : null,
    multi ? h("span", { class: "question-hint muted", text: "Choose any" }) : null,
    ...options,
    options.length ? choice(OTHER, "Other:", "") : null,
    own,
  );
  // Typing an own answer picks "Other" (so the typed words are what is sent).
  own.addEventListener("input", () => {
    const other = fieldset.querySelector(`input[value="${OTHER}"]`);
    if (other && own.value.trim()) other.checked = true;
    onChange();
  });
  fieldset.addEventListener("change", onChange);
  return fieldset;
}

/** A card for a held AskUserQuestion; `refusal` maps a refused answer to its words. */
export function questionCard(request, whereEl, refusal) {
  const questions = Array.isArray(request.tool_input?.questions) ? request.tool_input.questions : [];
  const status = h("p", { class: "decision-status", attrs: { role: "status", "aria-live": "polite" } });
  const head = h("header", { class: "decision-head", text: "Claude asks you" });
  const card = h(
    "article",
    {
      class: ["decision-card", "question-card"],
      dataset: { id: request.id },
      attrs: { "aria-label": "Question from Claude" },
    },
    head,
    whereEl,
  );
  if (request.answerable === false || !questions.length) {
    card.dataset.terminal = "1";
    card.append(
      ...questions.map((q) => h("p", { class: "question-text", text: String(q.question ?? "") })),
      h("p", { class: "decision-status", text: "This question cannot be answered from here: answer in the terminal." }),
    );
    return { card, showWhenRendered: () => {} };
  }
  const send = h("button", {
    type: "button",
    class: "decision-allow question-send",
    text: "Send answers",
    disabled: true,
  });
  const answers = () => questions.map((q, i) => answerOf(fields[i], q));
  const fields = questions.map((q, i) =>
    questionField(q, i, request.id, () => {
      send.disabled = card.dataset.answered !== undefined || answers().some((a) => !a);
    }),
  );
  card.append(...fields, h("div", { class: "decision-actions" }, send), status);
  send.addEventListener("click", async () => {
    send.disabled = true;
    const given = answers();
    const body = { answers: Object.fromEntries(questions.map((q, i) => [String(q.question), given[i]])) };
    try {
      await api(`${path.decision(request.id)}/answer`, { method: "POST", body });
      card.dataset.answered = "answered";
      setText(status, "Answered");
      for (const input of card.querySelectorAll("input")) input.disabled = true;
    } catch (err) {
      const { text, settled } = refusal(err);
      if (settled) {
        card.dataset.answered = "elsewhere";
        card.dataset.outcome = String(err.detail?.outcome || "");
      } else send.disabled = false;
      setText(status, text);
    }
  });
  return { card, showWhenRendered: () => {} };
}
