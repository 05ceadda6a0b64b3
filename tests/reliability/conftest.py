"""Reliability suite: `soak` tests (long runs) are deselected unless `-m` names `soak`."""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "soak: long reliability runs (scripts/soak); off by default")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "soak" in (config.option.markexpr or ""):  # `-m soak` (scripts/soak) decides
        return
    keep, drop = [], []
    for item in items:
        (drop if item.get_closest_marker("soak") else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
