"""The request rules that need no server: which Host and Origin a request may carry, what a CORS
answer says, and the headers every response leaves with.

Standard library only. The security middleware (security.py) applies them once the server runs;
the responder that answers while it starts (starting.py) applies the same ones, so the two cannot
drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable

# The ID that the pinned `key` in extension/manifest.json gives the extension.
PINNED_EXTENSION_ID = "mboojbmhcigehknaafejhibpmmdjpgbn"

# On every response: never cached (sessions, tokens), never sniffed into HTML.
SECURITY_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}

# What a CORS preflight from an allowed Origin is told, besides `cors_headers`.
PREFLIGHT_HEADERS = {
    "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
    "Access-Control-Allow-Headers": (
        "Authorization, Content-Type, Last-Event-ID, Mcp-Session-Id, MCP-Protocol-Version, "
        "X-Sidemirror-Panel"
    ),
    "Access-Control-Max-Age": "600",
}


def extension_origins(extension_ids: Iterable[str]) -> frozenset[str]:
    """The Origins a request may carry: the pinned extension's and any other ID given."""
    return frozenset(f"chrome-extension://{i}" for i in (PINNED_EXTENSION_ID, *extension_ids))


def host_allowed(host_header: str | None, port: int, extra_hosts: Iterable[str] = ()) -> bool:
    """Whether the Host header names this server on loopback: a page that rebinds its own DNS
    name to 127.0.0.1 still sends its own name here, and is refused."""
    if not host_header:
        return False
    allowed = {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}
    allowed |= {f"{h}:{port}" for h in extra_hosts}
    return host_header.lower() in allowed


def cors_headers(origin: str | None) -> dict[str, str]:
    """For a response to an allowed Origin. Never `*`: the one Origin is echoed, and caches are
    told the answer varies with it."""
    if origin is None:
        return {}
    return {"Access-Control-Allow-Origin": origin, "Vary": "Origin"}
