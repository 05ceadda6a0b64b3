"""Every source and format the server knows, in one place.

`CONVERTERS` maps each `format=` value of `/api/ingest` to its converter; `build_sources` makes
the file-following sources that `serve` runs. A new agent format is added here (and in its own
sub-package); nothing else lists formats.
"""

from __future__ import annotations

from functools import partial

from sidemirror.core.store import Store
from sidemirror.settings import Settings
from sidemirror.sources.autodetect import AutoConverter
from sidemirror.sources.base import Converter, ConverterFactory, Source
from sidemirror.sources.claude.demo import DemoSource
from sidemirror.sources.claude.source import ClaudeSource
from sidemirror.sources.claude.stream_json import StreamJsonConverter
from sidemirror.sources.codex.exec import CodexExecConverter, CodexRolloutConverter
from sidemirror.sources.codex.source import CodexSource
from sidemirror.sources.events import EventsConverter


def _acp(default_session: str) -> Converter:
    # Imported when an ACP stream first arrives: its models are ~50 ms of every start.
    from sidemirror.sources.acp.converter import AcpConverter

    return AcpConverter(default_session)


# What `format=auto` can recognise from a first record (autodetect.detect names these).
DETECTABLE: dict[str, ConverterFactory] = {
    "events": EventsConverter,
    "stream-json": StreamJsonConverter,
    "acp": _acp,
    "codex-exec": CodexExecConverter,
    "codex-rollout": CodexRolloutConverter,
}

# The `format=` values of `/api/ingest` and `sidemirror ingest --format`.
CONVERTERS: dict[str, ConverterFactory] = {
    name: DETECTABLE[name] for name in ("events", "stream-json", "acp", "codex-exec")
}
CONVERTERS["auto"] = partial(AutoConverter, formats=DETECTABLE)


def build_sources(settings: Settings, store: Store) -> list[Source]:
    """The file-following sources `serve` runs, from its settings."""
    sources: list[Source] = []
    if settings.claude_dirs:
        sources.append(ClaudeSource(store, settings.claude_dirs, settings.data_dir))
    if settings.codex_dir is not None:
        sources.append(CodexSource(store, settings.codex_dir, settings.data_dir))
    if settings.demo:
        sources.append(DemoSource(store, settings.data_dir))
    return sources
