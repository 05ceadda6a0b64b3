"""`sidemirror export SESSION`: a session as JSONL, Markdown or one offline HTML file, read from
the running server (so it is redacted as the panel sees it). Written as it is read, a page at a
time; with `-o FILE` the file appears only once whole, so a failed export leaves nothing half
written and an older file of that name untouched."""

from __future__ import annotations

import argparse
import io
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from collections.abc import Callable

    from sidemirror.export.walker import Writer

from sidemirror.cli.servers import add_server_args, choose_server

FORMATS = ("html", "md", "jsonl")
HELP = "write a session as HTML, Markdown or JSONL (read from the running server)"
DESCRIPTION = (
    "Write one session, oldest item first, as a self-contained HTML file, Markdown or the "
    "JSONL item stream. It is read from the running server, which redacts secrets. Exit 1 "
    "when the session cannot be found or read (nothing is written)."
)


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser("export", help=HELP, description=DESCRIPTION)
    export.add_argument("session", metavar="SESSION", help="a session id, or a unique prefix")
    export.add_argument(
        "--workspace",
        metavar="WS",
        help="the workspace: its id, name or directory (needed only when the id is not unique)",
    )
    export.add_argument(
        "--format", choices=FORMATS, default=None,
        help="html, md or jsonl (default: from -o's extension, else md)",
    )  # fmt: skip
    export.add_argument(
        "-o", "--output", type=Path, metavar="FILE", help="write to FILE (default: stdout)"
    )
    export.add_argument(
        "--max-chars", type=_positive, default=None, metavar="N",
        help="cut tool calls, results and thinking to N characters, with a visible mark "
        "(default: whole; prompts and replies are always whole; not for jsonl)",
    )  # fmt: skip
    export.add_argument(
        "--page-size", type=_positive, default=500, metavar="N",
        help="items asked of the server per request (default 500); memory holds one page",
    )  # fmt: skip
    add_server_args(export)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {text!r}")
    return value


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    suffix = args.output.suffix.lstrip(".").lower() if args.output else ""
    return {"html": "html", "htm": "html", "jsonl": "jsonl"}.get(suffix, "md")


def _write(args: argparse.Namespace, fmt: str, out: TextIO, info: dict[str, object]) -> None:
    from sidemirror.export.api import HttpPages, ServerReader, locate
    from sidemirror.export.html_page import HtmlWriter
    from sidemirror.export.jsonl import JsonlWriter
    from sidemirror.export.markdown import MarkdownWriter
    from sidemirror.export.walker import SessionWalk, export
    from sidemirror.server_check import checked_connection

    max_chars = None if fmt == "jsonl" else args.max_chars
    conn = checked_connection(info, timeout=120)  # a page back in a huge transcript is slow
    try:
        reader = ServerReader(conn, str(info["token"]))
        located = locate(reader, args.session, args.workspace)
        page = min(args.page_size, 10000)  # the server's cap
        walk = SessionWalk(HttpPages(reader, located), located, page)
        writers: dict[str, Callable[[TextIO, int | None], Writer]] = {
            "html": HtmlWriter, "md": MarkdownWriter, "jsonl": JsonlWriter
        }  # fmt: skip
        export(walk, writers[fmt](out, max_chars), max_chars)
    finally:
        conn.close()


def run(args: argparse.Namespace) -> int:
    from sidemirror.export.api import ExportError

    info = choose_server(args, "export")
    if info is None:
        return 1
    fmt = _format(args)
    target: Path | None = args.output
    part = target.with_name(f".{target.name}.part") if target else None
    try:
        if target is None or part is None:
            if isinstance(sys.stdout, io.TextIOWrapper):  # UTF-8, as the HTML's charset says,
                sys.stdout.reconfigure(encoding="utf-8")  # whatever the locale's encoding
            _write(args, fmt, sys.stdout, info)
            sys.stdout.flush()
        else:
            with open(part, "w", encoding="utf-8") as out:
                _write(args, fmt, out, info)
            os.replace(part, target)
    except (ExportError, OSError) as exc:
        print(f"sidemirror export: {exc}", file=sys.stderr)
        return 1
    finally:  # a failed or interrupted export leaves no half file (once renamed, none is left)
        if part is not None:
            part.unlink(missing_ok=True)
    if target is not None:
        print(f"sidemirror export: wrote {target}", file=sys.stderr)
    return 0
