// Sidemirror service worker: finds the companion server, pairs, watches its health and shows it
// on the toolbar badge; turns the page overlay on and off per site and answers its look-ups.
// Chrome may stop this worker at any moment, so every listener is registered at the top level and
// all state lives in chrome.storage (keys in lib/shared/config.js):
//   local:   port (manual), paired {server_id, port}, overlaySites
//   session: token {value, panel, source, instance, server_id}, status (read by the popup and side panel)
// There is exactly one retry loop: the "health" alarm. Checks are single-flight, so a burst of
// triggers (alarm, popup, side panel) shares one probe. The check itself, and the rule that the
// token goes only to a server that proves it holds it, are in lib/worker/connection.js.

import { HEALTH_ALARM, HEALTH_PERIOD_MIN, KEYS, MSG, parseCode, parsePort, parseToken } from "./lib/shared/config.js";
import { onNotificationClicked, waitingBadge, watchAttention } from "./lib/worker/attention-alerts.js";
import { check, keepCredentials } from "./lib/worker/connection.js";
import { pairWithCode, proven } from "./lib/worker/pairing.js";
import { probe } from "./lib/worker/server.js";
import { choosePort } from "./lib/worker/port-choice.js";
import * as overlaySites from "./lib/worker/overlay-sites.js";
import { PageEventReporter } from "./lib/worker/page-events.js";
import { PageOverlaySource } from "./lib/worker/page-overlay.js";

// --- listeners (top level) ---

chrome.runtime.onInstalled.addListener(() => {
  setup();
  // A fresh install contacts no server: the first probe comes when the user opens the popup or
  // the side panel (or at the next alarm). An update reconnects to the server it paired with.
  chrome.storage.local.get(KEYS.paired).then((got) => got[KEYS.paired] && checkNow("installed"));
});

chrome.runtime.onStartup.addListener(() => {
  setup();
  checkNow("startup");
});

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === HEALTH_ALARM) checkNow("alarm");
});

chrome.notifications.onClicked.addListener((id) => {
  onNotificationClicked(id).catch((err) => console.warn("sidemirror: notification", err.message));
});

chrome.permissions.onRemoved.addListener((removed) => {
  overlaySites.onPermissionsRemoved(removed).catch((err) => console.warn("sidemirror: overlay sites", err.message));
});

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  if (sender.id !== chrome.runtime.id) return false;
  // Content scripts run in web pages: they may only ask for their own page's overlay data.
  const fromPage = Boolean(sender.tab) && !String(sender.url || "").startsWith(chrome.runtime.getURL(""));
  (fromPage ? handlePage(message, sender) : handle(message))
    .then((data) => sendResponse({ ok: true, data }))
    .catch((err) =>
      sendResponse({ ok: false, error: { code: err.code || "error", message: String(err.message || err) } }),
    );
  return true; // async response
});

// A restarted worker re-ensures its alarm (cheap and idempotent).
ensureAlarm();

// --- setup ---

function setup() {
  ensureAlarm();
  // The toolbar button opens the popup; the popup opens the side panel.
  chrome.sidePanel.setPanelBehavior({ openPanelOnActionClick: false }).catch(() => {});
  overlaySites.sync().catch((err) => console.warn("sidemirror: overlay sites", err.message));
}

async function ensureAlarm() {
  const existing = await chrome.alarms.get(HEALTH_ALARM);
  if (!existing) await chrome.alarms.create(HEALTH_ALARM, { periodInMinutes: HEALTH_PERIOD_MIN });
}

// --- messages ---

// The page overlay (content/content-script.js) runs only on sites the user turned it on for
// (lib/worker/overlay-sites.js); it makes no request and never holds the token. This worker does
// the fetching with its loopback-only host permissions, for the sender tab's own URL, and only
// while the overlay is on for that site: no other page URL ever reaches the server.
async function liveConnection() {
  if (inflight) await inflight.catch(() => {}); // a check is deciding who the server is: wait
  const got = await chrome.storage.session.get([KEYS.status, KEYS.token]);
  const status = /** @type {import("./lib/shared/config.js").ConnectionStatus | undefined} */ (got[KEYS.status]);
  const token = /** @type {import("./lib/shared/config.js").StoredToken | undefined} */ (got[KEYS.token])?.value;
  return status?.state === "connected" && status.port && token ? { port: status.port, token } : null;
}
const overlay = new PageOverlaySource(liveConnection);
// The same sites' errors (console, exceptions, failed requests), reported without chrome.debugger.
const pageEvents = new PageEventReporter(liveConnection);

async function handlePage(message, sender) {
  if (message?.type === MSG.pageEvents) {
    if (sender.frameId !== 0 || !/^https?:/.test(sender.url || "") || !(await overlaySites.isOn(sender.url)))
      return { off: true };
    return pageEvents.report(message.events, sender);
  }
  if (message?.type !== MSG.pageOverlay)
    throw codeError("forbidden", "content scripts may only ask for the page overlay");
  if (sender.frameId !== 0 || !/^https?:/.test(sender.url || "")) return { connected: false, refs: [], acted: null };
  if (!(await overlaySites.isOn(sender.url))) return { off: true, connected: false, refs: [], acted: null };
  const reply = await overlay.lookup(sender.url);
  if (reply.unreachable) checkNow("overlay"); // the server went away: update the badge too
  // The page gets the overlay's data only, never why the server could not be reached.
  const { unreachable: _unreachable, error: _error, ...data } = reply;
  return data;
}

