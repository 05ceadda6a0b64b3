// Toolbar popup: connection status, manual port, the pairing-code and token fallbacks, and
// opening the side panel.
// One truth: the status card says which server the extension is connected to, and the port field
// and its help line are drawn from the same status and the stored choice, never from what was
// typed before. Picking a port connects there or says why not (lib/worker/port-choice.js).
// The count of sessions waiting for the user is the worker's (lib/worker/attention-alerts.js),
// read from session storage and followed while the popup is open.

import { onStatus, readStatus, send } from "../lib/page/client.js";
import { setText } from "../lib/page/dom.js";
import { renderOffers } from "../lib/page/server-offer.js";
import {
  KEYS,
  MSG,
  PORT_RANGE,
  SERVE_COMMAND,
  STARTING_NOTE,
  parseCode,
  parsePort,
  parseToken,
} from "../lib/shared/config.js";
import { waitingText } from "../lib/shared/waiting.js";

/** @param {string} id */
const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id));
/** @param {string} id */
const inputEl = (id) => /** @type {HTMLInputElement} */ ($(id));
/** @param {string} id */
const buttonEl = (id) => /** @type {HTMLButtonElement} */ ($(id));
/** @param {string} id */
const detailsEl = (id) => /** @type {HTMLDetailsElement} */ ($(id));

let windowId = null;
chrome.windows.getCurrent().then((w) => {
  windowId = w.id;
});

let lastStatus = null;
let manualPort = null; // the port the user chose (storage), or null: found on the range
let editing = false; // the user is typing a port: the field is theirs until they submit

function renderStatus(s) {
  lastStatus = s;
  const state = s?.state || "connecting";
  $("status").dataset.state = state;
  let text;
  let detail = "";
  if (state === "connected") {
    text = `Connected to :${s.port}`;
    detail = `Sidemirror server v${s.version ?? "?"} on 127.0.0.1:${s.port} · protocol ${s.protocol}`;
  } else if (state === "other_server") {
    text = "Not connected";
  } else if (state === "not_running") {
    text = "Server not running";
    const command =
      manualPort != null && !PORT_RANGE.includes(manualPort) ? `${SERVE_COMMAND} --port ${manualPort}` : SERVE_COMMAND;
    detail = `Start it with: ${command}`;
  } else if (state === "error") {
    text = s.error?.code === "protocol_mismatch" ? "Protocol mismatch" : "Connection error";
    detail = s.error?.message || "";
  } else if (s?.note === STARTING_NOTE) {
    text = "Server starting…";
    detail = `Sidemirror server v${s.version ?? "?"} on 127.0.0.1:${s.port} is loading; it answers in a moment`;
  } else {
    text = "Checking…";
  }
  setText($("status-text"), text);
  setText($("status-detail"), detail);
  renderOffers($("server-offer"), s);
  if (state === "error" && s.error?.code !== "protocol_mismatch") detailsEl("code-section").open = true;
  renderPort();
}

/** The port field and its help line, from the stored choice and the status. */
function renderPort() {
  if (!editing) inputEl("port").value = manualPort != null ? String(manualPort) : "";
  const connected = lastStatus?.state === "connected" ? lastStatus.port : null;
  const range = `${PORT_RANGE[0]}–${PORT_RANGE.at(-1)}`;
  let help;
  if (manualPort != null) {
    help =
      connected === manualPort
        ? `Using port ${manualPort} only. Empty the field and press Connect to find the server by itself.`
        : `Looking on port ${manualPort} only.`;
  } else {
    help =
      connected != null
        ? `Found by itself on port ${connected} (it looks on ${range}).`
        : `Looking on ports ${range}. Type a port to use another one.`;
  }
  setText($("port-help"), help);
}

async function refresh() {
  renderStatus(await readStatus());
  try {
    renderStatus(await send(MSG.checkNow));
  } catch (err) {
    renderStatus({ state: "error", error: { message: err.message } });
  }
}

/** @param {unknown} n the stored count of waiting sessions */
function renderWaiting(n) {
  const line = $("waiting");
  const count = typeof n === "number" && n > 0 ? n : 0;
  line.hidden = count === 0;
  setText(line, count ? waitingText(count) : "");
}

