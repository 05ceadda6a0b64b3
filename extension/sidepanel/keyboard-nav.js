// Keys of the session timeline (WAI-ARIA feed pattern, plus reviewer keys), listed in the `?`
// overlay (keys-help.js) from KEYS below:
//   j / ↓ / PageDown, k / ↑ / PageUp  next / previous item (sub-agent items included)
//   g / Home, G / End                  first item of the session (loaded if need be) / last item
//   Enter                              open or close the focused item (its disclosure, or "Show more")
//   e / E                              next / previous error
//   /                                  search this session
//   ?                                  the list of keys
// j, k, g, G, e and E work wherever focus is in the timeline: on an item, or on a control inside
// one (a Thinking row's summary once clicked, a "Show more" button). The arrows, Page keys and
// Enter act only with the item itself focused: inside it they keep their own meaning (a
// summary's Enter opens it, an output block scrolls).
// Items are focusable articles; only those near the viewport exist (virtual-list.js), so moving
// goes by row index through the timeline and brings the next row on screen before focusing it.

const TYPING = /^(INPUT|TEXTAREA|SELECT)$/;

/** What the `?` overlay lists: [keys, what they do]. */
export const KEYS = [
  ["j  ↓", "Next item"],
  ["k  ↑", "Previous item"],
  ["g  Home", "Start of the session"],
  ["G  End", "Latest item"],
  ["Enter", "Open or close the item"],
  ["e  E", "Next / previous error"],
  ["/", "Search this session"],
  ["?", "This list of keys"],
  ["Esc", "Close this list"],
];

/**
 * @param {HTMLElement} root  the session tab (keys are read while focus is inside it)
 * @param {import("./timeline.js").Timeline} timeline
 * @param {object} opts
 * @param {() => void} [opts.onSearch]  `/` pressed
 * @param {(dir: 1|-1) => void} [opts.onError]  e / E pressed
 * @param {() => Promise<unknown>} [opts.onStart]  g / Home: show the session's first item
 * @param {() => Promise<unknown>} [opts.onLatest]  G / End while the latest items are not loaded
 * @param {() => void} [opts.onHelp]  `?` pressed
 */
export function installKeys(root, timeline, { onSearch, onError, onStart, onLatest, onHelp } = {}) {
  root.addEventListener("keydown", (ev) => {
    const target = /** @type {HTMLElement} */ (ev.target);
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (TYPING.test(target.tagName) || target.isContentEditable) return;
    if (ev.key === "/" && onSearch) {
      ev.preventDefault();
      onSearch();
      return;
    }
    if (ev.key === "?" && onHelp) {
      ev.preventDefault();
      onHelp();
      return;
    }
    if (!timeline.scroller.contains(target)) return;
    const found = target.closest?.("article");
    const article = found && timeline.list.contains(found) ? /** @type {HTMLElement} */ (found) : null;
    const onItem = Boolean(article) && target === article;
    const key = ev.key;
    let handled = true;
    if ((key === "e" || key === "E") && onError) onError(key === "e" ? 1 : -1);
    else if (key === "j" || (onItem && (key === "ArrowDown" || key === "PageDown"))) step(timeline, article, 1);
    else if (key === "k" || (onItem && (key === "ArrowUp" || key === "PageUp"))) step(timeline, article, -1);
    else if (key === "g" || (onItem && key === "Home")) toStart(timeline, onStart);
    else if (key === "G" || (onItem && key === "End")) toLatest(timeline, onLatest);
    else if (key === "Enter" && onItem) handled = toggle(article);
    else handled = false;
    if (handled) ev.preventDefault();
  });
}

async function toStart(timeline, onStart) {
  if (onStart) await onStart();
  focusIndex(timeline, 0);
}

async function toLatest(timeline, onLatest) {
  if (timeline.later && onLatest) await onLatest();
  focusIndex(timeline, timeline.view.length - 1);
}

/** Focus the row at view index `i` (brought on screen first). */
export function focusIndex(timeline, i) {
  if (i < 0 || i >= timeline.view.length) return false;
  const el = timeline.vlist.scrollToIndex(i);
  el?.focus({ preventScroll: true });
  return Boolean(el);
}

function step(timeline, article, dir) {
  const { vlist } = timeline;
  if (!article) {
    // Focus in the timeline but on no item (its "Load earlier" link): the first item on screen.
    const row = vlist.firstOnScreen();
    if (row) focusIndex(timeline, vlist.indexOf(row));
    return;
  }
  const k = vlist.mounted.findIndex((row) => row.el?.contains(article));
  if (k < 0) return;
  const top = vlist.mounted[k].el;
  // Within a Task card: its sub-agent items first, in reading order.
  const inside = [top, ...top.querySelectorAll("article")].filter((a) => a === top || a.offsetParent !== null);
  const j = inside.indexOf(article) + dir;
  if (j >= 0 && j < inside.length) {
    inside[j].focus();
    return;
  }
  const next = vlist.mountedFrom + k + dir;
  if (!focusIndex(timeline, next) || dir > 0) return;
  // Going up into a Task card lands on its last visible item.
  const prev = vlist.rows[next]?.el;
  const last = prev ? [...prev.querySelectorAll("article")].filter((a) => a.offsetParent !== null).at(-1) : null;
  if (last) {
    last.scrollIntoView({ block: "nearest" });
    last.focus();
  }
}

/** Enter on an item: open or close its disclosure, else its "Show more". */
function toggle(article) {
  const details = article.querySelector(":scope > details, :scope details.diff, :scope details.thinking");
  if (details) {
    details.open = !details.open;
    return true;
  }
  const more = article.querySelector(
    ":scope > button.more, :scope .tool-result button.more, :scope > button[aria-expanded]",
  );
  if (more) {
    more.click();
    return true;
  }
  return false;
}
