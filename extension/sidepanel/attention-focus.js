// A notification the user clicked asks, through chrome.storage.session, for its session to be
// shown (lib/worker/attention-alerts.js writes the request): the panel opens it in the Session tab
// and, when the notification named a permission request, brings that request's card into view.

import { KEYS } from "../lib/shared/config.js";

const FOCUS_KEY = KEYS.attentionFocus;

export function followFocusRequests(ctx) {
  const apply = (req) => {
    if (!req?.workspace || !req.session || Date.now() - (req.at || 0) > 60000) return;
    chrome.storage.session.remove(FOCUS_KEY);
    ctx.openSession(req.workspace, req.session);
    if (req.request) showCard(req.request);
  };
  chrome.storage.session.get(FOCUS_KEY).then((got) => apply(got[FOCUS_KEY]));
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === "session" && changes[FOCUS_KEY]) apply(changes[FOCUS_KEY].newValue);
  });
}

/** Scroll to the card of `id` once the Session tab lists it (its list is fetched on opening). */
function showCard(id, tries = 50) {
  const cards = /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll(".session-tab .decision-card"));
  const card = [...cards].find((c) => c.dataset.id === id);
  if (card) {
    card.scrollIntoView({ block: "center" });
    card.dataset.focused = "1";
    card.tabIndex = -1;
    card.focus({ preventScroll: true });
  } else if (tries > 0) setTimeout(() => showCard(id, tries - 1), 100);
}
