"""`sidemirror status`: every running server this user has, each asked for its /health once it
has shown it is the server its runtime file names (server_check.py)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from sidemirror.cli.servers import NOT_RUNNING, add_server_args, find_and_report
from sidemirror.server_check import UntrustedServer, check_server


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    status = sub.add_parser(
        "status",
        help="list the running servers: port, data dir, workspaces, parse errors",
        description="List every running server (one per data dir) with its /health; exit 1 "
        "when none answers, 2 when a runtime file's port holds something that is not its "
        "server.",
    )
    status.add_argument(
        "--json",
        action="store_true",
        help="one JSON object: running, port and health of the current data dir's server, "
        "and `servers` (all of them)",
    )
    add_server_args(status)


def _health(port: object) -> dict[str, Any] | None:
    import urllib.request  # here: `token` and `--version` do not pay for http and ssl

    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
            data = json.load(resp)
    except (OSError, ValueError):  # URLError is an OSError
        return None
    return data if isinstance(data, dict) else None


def _parse_error_lines(health: dict[str, Any]) -> list[str]:
    """`parse_errors_detail` (newest first) as one line each: which file, where, why."""
    detail = health.get("parse_errors_detail") or []  # absent from older servers
    lines = ["  latest parse errors (newest first):"] if detail else []
    for d in detail:
        where = d.get("file") or "(ingested data)"
        if d.get("offset") is not None:
            where += f" at byte {d['offset']}"
        lines.append(f"    {where}: {d.get('reason')}")
    return lines


def _checked_health(info: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """The server's /health, or None and why it was not asked (not the runtime file's server)."""
    try:
        check_server(info)
    except (UntrustedServer, ValueError) as exc:
        return None, str(exc)
    return _health(info.get("port")), None


def run(args: argparse.Namespace) -> int:
    choice = find_and_report(args, "status")
    servers = []
    untrusted = False
    for info in choice.servers:
        health, problem = _checked_health(info)
        if problem is not None:
            untrusted = True
            print(f"sidemirror status: {problem}", file=sys.stderr)
        servers.append(
            {key: info.get(key) for key in ("port", "pid", "data_dir", "version")}
            | {"health": health}
        )
    answering = [s for s in servers if s["health"] is not None]
    current = next(
        (s for s in servers if choice.server and s["port"] == choice.server.get("port")), None
    )
    if args.json:
        health = current["health"] if current else None
        port = current["port"] if current else None
        print(json.dumps({"running": health is not None, "port": port, "health": health,
                          "servers": servers}))  # fmt: skip
    elif not answering:
        print(f"sidemirror: {NOT_RUNNING}")
    for server in [] if args.json else answering:
        health = server["health"]
        assert health is not None
        print(
            f"sidemirror {health['version']} on port {server['port']} (pid {server['pid']}, "
            f"data dir {server['data_dir']}): {health['workspaces']} workspace(s), "
            f"{health['parse_errors']} parse error(s), up {health['uptime_s']:.0f}s"
        )
        for line in _parse_error_lines(health):
            print(line)
    if untrusted:
        return 2
    return 0 if answering else 1
