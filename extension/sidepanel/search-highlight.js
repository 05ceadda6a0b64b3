// The words of a search, highlighted in the item a hit opened. The CSS Custom Highlight API
// paints ranges over the item's own text nodes, so the rendered item (Markdown, a tool card) is
// not rebuilt or wrapped: nothing is added to the DOM. A new search, or clearing it, removes the
// highlight; a row the virtual list rebuilds loses it, as a reader has moved on by then.

const NAME = "sidemirror-search";

/** What to look for in the item: each word as typed, and, for a word with punctuation the
 * server's tokenizer splits (`tech-spec`, `src/providers`), each of its parts too, since the
 * text may hold them apart. Lower case: the server matches without case. */
export function searchTerms(query) {
  const terms = new Set();
  for (const word of String(query).toLowerCase().split(/\s+/)) {
    if (!word) continue;
    terms.add(word);
    for (const part of word.split(/[^\p{L}\p{N}_]+/u)) if (part) terms.add(part);
  }
  // Longest first, so a word's own match wins over its parts where both would start.
  return [...terms].sort((a, b) => b.length - a.length);
}

/** [start, end) of each term in `text`, case-insensitive, not overlapping, in order. */
export function termSpans(text, terms) {
  const lower = text.toLowerCase();
  const spans = [];
  for (const term of terms) {
    for (let at = lower.indexOf(term); at !== -1; at = lower.indexOf(term, at + term.length)) {
      const end = at + term.length;
      if (!spans.some(([s, e]) => at < e && s < end)) spans.push([at, end]);
    }
  }
  return spans.sort((a, b) => a[0] - b[0]);
}

/** Highlight `query`'s terms inside `el`; the number of places highlighted (0 where the browser
 * has no highlight API). Replaces the previous search's highlight. */
export function highlightSearch(el, query) {
  const highlights = globalThis.CSS?.highlights;
  if (!highlights || typeof Highlight === "undefined") return 0;
  highlights.delete(NAME);
  const terms = searchTerms(query);
  if (!el || !terms.length) return 0;
  const ranges = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (const [start, end] of termSpans(/** @type {Text} */ (node).data, terms)) {
      const range = new Range();
      range.setStart(node, start);
      range.setEnd(node, end);
      ranges.push(range);
    }
  }
  if (ranges.length) highlights.set(NAME, new Highlight(...ranges));
  return ranges.length;
}

export function clearSearchHighlight() {
  globalThis.CSS?.highlights?.delete(NAME);
}
