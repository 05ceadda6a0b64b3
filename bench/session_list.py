"""The side panel's session list at 10,000 sessions, in real Chromium (issue 33).

bench/session-list/page.html loads the panel's real list (extension/sidepanel/session-list.js
and what it imports) from a loopback HTTP server over the repository, with a body shaped like
`GET /api/sessions` for N sessions in W workspaces (two forwarded hosts among them). Measured in
the page with `performance.now()`:
- opening: from `open()` to the end of the frame that paints the rows, the body's JSON.parse
  and grouping included (the request itself is not: no server here);
- filtering: each keystroke of a filter typed one character at a time and deleted again, from
  its input event to the end of the frame that paints the rows kept.
No server and no extension are involved: this is the panel's own cost at that size.
"""

from __future__ import annotations

import argparse
from typing import Any

import client
from panel import in_chromium

FILTER_TYPED = "fix session 12"  # two words of titles, then digits of ids and numbers


async def session_list(args: argparse.Namespace) -> dict[str, Any]:
    async def run(page: Any, out: dict[str, Any]) -> None:
        out["open"] = await page.evaluate(
            "([n, w, runs]) => window.opening(n, w, runs)",
            [args.list_sessions, args.list_workspaces, 7],
        )
        out["filter"] = await page.evaluate("(t) => window.typing(t)", FILTER_TYPED)

    return await in_chromium("bench/session-list/page.html", run)


def rows(result: dict[str, Any] | None, blank: list[str]) -> list[str]:
    """The table's lines for this phase (no peer offers the same: its cells stay blank)."""
    if not result:
        return []

    def row(label: str, value: str) -> str:
        return client.table_row(label, value, blank)

    if "error" in result:
        return [row("session list", "error: " + str(result["error"])[:60])]
    opened, typed = result["open"], result["filter"]
    n = f"{opened['sessions']:,}"
    return [
        row(
            f"session list: open, {n} sessions (p50 / max of {len(opened['open_ms'])})",
            f"{opened['open_p50_ms']} / {opened['open_max_ms']} ms",
        ),
        row(
            f"session list: filter keystroke, {n} sessions (p50 / max of {typed['keystrokes']})",
            f"{typed['key_p50_ms']} / {typed['key_max_ms']} ms",
        ),
    ]


if __name__ == "__main__":
    import asyncio
    import json

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--list-sessions", type=int, default=10_000)
    p.add_argument("--list-workspaces", type=int, default=400)
    print(json.dumps(asyncio.run(session_list(p.parse_args())), indent=2))
