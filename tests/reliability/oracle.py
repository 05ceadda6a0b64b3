"""What a transcript should read as, projected as the server sends it (ids aside)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sidemirror.core.hub import Hub
from sidemirror.core.projection import Projector
from sidemirror.core.store import Store

from tests.transcripts import positional_parse


def without_id(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "id"}


def clean_parse(path: Path) -> list[dict[str, Any]]:
    """The projected items of a clean parse of the whole file (tests/transcripts.py)."""
    store = Store(Hub(), Projector())
    log = store.ensure_session(store.ensure_workspace("/x", "claude"), "s", "claude", "e")
    for item in positional_parse(path.read_bytes()):
        store.append(log, item)
    return [without_id(json.loads(w)) for w in store.iter_wire(log, 0)]
