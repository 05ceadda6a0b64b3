"""Logs go through the same redaction as everything else the server writes.

`install_redaction` puts `RedactingFilter` on a logger's handlers. A filter on a handler sees
every record that reaches it, from any logger (ours, aiohttp's, asyncio's), where a filter on a
logger would see only that logger's own records. The filter renders the message (and any
traceback) once, redacted, in place of the template and its arguments.

aiohttp reports a malformed request with the parser's exception, whose text quotes the raw bytes
it choked on: a header line, `Authorization` included. Those records keep their message and
lose the exception text: which rule failed is enough to debug, the bytes are not.
"""

from __future__ import annotations

import logging

from aiohttp.http_exceptions import HttpProcessingError

from sidemirror.core.redact import redact_text

_FORMATTER = logging.Formatter()


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        message = record.getMessage()
        if isinstance(exc, HttpProcessingError):
            message += f": {type(exc).__name__} (HTTP {exc.code}); request bytes not logged"
            record.exc_info = None
            record.exc_text = None
        elif record.exc_info and not record.exc_text:
            record.exc_text = redact_text(_FORMATTER.formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)
        record.msg = redact_text(message)
        record.args = None
        return True


def install_redaction(logger: logging.Logger) -> None:
    """Redact every record `logger`'s handlers write (once per handler, however often called)."""
    for handler in logger.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
