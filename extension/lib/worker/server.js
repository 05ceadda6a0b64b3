// Talking to the companion server from the service worker: health probes (pairing is in
// lib/worker/pairing.js). Neither sends the token; lib/worker/identity.js decides when a server
// may have it.

import { baseUrl } from "../shared/config.js";

const PROBE_TIMEOUT_MS = 1500;

/** GET /health on one port; the parsed body when it is a Sidemirror server, else null. */
export async function probe(port, timeoutMs = PROBE_TIMEOUT_MS) {
  try {
    const res = await fetch(`${baseUrl(port)}/health`, {
      cache: "no-store",
      credentials: "omit",
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) return null;
    const body = await res.json();
    return body && body.app === "sidemirror" ? body : null;
  } catch {
    return null;
  }
}

/** GET /health on each port at once: [{port, health}] for the Sidemirror servers, by port. */
export async function scan(ports) {
  const results = await Promise.all(ports.map(async (port) => ({ port, health: await probe(port) })));
  return results.filter((r) => r.health).sort((a, b) => a.port - b.port);
}

export class ServerError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export async function errorFrom(res) {
  let code = `http_${res.status}`;
  let message = `${res.status} ${res.statusText}`.trim();
  try {
    const body = await res.json();
    if (body && body.error) {
      code = String(body.error.code || code);
      message = String(body.error.message || message);
    }
  } catch {
    /* not JSON */
  }
  return new ServerError(res.status, code, message);
}
