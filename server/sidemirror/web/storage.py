"""A disk that refuses a write, whatever handler met it, is answered 507 JSON, never 500 text.

Ingest and activity answer their own 507 with the counts of what they stored. Any other write
that meets a full disk (an OSError with a storage errno, a `StorageError`, SQLite's "database or
disk is full") reaches this middleware, which answers the same shape:
`{"error": {"code": "disk_full", "message": "cannot store data in <data dir>: ...",
"first_unstored_line": null}}` (null: such a request is not line-based, so nothing says where a
resend starts; docs/api.md).
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from sidemirror.core.durable import STORAGE_ERRNOS, StorageError, WriteFailed
from sidemirror.index.database import disk_refused

logger = logging.getLogger(__name__)
INSUFFICIENT_STORAGE = 507


def storage_error_of(exc: BaseException, where: Path) -> StorageError | None:
    """The storage failure `exc` stands for, or None when it is some other error."""
    if isinstance(exc, StorageError):
        return exc
    if isinstance(exc, WriteFailed):
        exc = exc.error
    if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:
        return StorageError(where, exc)
    if isinstance(exc, sqlite3.OperationalError):
        code = disk_refused(exc)
        if code is not None:
            return StorageError(where, OSError(code, str(exc)))
    return None


def disk_full_response(error: StorageError) -> web.Response:
    body = error.body()
    body["error"].setdefault("first_unstored_line", None)
    return web.json_response(body, status=INSUFFICIENT_STORAGE)


def storage_middleware(data_dir: Path) -> Middleware:
    """Answers 507 JSON for a storage failure any handler let through."""

    @web.middleware
    async def storage_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            return await handler(request)
        except (OSError, StorageError, WriteFailed, sqlite3.OperationalError) as exc:
            error = storage_error_of(exc, data_dir)
            if error is None:
                raise
            logger.warning("%s %s: %s", request.method, request.path, error)
            return disk_full_response(error)

    return storage_errors
