// A session's state as a chip, drawn the same wherever it shows (the Sessions view's rows, the
// Session tab's toolbar): its colour says the state, and a state the server inferred from files,
// processes and time (`exact: false`) is outlined dashed, its tooltip saying where it came from.

/** The Sessions view's words for a state. */
export function stateLabel(s) {
  if (s.state === "waiting") return s.reason === "input" ? "waiting for your answer" : "waiting for permission";
  return s.state;
}

/** Where a state came from (the server's `exact`), as the chip's tooltip says it. */
export function stateSource(s) {
  return s.exact
    ? "Reported by the agent (its hooks or protocol)"
    : "Inferred from the session's file, its agent process and the time since it last wrote";
}

/**
 * Paint `el` as the chip of state `s` ({state, reason, exact}) reading `label`; `base`: the
 * classes the chip keeps whatever the state. Returns `el`.
 * @param {HTMLElement} el @param {{state: string, reason?: string|null, exact?: boolean}} s
 * @param {string} label @param {string} [base]
 */
export function paintStateChip(el, s, label, base = "chip") {
  const exact = Boolean(s.exact);
  el.className = `${base} st-${s.state.replace(/[^a-z]/g, "")}${exact ? "" : " inferred"}`;
  if (el.textContent !== label) el.textContent = label;
  el.title = stateSource(s);
  el.dataset.exact = String(exact);
  return el;
}
