// Sidemirror service worker: finds the companion server, pairs, watches its health and shows it
// on the toolbar badge. Chrome may stop this worker at any moment, so every listener is
// registered at the top level and all state lives in chrome.storage:
//   local:   port (manual), lastPort
//   session: token {value, source, instance}, status (read by the popup and the side panel)
// There is exactly one retry loop: the "health" alarm. Checks are single-flight, so a burst of
// triggers (alarm, popup, side panel) shares one probe.

import { HEALTH_ALARM, HEALTH_PERIOD_MIN, KEYS, MSG, parsePort, parseToken } from "./lib/shared/config.js";
import { PROTOCOL_VERSION } from "./lib/shared/protocol.gen.js";
import { PageOverlaySource } from "./lib/worker/page-overlay.js";
import { ServerError, discover, pair, probe, tokenWorks } from "./lib/worker/server.js";

// --- listeners (top level) ---

chrome.runtime.onInstalled.addListener(() => {
  setup();
  checkNow("installed");
});

chrome.runtime.onStartup.addListener(() => {
  setup();
  checkNow("startup");
});

chrome.alarms.onAlarm.addListener((alarm) => {
  if (alarm.name === HEALTH_ALARM) checkNow("alarm");
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
}

async function ensureAlarm() {
  const existing = await chrome.alarms.get(HEALTH_ALARM);
  if (!existing) await chrome.alarms.create(HEALTH_ALARM, { periodInMinutes: HEALTH_PERIOD_MIN });
}

// --- messages ---

// The page overlay (content/content-script.js). The content script is declared in the manifest
// for http(s) pages: the overlay must appear on whatever page the agent drives, without a click,
// and a declared content script gets no host permission of its own (it cannot reach the server,
// and never holds the token). The alternatives are worse: `activeTab` needs a click on every
// page, and optional host permissions + registerContentScripts need a permission prompt for the
// same "all sites" scope. Host permissions stay loopback-only; this worker does the fetching.
const overlay = new PageOverlaySource(async () => {
  const got = await chrome.storage.session.get([KEYS.status, KEYS.token]);
  const status = got[KEYS.status];
  const token = got[KEYS.token]?.value;
  return status?.state === "connected" && status.port && token ? { port: status.port, token } : null;
});

async function handlePage(message, sender) {
  if (message?.type !== MSG.pageOverlay) throw codeError("forbidden", "content scripts may only ask for the page overlay");
  if (sender.frameId !== 0 || !/^https?:/.test(sender.url || "")) return { connected: false, refs: [], acted: null };
  const reply = await overlay.lookup(sender.url);
  if (reply.unreachable) checkNow("overlay"); // the server went away: update the badge too
  const { unreachable, error, ...data } = reply;
  return data;
}

async function handle(message) {
  switch (message?.type) {
    case MSG.getStatus:
      return (await getStatus()) || (await checkNow("status"));
    case MSG.checkNow:
      return checkNow("request");
    case MSG.setPort: {
      if (message.port === null || message.port === "") {
        await chrome.storage.local.remove(KEYS.port);
      } else {
        const port = parsePort(message.port);
        if (port === null) throw codeError("invalid_port", `not a port: ${JSON.stringify(message.port)} (1–65535)`);
        await chrome.storage.local.set({ [KEYS.port]: port });
      }
      return checkNow("port");
    }
    case MSG.setToken: {
      const token = parseToken(message.token);
      if (token === null) throw codeError("invalid_token", "that does not look like a token (run `sidemirror token`)");
      await chrome.storage.session.set({ [KEYS.token]: { value: token, source: "manual", instance: null } });
      const status = await checkNow("token");
      const stored = (await chrome.storage.session.get(KEYS.token))[KEYS.token];
      if (status.state === "connected" && stored?.value !== token) {
        throw codeError("token_rejected", "the server rejected that token; paired automatically instead");
      }
      return status;
    }
    default:
      throw codeError("unknown_message", `unknown message type: ${JSON.stringify(message?.type)}`);
  }
}

function codeError(code, message) {
  return Object.assign(new Error(message), { code });
}

// --- the check ---

let inflight = null;

/** Probe, pair if needed, publish the status. Concurrent calls share one run. */
function checkNow(reason) {
  if (!inflight) {
    inflight = runCheck(reason).finally(() => {
      inflight = null;
    });
  }
  return inflight;
}

async function getStatus() {
  return (await chrome.storage.session.get(KEYS.status))[KEYS.status] || null;
}

async function runCheck() {
  const local = await chrome.storage.local.get([KEYS.port, KEYS.lastPort]);
  const manualPort = local[KEYS.port] ?? null;
  const previous = await getStatus();
  if (!previous) await publish({ state: "connecting", port: manualPort });

  const found = await discover([manualPort, local[KEYS.lastPort], previous?.port]);
  if (!found) {
    return publish({
      state: "not_running",
      port: manualPort,
      error: { code: "not_running", message: "No Sidemirror server answered on 127.0.0.1" },
    });
  }
  const { port, health } = found;
  const base = { port, version: health.version ?? null, protocol: health.protocol ?? null, instance: health.instance ?? null };
  await chrome.storage.local.set({ [KEYS.lastPort]: port });

  if (health.protocol !== PROTOCOL_VERSION) {
    return publish({
      ...base,
      state: "error",
      error: {
        code: "protocol_mismatch",
        message: `The server speaks protocol ${health.protocol}; this extension speaks ${PROTOCOL_VERSION}.`,
      },
    });
  }

  try {
    await ensureToken(port, health.instance);
  } catch (err) {
    const unreachable = !(err instanceof ServerError);
    if (unreachable && !(await probe(port))) {
      return publish({ state: "not_running", port: manualPort, error: { code: "not_running", message: "The server went away" } });
    }
    return publish({
      ...base,
      state: "error",
      error: {
        code: err.code || "pair_failed",
        message: `Pairing failed: ${err.message}. Paste the output of \`sidemirror token\` in the popup.`,
      },
    });
  }
  return publish({ ...base, state: "connected", error: null });
}

/** Keep a token the server accepts: the stored one if it still works, else pair for a new one. */
async function ensureToken(port, instance) {
  const stored = (await chrome.storage.session.get(KEYS.token))[KEYS.token];
  if (stored?.value && (await tokenWorks(port, stored.value))) {
    if (stored.instance !== instance) {
      await chrome.storage.session.set({ [KEYS.token]: { ...stored, instance } });
    }
    return;
  }
  const token = await pair(port);
  await chrome.storage.session.set({ [KEYS.token]: { value: token, source: "paired", instance } });
}

async function publish(fields) {
  const status = {
    state: fields.state,
    port: fields.port ?? null,
    version: fields.version ?? null,
    protocol: fields.protocol ?? null,
    instance: fields.instance ?? null,
    error: fields.error ?? null,
    checkedAt: Date.now(),
  };
  await chrome.storage.session.set({ [KEYS.status]: status });
  await showBadge(status);
  return status;
}

const BADGES = {
  connected: { text: "on", color: "#1a7f37", title: (s) => `Sidemirror — connected to 127.0.0.1:${s.port} (server ${s.version})` },
  connecting: { text: "…", color: "#6e7781", title: () => "Sidemirror — connecting…" },
  not_running: { text: "off", color: "#6e7781", title: () => "Sidemirror — server not running" },
  error: { text: "!", color: "#cf222e", title: (s) => `Sidemirror — ${s.error?.message || "error"}` },
};

async function showBadge(status) {
  const badge = BADGES[status.state] || BADGES.error;
  await Promise.all([
    chrome.action.setBadgeText({ text: badge.text }),
    chrome.action.setBadgeBackgroundColor({ color: badge.color }),
    chrome.action.setBadgeTextColor?.({ color: "#ffffff" }),
    chrome.action.setTitle({ title: badge.title(status) }),
  ]);
}
