"""Running the server: a scrubbed access log, the token, logging.

The runtime file the server leaves for its clients is in `runtime_file.py`; the token kept in
the data dir, in `token_store.py`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger

from sidemirror.log_filter import install_redaction
from sidemirror.token_store import load_token


def resolve_token(explicit: str | None, data_dir: Path) -> str:
    """The token given (settings, $SIDEMIRROR_TOKEN), else the one kept in the data dir."""
    return explicit or os.environ.get("SIDEMIRROR_TOKEN") or load_token(data_dir)


class ScrubbedAccessLogger(AbstractAccessLogger):
    """Logs method, path and status, never the query string (tickets, tokens) or headers."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
        self.logger.info(
            "%s %s %s %.1fms", request.method, request.path, response.status, time * 1000
        )


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    install_redaction(logging.getLogger())
