// Talking to the companion server from the service worker: discovery, health, pairing.

import { PORT_RANGE, baseUrl } from "../shared/config.js";

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

/**
 * Find the server: each preferred port in order, then the whole default range in parallel
 * (lowest port wins). Returns {port, health} or null.
 */
export async function discover(preferred = []) {
  const seen = new Set();
  for (const port of preferred) {
    if (port == null || seen.has(port)) continue;
    seen.add(port);
    const health = await probe(port);
    if (health) return { port, health };
  }
  const rest = PORT_RANGE.filter((p) => !seen.has(p));
  const results = await Promise.all(rest.map((p) => probe(p)));
  const index = results.findIndex(Boolean);
  return index === -1 ? null : { port: rest[index], health: results[index] };
}

export class ServerError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function errorFrom(res) {
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

/** POST /api/pair (the browser adds our extension Origin). Resolves to the token. */
export async function pair(port) {
  const res = await fetch(`${baseUrl(port)}/api/pair`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: "{}",
    cache: "no-store",
    credentials: "omit",
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) throw await errorFrom(res);
  const body = await res.json();
  if (!body || typeof body.token !== "string" || !body.token) {
    throw new ServerError(res.status, "bad_pair_response", "the server sent no token");
  }
  return body.token;
}

/** True when the server accepts the token (an authenticated read), false on 401/403. */
export async function tokenWorks(port, token) {
  const res = await fetch(`${baseUrl(port)}/api/workspaces`, {
    headers: { Authorization: `Bearer ${token}` },
    cache: "no-store",
    credentials: "omit",
    signal: AbortSignal.timeout(5000),
  });
  if (res.status === 401 || res.status === 403) return false;
  if (!res.ok) throw await errorFrom(res);
  return true;
}
