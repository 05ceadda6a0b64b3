// How the extension gets the token and the panel credential (docs/security.md, pairing).
//
// The first way is Chrome native messaging: `sidemirror extension install-host` (and
// `scripts/serve`) install a host that Chrome starts for this extension only, and that answers
// from the running server's own files. No HTTP request can hand these out: a connection to the
// server proves nothing about who opened it (a same-user relay, ssh -R, socat, passes every
// check the server can make). The fallback is a one-time code: `sidemirror pair` prints it, the
// user types it into the popup, `POST /api/pair {"code"}` answers.
//
// Either way, what came back is kept only once the server on the port proves it holds that token
// (GET /api/identify, lib/worker/identity.js) under the server id we found there.

import { baseUrl } from "../shared/config.js";
import { holdsToken } from "./identity.js";
import { ServerError, errorFrom } from "./server.js";

export const HOST_NAME = "com.sidemirror.pair";
const CREDENTIAL = /^[A-Za-z0-9._~+/=-]{16,512}$/;

function credentials(answer, where) {
  const ok = answer && CREDENTIAL.test(String(answer.token ?? "")) && CREDENTIAL.test(String(answer.panel ?? ""));
  if (!ok) throw new ServerError(0, "bad_pair_response", `${where} sent no usable credentials`);
  return { token: answer.token, panel: answer.panel, server_id: answer.server_id ?? null };
}

/** Ask the native messaging host for the credentials of the server on `port`. */
export async function pairNative(port) {
  let reply;
  try {
    reply = await chrome.runtime.sendNativeMessage(HOST_NAME, { type: "pair", port });
  } catch (err) {
    throw new ServerError(0, "host_missing", `the pairing host is not installed for this browser (${err.message})`);
  }
  if (!reply?.ok) {
    throw new ServerError(
      0,
      String(reply?.error?.code || "host_failed"),
      String(reply?.error?.message || "the pairing host gave no answer"),
    );
  }
  if (reply.port !== port)
    throw new ServerError(0, "host_other_server", `the pairing host answered for :${reply.port}, not :${port}`);
  return credentials(reply, "the pairing host");
}

/** `POST /api/pair {"code"}`: the credentials, for a code the user read from `sidemirror pair`. */
export async function pairWithCode(port, code) {
  const res = await fetch(`${baseUrl(port)}/api/pair`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ code }),
    cache: "no-store",
    credentials: "omit",
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) throw await errorFrom(res);
  return credentials(await res.json(), "the server");
}

/** The credentials, once the server on `port` (known as `serverId`) proves it holds the token. */
export async function proven(port, serverId, got) {
  if (got.server_id !== serverId || (await holdsToken(port, got.token, serverId)) !== "yes") {
    throw new ServerError(0, "identity_unproven", `the server on :${port} could not prove it is the one paired with`);
  }
  return got;
}
