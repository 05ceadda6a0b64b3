// One check of the connection: where the server is, whether it is ours, and a token it holds.
//
// The status this returns is what the service worker stores under KEYS.status for the pages:
//   {state, port, version, protocol, instance, server_id, offers, note, error, checkedAt}
// `state`: connecting | connected | not_running | other_server | error. A server found while it
// starts (`/health` says "starting", every other route 503) is waited for, as `connecting` with
// `note` STARTING_NOTE, and paired only once it serves. `offers` (other_server)
// lists Sidemirror servers found that are not the one this extension paired with:
// [{port, server_id, version}], and `note` says what became of that one; the user picks a server
// (MSG.useServer), the worker never does.
//
// Rules (docs/security.md):
// - A manual port is the only port probed: the user said where the server is.
// - Otherwise the paired server's port first; the range only when it is not there. The paired
//   server found on another port (same server_id) is followed; any other server is offered.
// - Never paired yet: the one server on the range is used; several are offered.
// - The stored token goes only to a server that proved it holds it (lib/worker/identity.js);
//   for a server that cannot, the worker pairs again through the native messaging host
//   (lib/worker/pairing.js), and that server never receives it.

import { KEYS, PORT_RANGE, STARTING_NOTE } from "../shared/config.js";
import { PROTOCOL_VERSION } from "../shared/protocol.gen.js";
import { holdsToken } from "./identity.js";
import { pairNative, proven } from "./pairing.js";
import { ServerError, probe, scan } from "./server.js";

const KNOWN_PORT_TIMEOUT_MS = 4000; // the one port we expect a server on: patient under load
const STARTING_POLL_MS = 150; // a starting server is ready in about half a second
const STARTING_WAIT_MS = 30_000; // then the status says "connecting" and the next check goes on

/**
 * Probe, pair if needed; resolves to the new status (not yet stored). `onStarting(status)` is
 * told when the server found is still starting, before this waits for it.
 */
export async function check({ onStarting = null } = {}) {
  const local = await chrome.storage.local.get([KEYS.port, KEYS.paired]);
  const manualPort = local[KEYS.port] ?? null;
  const paired = /** @type {import("../shared/config.js").PairedServer | null} */ (local[KEYS.paired] ?? null);
  const where = await locate(manualPort, paired);
  if (!where.found) {
    if (where.offers.length) {
      const note = !paired
        ? null
        : manualPort != null
          ? `The server on :${manualPort} is not the one this extension paired with.`
          : `The server this extension paired with (:${paired.port}) is not answering.`;
      return status({
        state: "other_server",
        port: where.port,
        offers: where.offers,
        note,
        error: { code: "other_server", message: offerText(where.offers, paired) },
      });
    }
    return status({
      state: "not_running",
      port: manualPort,
      error: { code: "not_running", message: "No Sidemirror server answered on 127.0.0.1" },
    });
  }
  const { port } = where.found;
  const starting = (h) =>
    status({ state: "connecting", port, version: h.version, server_id: h.server_id, note: STARTING_NOTE });
  if (where.found.health.status === "starting") await onStarting?.(starting(where.found.health));
  const health = await started(port, where.found.health);
  if (!health)
    return status({
      state: "not_running",
      port: manualPort,
      error: { code: "not_running", message: "The server went away" },
    });
  if (health.status === "starting") return starting(health);
  const base = {
    port,
    version: health.version,
    protocol: health.protocol,
    instance: health.instance,
    server_id: health.server_id,
  };
  if (health.protocol !== PROTOCOL_VERSION) {
    const message = `The server speaks protocol ${health.protocol}; this extension speaks ${PROTOCOL_VERSION}.`;
    return status({ ...base, state: "error", error: { code: "protocol_mismatch", message } });
  }
  try {
    await ensureToken(port, health);
  } catch (err) {
    const unreachable = !(err instanceof ServerError);
    if (unreachable && !(await probe(port, KNOWN_PORT_TIMEOUT_MS))) {
      return status({
        state: "not_running",
        port: manualPort,
        error: { code: "not_running", message: "The server went away" },
      });
    }
    const hint =
      err.code === "host_missing"
        ? " Run `sidemirror extension install-host`, or type the code `sidemirror pair` prints in the popup."
        : "";
    return status({
      ...base,
      state: "error",
      error: { code: err.code || "pair_failed", message: `Pairing failed: ${err.message}.${hint}` },
    });
  }
  return status({ ...base, state: "connected" });
}

export function status(fields) {
  return {
    state: fields.state,
    port: fields.port ?? null,
    version: fields.version ?? null,
    protocol: fields.protocol ?? null,
    instance: fields.instance ?? null,
    server_id: fields.server_id ?? null,
    offers: fields.offers ?? [],
    note: fields.note ?? null,
    error: fields.error ?? null,
    checkedAt: Date.now(),
  };
}