async function handle(message) {
  switch (message?.type) {
    case MSG.getStatus:
      return (await getStatus()) || (await checkNow("status"));
    case MSG.checkNow:
      // A page that saw its server fail asks for a check that starts after the failure: one
      // already running may have verified the old server just before it went away.
      return checkNow("request", { fresh: message.fresh === true });
    case MSG.setPort: {
      const auto = message.port === null || message.port === "";
      const port = auto ? null : parsePort(message.port);
      if (!auto && port === null)
        throw codeError("invalid_port", `not a port: ${JSON.stringify(message.port)} (1–65535)`);
      // Connects there or rejects, keeping the server we had (lib/worker/port-choice.js).
      return choosePort(port, () => checkNow("port", { fresh: true }));
    }
    case MSG.setToken: {
      const token = parseToken(message.token);
      if (token === null) throw codeError("invalid_token", "that does not look like a token (run `sidemirror token`)");
      await chrome.storage.session.set({
        [KEYS.token]: { value: token, source: "manual", instance: null, server_id: null },
      });
      const status = await checkNow("token", { fresh: true });
      const stored = await storedToken();
      if (status.state === "connected" && stored?.value !== token) {
        throw codeError("token_rejected", "the server rejected that token; paired automatically instead");
      }
      return status;
    }
    case MSG.pairCode: {
      const code = parseCode(message.code);
      if (code === null)
        throw codeError("invalid_code", "a pairing code is 6 letters and digits, as `sidemirror pair` prints it");
      const port = (await getStatus())?.port ?? (await chrome.storage.local.get(KEYS.port))[KEYS.port];
      const health = port ? await probe(port, 4000) : null;
      if (!health) throw codeError("no_server", "no Sidemirror server found to pair with: start it, or set its port");
      // The server that answered must prove it holds the token it gave before we keep it.
      const got = await proven(port, health.server_id ?? null, await pairWithCode(port, code));
      await keepCredentials(port, health, got, "code");
      return checkNow("code", { fresh: true });
    }
    case MSG.useServer: {
      // Only a server the worker itself offered: a page cannot name an arbitrary port.
      const offered = (await getStatus())?.offers?.find(
        (o) => o.port === message.port && o.server_id === message.server_id,
      );
      if (!offered) throw codeError("not_offered", `no server on :${message.port} is on offer now`);
      // A token never moves from one server to another.
      await chrome.storage.session.remove(KEYS.token);
      await chrome.storage.local.set({ [KEYS.paired]: { server_id: offered.server_id, port: offered.port } });
      return checkNow("use", { fresh: true });
    }
    case MSG.setOverlay:
      return message.on ? overlaySites.enable(message.origin) : overlaySites.disable(message.origin);
    default:
      throw codeError("unknown_message", `unknown message type: ${JSON.stringify(message?.type)}`);
  }
}

function codeError(code, message) {
  return Object.assign(new Error(message), { code });
}

// --- the check ---

let inflight = null;
let queued = null;

/**
 * Probe, pair if needed, publish the status. Concurrent calls share one run; a `fresh` call
 * (after a setting changed, or a page saw its server fail) gets a run that starts after that,
 * shared with other fresh ones.
 */
function checkNow(reason, { fresh = false } = {}) {
  if (inflight && fresh) {
    queued ||= inflight
      .catch(() => {})
      .then(() => {
        queued = null;
        return checkNow(reason);
      });
    return queued;
  }
  if (!inflight) {
    inflight = runCheck().finally(() => {
      inflight = null;
    });
  }
  return inflight;
}

/** @returns {Promise<import("./lib/shared/config.js").ConnectionStatus | null>} */
async function getStatus() {
  return /** @type {any} */ ((await chrome.storage.session.get(KEYS.status))[KEYS.status]) || null;
}

/** @returns {Promise<import("./lib/shared/config.js").StoredToken | undefined>} */
async function storedToken() {
  return /** @type {any} */ ((await chrome.storage.session.get(KEYS.token))[KEYS.token]);
}

async function runCheck() {
  if (!(await getStatus())) {
    const { [KEYS.port]: port } = await chrome.storage.local.get(KEYS.port);
    await publish({ state: "connecting", port: port ?? null, offers: [], error: null, checkedAt: Date.now() });
  }
  return publish(await check({ onStarting: publish }));
}

async function publish(status) {
  await chrome.storage.session.set({ [KEYS.status]: status });
  await showBadge(status);
  // Sessions that wait for the user: the badge counts them (lib/worker/attention-alerts.js).
  const token = (await storedToken())?.value;
  watchAttention(
    status,
    token,
    () => getStatus().then((s) => s && showBadge(s)),
    () => checkNow("attention", { fresh: true }),
  );
  return status;
}

const BADGES = {
  connected: {
    text: "on",
    color: "#1a7f37",
    title: (s) => `Sidemirror — connected to 127.0.0.1:${s.port} (server ${s.version})`,
  },
  other_server: {
    text: "?",
    color: "#8a5a00",
    title: (s) => `Sidemirror — ${s.error?.message || "another server found"}`,
  },
  connecting: { text: "…", color: "#6e7781", title: () => "Sidemirror — connecting…" },
  not_running: { text: "off", color: "#6e7781", title: () => "Sidemirror — server not running" },
  error: { text: "!", color: "#cf222e", title: (s) => `Sidemirror — ${s.error?.message || "error"}` },
};

async function showBadge(status) {
  const badge = (status.state === "connected" && waitingBadge()) || BADGES[status.state] || BADGES.error;
  await Promise.all([
    chrome.action.setBadgeText({ text: badge.text }),
    chrome.action.setBadgeBackgroundColor({ color: badge.color }),
    chrome.action.setBadgeTextColor?.({ color: "#ffffff" }),
    chrome.action.setTitle({ title: badge.title(status) }),
  ]);
}
