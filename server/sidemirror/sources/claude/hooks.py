"""What a user's hooks said, from a Claude Code transcript: a small `system`/`hook` line each.

Claude Code records hooks in three ways:
- `progress` records (`hook_progress`): a hook is running. Transient; skipped by the parser.
- `system`/`stop_hook_summary` after each Stop: which hooks ran, their errors, and whether one
  stopped the agent (`preventedContinuation`, `stopReason`). A routine summary (no error, nothing
  stopped) says nothing a reader needs; one with errors or a stop is shown.
- `attachment` records (newer versions): `hook_success`, `hook_additional_context` (text a hook
  added to the model's context), `hook_blocking_error` (a hook blocked a tool call and why),
  `hook_non_blocking_error`, `hook_error_during_execution`, `hook_stopped_continuation`,
  `hook_system_message`, `hook_cancelled`. Those with something to say are shown; the other
  attachment kinds (files, skill listings, reminders, queued commands) are context the agent was
  given, not events, and are skipped like `isMeta` lines.
"""

from __future__ import annotations

from typing import Any

from sidemirror.sources.common import as_dict, as_list, flatten_content, one_line
from sidemirror.sources.common import as_text as _text

SHOWN_CHARS = 2000  # a hook's output can be a whole log; the line keeps its head


def _joined(value: Any) -> str:
    if isinstance(value, list):
        return "\n".join(flatten_content(v) if not isinstance(v, str) else v for v in value)
    return flatten_content(value) if not isinstance(value, str) else value


def _line(name: str, what: str, detail: str) -> str:
    head = f"{name or 'Hook'}: {what}"
    detail = detail.strip()
    if not detail:
        return head
    cut = detail[:SHOWN_CHARS] + ("…" if len(detail) > SHOWN_CHARS else "")
    return f"{head}\n{cut}"


def attachment_line(record: dict[str, Any]) -> str | None:
    """The text of a hook attachment worth showing, or None (skip the record)."""
    att = as_dict(record.get("attachment"))
    kind = _text(att.get("type"))
    if not kind.startswith("hook_"):
        return None
    name = _text(att.get("hookName")) or _text(att.get("hookEvent"))
    if kind == "hook_blocking_error":
        blocking = att.get("blockingError")
        reason = _text(as_dict(blocking).get("blockingError")) or _joined(blocking)
        return _line(name, "blocked", reason)
    if kind in ("hook_non_blocking_error", "hook_error_during_execution"):
        detail = _text(att.get("stderr")) or _joined(att.get("content"))
        code = att.get("exitCode")
        what = f"failed (exit {code})" if isinstance(code, int) else "failed"
        return _line(name, what, detail)
    if kind == "hook_stopped_continuation":
        return _line(name, "stopped the agent", _text(att.get("message")))
    if kind == "hook_cancelled":
        return _line(name, "cancelled", "")
    if kind in ("hook_additional_context", "hook_system_message", "hook_success"):
        detail = _joined(att.get("content"))
        if not detail.strip():
            return None  # a hook that ran and said nothing
        what = "added context" if kind == "hook_additional_context" else "said"
        return _line(name, what, detail)
    return None


def stop_summary_line(record: dict[str, Any]) -> str | None:
    """A `stop_hook_summary` with errors or a stop; None for a routine one."""
    errors = [one_line(_joined(e)) for e in as_list(record.get("hookErrors"))]
    errors = [e for e in errors if e]
    stopped = record.get("preventedContinuation") is True
    if not errors and not stopped:
        return None
    count = record.get("hookCount")
    name = f"Stop hooks ({count})" if isinstance(count, int) else "Stop hooks"
    reason = _text(record.get("stopReason"))
    what = "stopped the agent" if stopped else "failed"
    return _line(name, what, "\n".join(([reason] if reason else []) + errors))