/** Whether `health` on `port` is the paired server: the same server_id (or, for a server that
 * reports none, the same port). */
function isPaired(paired, port, health) {
  if (!paired) return false;
  return paired.server_id ? health.server_id === paired.server_id : port === paired.port;
}

function offer(port, health) {
  return { port, server_id: health.server_id ?? null, version: health.version ?? null };
}

/**
 * Where the server is, asking nothing but GET /health. Resolves to
 * {found: {port, health}} or {port, offers: [...]} (offers empty: nothing answered).
 */
async function locate(manualPort, paired) {
  if (manualPort != null) {
    const health = await probe(manualPort, KNOWN_PORT_TIMEOUT_MS);
    if (!health) return { port: manualPort, offers: [] };
    if (paired && !isPaired(paired, manualPort, health))
      return { port: manualPort, offers: [offer(manualPort, health)] };
    return { found: { port: manualPort, health } };
  }
  if (paired) {
    const health = await probe(paired.port, KNOWN_PORT_TIMEOUT_MS);
    if (health && isPaired(paired, paired.port, health)) return { found: { port: paired.port, health } };
    const others = await scan(PORT_RANGE.filter((p) => p !== paired.port));
    const moved = paired.server_id ? others.find((r) => r.health.server_id === paired.server_id) : null;
    if (moved) return { found: moved };
    if (health) others.unshift({ port: paired.port, health });
    return { port: paired.port, offers: others.map((r) => offer(r.port, r.health)) };
  }
  const found = await scan(PORT_RANGE);
  if (found.length === 1) return { found: found[0] };
  return { port: null, offers: found.map((r) => offer(r.port, r.health)) };
}

/**
 * The server's health once it serves every route. While it starts (imports itself) `/health`
 * says "starting" and every other request is answered 503: wait for it, within reason, rather
 * than pair with a server that cannot answer yet. Null: it went away meanwhile.
 */
async function started(port, health) {
  const deadline = Date.now() + STARTING_WAIT_MS;
  while (health?.status === "starting" && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, STARTING_POLL_MS));
    health = await probe(port, KNOWN_PORT_TIMEOUT_MS);
  }
  return health;
}

/** What the panel and popup say about offered servers. */
export function offerText(offers, paired) {
  const ports = offers.map((o) => `:${o.port}`).join(", ");
  if (!paired) return `Sidemirror servers on ${ports} — which one is yours?`;
  return offers.length === 1
    ? `Another Sidemirror server on ${ports} — use it?`
    : `Other Sidemirror servers on ${ports} — use one?`;
}

/**
 * Keep a token this server holds: the stored one if the server proves it holds it, else new
 * credentials from the native messaging host (lib/worker/pairing.js). A stored token without the
 * panel credential (pasted by hand: it reads, it cannot decide) gains one when the host is there.
 * Remembers the server as the paired one.
 */
async function ensureToken(port, health) {
  const serverId = health.server_id ?? null;
  const stored = /** @type {import("../shared/config.js").StoredToken | undefined} */ (
    (await chrome.storage.session.get(KEYS.token))[KEYS.token]
  );
  if (stored?.value && (!stored.server_id || stored.server_id === serverId)) {
    const answer = await holdsToken(port, stored.value, serverId);
    if (answer === "unreachable") throw new Error("the server did not answer");
    if (answer === "yes") {
      let panel = stored.panel;
      if (!panel) {
        const got = await pairNative(port)
          .then((g) => proven(port, serverId, g))
          .catch(() => null);
        if (got?.token === stored.value) panel = got.panel;
      }
      if (stored.instance !== health.instance || stored.server_id !== serverId || stored.panel !== panel) {
        await chrome.storage.session.set({
          [KEYS.token]: { ...stored, panel, instance: health.instance, server_id: serverId },
        });
      }
      await rememberPaired(port, serverId);
      return;
    }
    // "no": not this server's token (it restarted with a new one, or it is not ours). It is not
    // sent; the pairing host is asked for this server's own.
  }
  const got = await proven(port, serverId, await pairNative(port));
  await keepCredentials(port, health, got, "native");
}

/** Store what pairing gave (native host or code) for the server `health` describes. */
export async function keepCredentials(port, health, got, source) {
  const serverId = health.server_id ?? null;
  await chrome.storage.session.set({
    [KEYS.token]: { value: got.token, panel: got.panel, source, instance: health.instance, server_id: serverId },
  });
  await rememberPaired(port, serverId);
}

async function rememberPaired(port, serverId) {
  const current = /** @type {import("../shared/config.js").PairedServer | undefined} */ (
    (await chrome.storage.local.get(KEYS.paired))[KEYS.paired]
  );
  if (current?.port === port && current?.server_id === serverId) return;
  await chrome.storage.local.set({ [KEYS.paired]: { server_id: serverId, port } });
}
