"""Logs go through the same redaction, and a malformed request's bytes never reach them
(log_filter.py)."""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import BadHttpMessage
from sidemirror.log_filter import RedactingFilter

AWS = "AKIA" + "IOSFODNN7EXAMPLE"


def _record(msg: str, *args: object, exc: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(exc), exc, None) if exc is not None else None
    return logging.LogRecord("aiohttp.server", logging.ERROR, __file__, 1, msg, args, exc_info)


def test_log_records_are_redacted_message_and_traceback() -> None:
    handler = logging.StreamHandler()
    handler.addFilter(RedactingFilter())
    record = _record("client %r", f"name {AWS}", exc=ValueError(f"bad {AWS}"))
    assert handler.filter(record)
    assert AWS not in handler.format(record)
    assert "[REDACTED:aws_access_key]" in handler.format(record)


def test_a_malformed_request_log_never_shows_the_request_bytes() -> None:
    handler = logging.StreamHandler()
    handler.addFilter(RedactingFilter())
    raw = "Authorization: Custom opaque-value-123\x01"
    record = _record("Error handling request from %s", "127.0.0.1",
                     exc=BadHttpMessage(f"Invalid header value char: {raw!r}"))  # fmt: skip
    handler.filter(record)
    line = handler.format(record)
    assert "opaque-value-123" not in line and "Authorization" not in line
    assert "BadHttpMessage (HTTP 400)" in line
