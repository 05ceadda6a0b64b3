"""Codex tool calls in a human line: kind, one-line input, and what the output says about itself.

Codex tools take JSON `arguments` (function calls) or free text `input` (custom tools such as
`apply_patch`). Outputs of command tools start with a small header (`Exit code: N`,
`Process exited with code N`, `Wall time: X seconds`, then `Output:`); older versions wrapped
output as JSON `{"output", "metadata": {"exit_code", "duration_seconds"}}`. Both are read.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sidemirror.core.models import FileDiff, PlanEntry, ToolKind
from sidemirror.core.redact import redact_text
from sidemirror.core.typed import hide_typed_values
from sidemirror.sources.codex.commands import typed
from sidemirror.sources.common import as_dict as _dict
from sidemirror.sources.common import as_text as _text
from sidemirror.sources.common import compact_json, one_line
from sidemirror.sources.diffs import patch_diffs

KINDS: dict[str, ToolKind] = {
    "exec_command": "execute",
    "shell": "execute",
    "shell_command": "execute",
    "local_shell": "execute",
    "container.exec": "execute",
    "write_stdin": "execute",
    "read_thread_terminal": "read",
    "apply_patch": "edit",
    "web_search": "fetch",
    "update_plan": "plan",
    "view_image": "read",
}
_EXIT = re.compile(r"^(?:Exit code:|Process exited with code)\s*(-?\d+)\s*$", re.M)
_WALL = re.compile(r"^Wall time:\s*([0-9.]+)\s*seconds?\s*$", re.M)
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)


def tool_name(payload: dict[str, Any]) -> str:
    name = _text(payload.get("name")) or "tool"
    namespace = _text(payload.get("namespace"))
    if namespace:
        return namespace + name if namespace.endswith("__") else f"{namespace}.{name}"
    return name


def kind_of(name: str) -> ToolKind:
    if name.startswith("mcp__") or "/" in name:
        return "mcp"
    return KINDS.get(name, "other")


def parse_arguments(raw: Any) -> Any:
    """Function-call `arguments` are a JSON string; keep the text when it is not JSON."""
    if not isinstance(raw, str):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _command(value: Any) -> str:
    if isinstance(value, list):
        parts = [str(p) for p in value]
        # `["bash", "-lc", "<script>"]` is how Codex runs a command line: show the line.
        if len(parts) == 3 and parts[1] in ("-lc", "-c"):
            return parts[2]
        return " ".join(parts)
    return _text(value)


def summary(name: str, args: Any) -> str:
    """The one-line input shown for a call (typed values of browser tools hidden)."""
    args = hide_typed_values(name, args)
    if name == "apply_patch":
        patch = args if isinstance(args, str) else _text(_dict(args).get("input"))
        files = _PATCH_FILE.findall(patch)
        # Redacted before the cut, so a secret across the cut leaves no prefix behind.
        return one_line(", ".join(files)) if files else one_line(redact_text(patch)[:200])
    if not isinstance(args, dict):
        return one_line(args if isinstance(args, str) else compact_json(args))
    if name == "write_stdin":
        return typed(args.get("chars"))  # what was typed, not the call's JSON
    for key in ("cmd", "command"):
        if key in args:
            return one_line(_command(args[key]))
    for key in ("query", "url", "path", "title"):
        if isinstance(args.get(key), str) and args[key]:
            return one_line(args[key])
    return one_line(compact_json(args))


def patch_file_diffs(name: str, args: Any) -> list[FileDiff]:
    """What an `apply_patch` call changes: one diff a file, in the patch's order (none for
    another tool)."""
    if name != "apply_patch":
        return []
    patch = args if isinstance(args, str) else _text(_dict(args).get("input"))
    return patch_diffs(patch)


def plan_entries(args: Any) -> list[PlanEntry]:
    """`update_plan` arguments: `{"plan": [{"step", "status"}], "explanation"}`."""
    steps = args.get("plan") if isinstance(args, dict) else None
    entries: list[PlanEntry] = []
    for step in steps if isinstance(steps, list) else []:
        if isinstance(step, dict):
            entries.append(
                PlanEntry(
                    content=_text(step.get("step")) or _text(step.get("content")),
                    status=_text(step.get("status")) or "pending",
                )
            )
    return entries


def output_text(raw: Any) -> tuple[str, bool, int | None]:
    """(text, is_error, duration_ms) of a call's output."""
    if isinstance(raw, list):  # content items: [{"type": "input_text", "text"}, ...]
        texts = [_text(i.get("text")) or f"[{i.get('type')}]" for i in raw if isinstance(i, dict)]
        return "\n".join(texts), False, None
    if isinstance(raw, dict):
        raw = _text(raw.get("content")) or compact_json(raw)
    text = _text(raw)
    if text.startswith("{"):
        parsed = parse_arguments(text)
        if isinstance(parsed, dict) and "output" in parsed:
            meta: dict[str, Any] = parsed.get("metadata") or {}
            meta = meta if isinstance(meta, dict) else {}
            code = meta.get("exit_code")
            seconds = meta.get("duration_seconds")
            duration = round(seconds * 1000) if isinstance(seconds, int | float) else None
            return _text(parsed["output"]), isinstance(code, int) and code != 0, duration
    exit_match = _EXIT.search(text[:2000])
    wall = _WALL.search(text[:2000])
    duration = round(float(wall.group(1)) * 1000) if wall else None
    is_error = exit_match is not None and int(exit_match.group(1)) != 0
    if exit_match or wall:
        head, sep, body = text.partition("\nOutput:\n")
        text = body if sep else text
    return text, is_error, duration
