// Is the server on this port the one our token belongs to? Asked before the token is sent.
//
// Anything on this machine can listen on the port range and answer `/health` with
// `"app": "sidemirror"` and any `server_id` it likes (server ids are public). What it cannot do
// without the token is answer `GET /api/identify?nonce=N` with
//   proof = hex(HMAC-SHA256(key = token, msg = "sidemirror-identify:" + server_id + ":" + N))
// for a nonce it has never seen. So the worker sends a fresh random nonce, computes the same HMAC
// with WebCrypto, and sends the token only when the two are equal.

import { baseUrl } from "../shared/config.js";

const NONCE_BYTES = 32; // 64 hex digits (the server takes 32–128)
const TIMEOUT_MS = 4000;
const PREFIX = "sidemirror-identify:";

const encoder = new TextEncoder();

function hex(bytes) {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh random nonce, lowercase hex. */
export function newNonce() {
  return hex(crypto.getRandomValues(new Uint8Array(NONCE_BYTES)));
}

/** The proof a server holding `token` gives for `serverId` and `nonce` (lowercase hex). */
export async function expectedProof(token, serverId, nonce) {
  const key = await crypto.subtle.importKey("raw", encoder.encode(token), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = await crypto.subtle.sign("HMAC", key, encoder.encode(`${PREFIX}${serverId}:${nonce}`));
  return hex(new Uint8Array(mac));
}

/** Equal strings, compared without stopping at the first difference. */
export function sameText(a, b) {
  if (typeof a !== "string" || typeof b !== "string" || a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Does the server on `port`, claiming `serverId`, hold `token`? "yes", "no" (a wrong or missing
 * proof, another server id, no such route), or "unreachable" (nothing answered).
 * The token itself never leaves this function.
 */
export async function holdsToken(port, token, serverId) {
  const nonce = newNonce();
  let body;
  try {
    const res = await fetch(`${baseUrl(port)}/api/identify?nonce=${nonce}`, {
      cache: "no-store",
      credentials: "omit",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!res.ok) return "no";
    body = await res.json();
  } catch (err) {
    return err instanceof SyntaxError ? "no" : "unreachable";
  }
  if (!body || typeof body.proof !== "string" || body.server_id !== serverId) return "no";
  return sameText(body.proof, await expectedProof(token, serverId, nonce)) ? "yes" : "no";
}
