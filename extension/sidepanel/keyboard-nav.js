// Keys of the session timeline (WAI-ARIA feed pattern, plus reviewer keys):
//   j / ↓ / PageDown, k / ↑ / PageUp  next / previous item (sub-agent items included)
//   g / Home, G / End                  first / last item loaded
//   Enter                              open or close the focused item (its disclosure, or "Show more")
//   e / E                              next / previous error
//   /                                  search this session
// Items are focusable articles; only those near the viewport exist (virtual-list.js), so moving
// goes by row index through the timeline and brings the next row on screen before focusing it.

const TYPING = /^(INPUT|TEXTAREA|SELECT)$/;

/**
 * @param {HTMLElement} root  the session tab (keys are read while focus is inside it)
 * @param {import("./timeline.js").Timeline} timeline
 * @param {object} opts
 * @param {() => void} [opts.onSearch]  `/` pressed
 * @param {(dir: 1|-1) => void} [opts.onError]  e / E pressed
 */
export function installKeys(root, timeline, { onSearch, onError } = {}) {
  root.addEventListener("keydown", (ev) => {
    const target = /** @type {HTMLElement} */ (ev.target);
    if (ev.defaultPrevented || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (TYPING.test(target.tagName) || target.isContentEditable) return;
    if (ev.key === "/" && onSearch) {
      ev.preventDefault();
      onSearch();
      return;
    }
    const article = target.closest?.("article");
    const onItem = Boolean(article) && target === article && timeline.list.contains(article);
    const inFeed = timeline.scroller.contains(target);
    if ((ev.key === "e" || ev.key === "E") && onError && (onItem || inFeed)) {
      ev.preventDefault();
      onError(ev.key === "e" ? 1 : -1);
      return;
    }
    if (!onItem) return;
    let handled = true;
    if (ev.key === "ArrowDown" || ev.key === "j" || ev.key === "PageDown") step(timeline, article, 1);
    else if (ev.key === "ArrowUp" || ev.key === "k" || ev.key === "PageUp") step(timeline, article, -1);
    else if (ev.key === "Home" || ev.key === "g") focusIndex(timeline, 0);
    else if (ev.key === "End" || ev.key === "G") focusIndex(timeline, timeline.view.length - 1);
    else if (ev.key === "Enter") handled = toggle(article);
    else handled = false;
    if (handled) ev.preventDefault();
  });
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
