// The one wording of "sessions wait for you": the toolbar badge's tooltip (worker) and the
// popup's line say the same count the same way.

/** @param {number} n sessions waiting (for a permission or an answer) */
export function waitingText(n) {
  return `${n} session${n === 1 ? "" : "s"} waiting for you`;
}
