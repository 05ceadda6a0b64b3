// A notification the user clicked asks, through chrome.storage.session, for its session to be
// shown (lib/worker/attention-alerts.js writes the request): the panel opens it in the Session tab.

import { KEYS } from "../lib/shared/config.js";

const FOCUS_KEY = KEYS.attentionFocus;

export function followFocusRequests(ctx) {
  const apply = (req) => {
    if (!req?.workspace || !req.session || Date.now() - (req.at || 0) > 60000) return;
    chrome.storage.session.remove(FOCUS_KEY);
    ctx.openSession(req.workspace, req.session);
  };
  chrome.storage.session.get(FOCUS_KEY).then((got) => apply(got[FOCUS_KEY]));
  chrome.storage.onChanged.addListener((changes, area) => {
    if (area === "session" && changes[FOCUS_KEY]) apply(changes[FOCUS_KEY].newValue);
  });
}