// --- open side panel: the call must happen inside the click (user gesture) ---

$("open-panel").addEventListener("click", () => {
  $("open-error").textContent = "";
  const target = windowId != null ? { windowId } : null;
  if (!target) {
    $("open-error").textContent = "No browser window found.";
    return;
  }
  chrome.sidePanel
    .open(target)
    .then(() => window.close())
    .catch((err) => {
      $("open-error").textContent = `Couldn't open the side panel: ${err.message}`;
    });
});

// --- port ---

async function loadPort() {
  manualPort = (await chrome.storage.local.get(KEYS.port))[KEYS.port] ?? null;
  renderPort();
}

chrome.storage.onChanged.addListener((changes, area) => {
  if (area === "session" && KEYS.waiting in changes) renderWaiting(changes[KEYS.waiting].newValue);
  if (area === "local" && KEYS.port in changes) {
    manualPort = changes[KEYS.port].newValue ?? null;
    renderPort();
  }
});

$("port").addEventListener("input", () => {
  editing = true;
});

$("port-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const input = inputEl("port");
  const button = buttonEl("port-connect");
  const raw = input.value.trim();
  const err = $("port-error");
  const port = raw === "" ? null : parsePort(raw);
  if (raw !== "" && port === null) {
    input.setAttribute("aria-invalid", "true");
    err.textContent = `“${raw}” is not a port: enter a whole number from 1 to 65535.`;
    input.focus();
    return;
  }
  input.removeAttribute("aria-invalid");
  err.textContent = "";
  button.disabled = true;
  setText(button, "Connecting…");
  const was = lastStatus?.state === "connected" ? lastStatus.port : null;
  try {
    const status = await send(MSG.setPort, { port });
    editing = false;
    manualPort = port;
    renderStatus(status);
  } catch (e) {
    if (e.code === "host_missing") {
      // The port is kept (lib/worker/port-choice.js): what is left is the code, below.
      editing = false;
      manualPort = port;
      setText(err, e.message);
      detailsEl("code-section").open = true;
      return;
    }
    // Nothing changed: the status card still tells where we are, and the error says so too.
    input.setAttribute("aria-invalid", "true");
    const stay = was != null ? `Still connected to :${was}.` : "Nothing was changed.";
    setText(err, `${e.message}. ${stay}`);
  } finally {
    button.disabled = false;
    setText(button, "Connect");
  }
});

// --- pairing code ---

$("code-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const input = inputEl("code");
  const msg = $("code-msg");
  const button = buttonEl("code-pair");
  msg.classList.remove("ok-text");
  const code = parseCode(input.value);
  if (!code) {
    input.setAttribute("aria-invalid", "true");
    setText(msg, "A code is 6 letters and digits, like ABC-DEF. Run `sidemirror pair` for one.");
    return;
  }
  input.removeAttribute("aria-invalid");
  setText(msg, "Pairing…");
  button.disabled = true;
  try {
    renderStatus(await send(MSG.pairCode, { code }));
    input.value = "";
    msg.classList.add("ok-text");
    setText(msg, "Paired.");
  } catch (e) {
    input.setAttribute("aria-invalid", "true");
    setText(msg, e.message);
  } finally {
    button.disabled = false;
  }
});

// --- token ---

$("token-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const input = inputEl("token");
  const msg = $("token-msg");
  msg.classList.remove("ok-text");
  const token = parseToken(input.value);
  if (!token) {
    input.setAttribute("aria-invalid", "true");
    msg.textContent = "That doesn't look like a token. Copy the whole output of `sidemirror token`.";
    return;
  }
  input.removeAttribute("aria-invalid");
  msg.textContent = "Checking…";
  try {
    const status = await send(MSG.setToken, { token });
    renderStatus(status);
    input.value = "";
    msg.classList.add("ok-text");
    msg.textContent = status.state === "connected" ? "Token accepted." : "Token saved; the server isn't reachable yet.";
  } catch (e) {
    input.setAttribute("aria-invalid", "true");
    setText(msg, e.message);
  }
});

onStatus(renderStatus);
loadPort().then(refresh);
chrome.storage.session.get(KEYS.waiting).then((got) => renderWaiting(got[KEYS.waiting]));
