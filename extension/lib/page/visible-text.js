// Invisible format characters made visible, for every string from the server that becomes text
// in a page (lib/page/dom.js applies it to `text`, `title` and string children).
//
// Why: bidi controls reorder what is shown without changing what runs. `rm -rf ~/\u202etxt.ssa`
// reads as `rm -rf ~/ass.txt`, and a zero-width space makes two paths that look equal differ. An
// agent's commands, paths and names are exactly what the user checks by eye, so each such
// character is shown as a marker (`⟨U+202E⟩`) instead of being obeyed or hidden.
//
// What: every format character (general category Cf: the bidi embeddings, overrides and isolates,
// LRM/RLM/ALM, zero-width space and joiners, word joiner, BOM, soft hyphen, tag characters…)
// plus the line and paragraph separators U+2028/U+2029. One exception keeps emoji and scripts
// that need them readable: a zero-width joiner or non-joiner between two non-ASCII characters
// (👩‍💻, Persian words) is left alone; next to ASCII it is shown, since there it only hides.

const INVISIBLE = /[\p{Cf}\u2028\u2029]/gu;
const JOINERS = new Set(["\u200c", "\u200d"]);
const NON_ASCII = /[^\u0000-\u007f]/; // eslint-disable-line no-control-regex -- the ASCII range starts at NUL

/** The marker shown in place of one invisible character. */
export function marker(ch) {
  return `⟨U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`;
}

/** `text` with every invisible format character replaced by its visible marker. */
export function visible(text) {
  const s = String(text ?? "");
  INVISIBLE.lastIndex = 0;
  if (!INVISIBLE.test(s)) return s; // the common case: nothing to do, no copy
  return s.replace(INVISIBLE, (ch, offset) => {
    if (JOINERS.has(ch) && NON_ASCII.test(s[offset - 1] ?? "") && NON_ASCII.test(s[offset + 1] ?? "")) return ch;
    return marker(ch);
  });
}
