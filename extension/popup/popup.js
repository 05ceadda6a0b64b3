// Toolbar popup: connection status, manual port, token fallback, and opening the side panel.

import { onStatus, readStatus, send } from "../lib/page/client.js";
import { setText } from "../lib/page/dom.js";
import { renderOffers } from "../lib/page/server-offer.js";
import { KEYS, MSG, PORT_RANGE, parsePort, parseToken } from "../lib/shared/config.js";

const $ = (id) => document.getElementById(id);

let windowId = null;
chrome.windows.getCurrent().then((w) => {
  windowId = w.id;
});

function renderStatus(s) {
  const state = s?.state || "connecting";
  $("status").dataset.state = state;
  let text;
  let detail = "";
  if (state === "connected") {
    text = `Connected · server v${s.version ?? "?"}`;
    detail = `127.0.0.1:${s.port} · protocol ${s.protocol}`;
  } else if (state === "other_server") {
    text = "Not connected";
  } else if (state === "not_running") {
    text = "Server not running";
    detail = "Start it with: sidemirror serve";
  } else if (state === "error") {
    text = s.error?.code === "protocol_mismatch" ? "Protocol mismatch" : "Connection error";
    detail = s.error?.message || "";
  } else {
    text = "Checking…";
  }
  setText($("status-text"), text);
  setText($("status-detail"), detail);
  renderOffers($("server-offer"), s);
  if (state === "error" && s.error?.code !== "protocol_mismatch") $("token-section").open = true;
}

async function refresh() {
  renderStatus(await readStatus());
  try {
    renderStatus(await send(MSG.checkNow));
  } catch (err) {
    renderStatus({ state: "error", error: { message: err.message } });
  }
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
  const { [KEYS.port]: port } = await chrome.storage.local.get(KEYS.port);
  $("port").value = port ? String(port) : "";
}

$("port-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const input = $("port");
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
  try {
    const status = await send(MSG.setPort, { port });
    renderStatus(status);
    $("port-help").textContent =
      port === null
        ? `Saved: automatic (${PORT_RANGE[0]}–${PORT_RANGE.at(-1)}).`
        : status.state === "connected" && status.port === port
          ? `Saved: port ${port}.`
          : `Saved: port ${port} (no server answers there yet).`;
  } catch (e) {
    input.setAttribute("aria-invalid", "true");
    setText(err, e.message);
  }
});

// --- token ---

$("token-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const input = $("token");
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
loadPort();
refresh();
