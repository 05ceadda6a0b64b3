"""CDP events of one browser → activity entries (raw dicts for `POST /api/activity`).

Pure bookkeeping, no I/O: `CdpMapper.handle(method, params, session_id)` returns the entries an
event produces. The server redacts and truncates them like any other reported entry, so secrets
in URLs or console text are handled in one place (activity_input).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sidemirror.core.clock import now_iso

MAX_TRACKED_REQUESTS = 5000


@dataclass
class _Page:
    target_id: str
    url: str = ""
    main_frame: str | None = None
    loader_id: str | None = None  # of the last navigation reported, so none is reported twice
    requests: dict[str, tuple[str, str]] = field(default_factory=dict)  # id → (method, url)


def _remote_object_text(obj: dict[str, Any]) -> str:
    if "value" in obj:
        value = obj["value"]
        return value if isinstance(value, str) else repr(value)
    return str(obj.get("description") or obj.get("unserializableValue") or obj.get("type", ""))


def first_frame(stack: object, fallback: dict[str, Any] | None = None) -> str | None:
    """`at fn (url:line:col)` for a CDP stack trace's first frame (1-based, as DevTools shows it);
    else from an exception's own `url`/`lineNumber`/`columnNumber`; None when neither says."""
    frames = stack.get("callFrames") if isinstance(stack, dict) else None
    frame = (
        frames[0]
        if isinstance(frames, list) and frames and isinstance(frames[0], dict)
        else (fallback or {})
    )
    url, line = frame.get("url"), frame.get("lineNumber")
    if not url or not isinstance(line, int):
        return None
    column = frame.get("columnNumber")
    where = f"{url}:{line + 1}" + (f":{column + 1}" if isinstance(column, int) else "")
    name = frame.get("functionName") if frames else None
    return f"at {name} ({where})" if name else f"at {where}"


