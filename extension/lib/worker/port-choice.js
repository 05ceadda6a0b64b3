// The user typed a port in the popup: connect to the Sidemirror server there, or say why not and
// stay with the server (and settings) we had. A saved port is never one where no server was
// reached, so the popup never shows "saved: :P" beside "connected to :Q". An empty field goes
// back to finding the server on the range by itself.

import { KEYS, PORT_RANGE } from "../shared/config.js";
import { probe } from "./server.js";

const CHOSEN_PORT_TIMEOUT_MS = 4000;

/**
 * Switch to `port` (null: back to finding the server on the range, which always applies).
 * `checkNow()` runs a fresh check and resolves to the published status. Resolves to the status
 * connected on `port`; otherwise rejects with {code, message} after restoring what was set.
 */
export async function choosePort(port, checkNow) {
  if (port === null) {
    // Discovery looks on the range, after the paired server's port: a server paired at a port
    // the user typed outside the range would be found there again, and the popup would stay on
    // it. Discovery could never have found that one, so it is forgotten with the typed port.
    const paired = /** @type {import("../shared/config.js").PairedServer | undefined} */ (
      (await chrome.storage.local.get(KEYS.paired))[KEYS.paired]
    );
    const dropped = paired && !PORT_RANGE.includes(paired.port) ? [KEYS.paired] : [];
    await chrome.storage.local.remove([KEYS.port, ...dropped]);
    return checkNow();
  }
  // Nothing answers there: say so before anything changes.
  const health = await probe(port, CHOSEN_PORT_TIMEOUT_MS);
  if (!health) throw codeError("no_server", `No Sidemirror server answers on 127.0.0.1:${port}`);
  const before = await chrome.storage.local.get([KEYS.port, KEYS.paired]);
  // The user said where the server is: whatever Sidemirror server answers there becomes the
  // paired one (its identity is checked before our token goes to it, lib/worker/identity.js).
  await chrome.storage.local.set({ [KEYS.port]: port });
  await chrome.storage.local.remove(KEYS.paired);
  const status = await checkNow();
  if (status.state === "connected" && status.port === port) return status;
  // A Sidemirror server is there and this browser has no pairing host: the port stays chosen,
  // so that the code the user types next (popup, `sidemirror pair`) goes to that server.
  if (status.port === port && status.error?.code === "host_missing") {
    throw codeError(
      "host_missing",
      `Found the server on :${port}; pair with a code to use it. ${status.error.message}`,
    );
  }
  await restore(before);
  await checkNow();
  const why = status.error?.message || status.state.replace("_", " ");
  throw codeError(status.error?.code || "not_connected", `Couldn't connect to :${port}: ${why}`);
}

async function restore(before) {
  const back = {};
  for (const key of [KEYS.port, KEYS.paired]) {
    if (before[key] === undefined) await chrome.storage.local.remove(key);
    else back[key] = before[key];
  }
  await chrome.storage.local.set(back);
}

function codeError(code, message) {
  return Object.assign(new Error(message), { code });
}