class CdpMapper:
    """Tracks pages (per flattened session) and turns their events into entries."""

    def __init__(self, workspace: str | None = None) -> None:
        self.workspace = workspace
        self.pages: dict[str, _Page] = {}  # session id → page
        self.announced: set[str] = set()  # target ids we reported as opened (or saw at start)
        self.last_urls: dict[str, str] = {}  # detached, not yet destroyed: target id → url

    def attached(
        self, session_id: str, target_id: str, url: str, is_new: bool
    ) -> list[dict[str, Any]]:
        """A page target got a session; `is_new` when it appeared after we started watching."""
        self.pages[session_id] = _Page(target_id, url)
        if target_id in self.announced:
            return []
        self.announced.add(target_id)
        return [self._entry("navigation", "tab.open", target_id, url)] if is_new else []

    def frame_tree(
        self, session_id: str, tree: dict[str, Any], is_new: bool
    ) -> list[dict[str, Any]]:
        """The main frame as found on attach; a new tab's first navigation may already be
        committed by then (it starts in the browser before the tab can be paused)."""
        page = self.pages.get(session_id)
        frame = tree.get("frame") or {}
        if page is None or not frame.get("id"):
            return []
        page.main_frame = str(frame["id"])
        if not is_new or str(frame.get("url", "about:blank")) == "about:blank":
            return []
        return self._frame_navigated(page, {"frame": frame})

    def detached(self, session_id: str) -> None:
        page = self.pages.pop(session_id, None)
        if page is not None and page.target_id in self.announced:
            self.last_urls[page.target_id] = page.url  # a closing tab detaches first

    def destroyed(self, target_id: str) -> list[dict[str, Any]]:
        gone = [sid for sid, page in self.pages.items() if page.target_id == target_id]
        url = self.pages[gone[0]].url if gone else self.last_urls.pop(target_id, "")
        for sid in gone:
            del self.pages[sid]
        if target_id not in self.announced:
            return []
        self.announced.discard(target_id)
        return [self._entry("navigation", "tab.close", target_id, url)]

    def handle(
        self, method: str, params: dict[str, Any], session_id: str | None
    ) -> list[dict[str, Any]]:
        page = self.pages.get(session_id or "")
        if page is None:
            return []
        handler = _HANDLERS.get(method)
        return handler(self, page, params) if handler else []

    def _entry(self, kind: str, command: str, tab: str, url: str, **extra: Any) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "type": kind,
            "command": command,
            "tab_id": tab,
            "url": url or None,
            "source": "cdp",
            "ts": now_iso(),
            **extra,
        }
        if self.workspace:
            entry["workspace"] = self.workspace
        return entry

    # --- event handlers (method → handler, below) ---

    def _frame_navigated(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        frame = params.get("frame") or {}
        if frame.get("parentId"):
            return []  # an iframe: not the page's navigation
        loader = frame.get("loaderId")
        if loader is not None and loader == page.loader_id:
            return []
        page.main_frame, page.loader_id = frame.get("id"), loader
        page.url = str(frame.get("url", ""))
        return [self._entry("navigation", "navigate", page.target_id, page.url)]

    def _same_document(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        if params.get("frameId") != page.main_frame:
            return []
        page.url = str(params.get("url", page.url))
        return [
            self._entry("navigation", "navigate", page.target_id, page.url, args=["same-document"])
        ]

    def _console(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        if params.get("type") not in ("error", "assert"):
            return []
        text = " ".join(_remote_object_text(a) for a in params.get("args") or [])
        frame = first_frame(params.get("stackTrace"))
        return [
            self._entry(
                "console",
                f"console.{params['type']}",
                page.target_id,
                page.url,
                status="error",
                error=text or "(empty)",
                args=[frame] if frame else [],
            )
        ]

    def _log_entry(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        entry = params.get("entry") or {}
        # Network errors arrive as Network events; console calls as Runtime events.
        if entry.get("level") != "error" or entry.get("source") in ("network", "console-api"):
            return []
        return [
            self._entry(
                "console",
                f"log.{entry.get('source', 'other')}",
                page.target_id,
                page.url,
                status="error",
                error=str(entry.get("text", "")),
            )
        ]

    def _exception(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        details = params.get("exceptionDetails") or {}
        exc = details.get("exception") or {}
        text = exc.get("description") or details.get("text") or "uncaught exception"
        # Where it was thrown: the stack's first frame, the line a developer opens first.
        frame = first_frame(details.get("stackTrace"), details)
        return [
            self._entry(
                "error",
                "exception",
                page.target_id,
                page.url,
                status="error",
                error=str(text),
                args=[frame] if frame else [],
            )
        ]

    def _request(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        request = params.get("request") or {}
        if len(page.requests) >= MAX_TRACKED_REQUESTS:
            page.requests.pop(next(iter(page.requests)))
        page.requests[str(params.get("requestId"))] = (
            str(request.get("method", "GET")),
            str(request.get("url", "")),
        )
        return []

    def _response(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        response = params.get("response") or {}
        status = response.get("status")
        if not isinstance(status, int) or status < 400:
            return []
        method, url = page.requests.get(str(params.get("requestId")), ("GET", ""))
        url = str(response.get("url") or url)
        reason = str(response.get("statusText") or "").strip()
        return [
            self._entry(
                "error",
                "request.failed",
                page.target_id,
                page.url,
                status="error",
                args=[method, url, str(status)],
                error=f"HTTP {status} {reason}".strip(),
            )
        ]

    def _finished(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        page.requests.pop(str(params.get("requestId")), None)
        return []

    def _failed(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        known = page.requests.pop(str(params.get("requestId")), None)
        if params.get("canceled"):
            return []  # navigation away, aborted by the page: not a failure to report
        error = str(params.get("errorText") or "failed")
        if params.get("blockedReason"):
            error += f" (blocked: {params['blockedReason']})"
        # Unknown when it started before Network.enable took effect (CDP does not replay it).
        return [
            self._entry(
                "error",
                "request.failed",
                page.target_id,
                page.url,
                status="error",
                args=list(known) if known else [],
                error=error,
            )
        ]

    def _dialog(self, page: _Page, params: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            self._entry(
                "console",
                "dialog",
                page.target_id,
                page.url,
                args=[str(params.get("type", "")), str(params.get("message", ""))],
            )
        ]


_HANDLERS = {
    "Page.frameNavigated": CdpMapper._frame_navigated,
    "Page.navigatedWithinDocument": CdpMapper._same_document,
    "Page.javascriptDialogOpening": CdpMapper._dialog,
    "Runtime.consoleAPICalled": CdpMapper._console,
    "Runtime.exceptionThrown": CdpMapper._exception,
    "Log.entryAdded": CdpMapper._log_entry,
    "Network.requestWillBeSent": CdpMapper._request,
    "Network.responseReceived": CdpMapper._response,
    "Network.loadingFinished": CdpMapper._finished,
    "Network.loadingFailed": CdpMapper._failed,
}
