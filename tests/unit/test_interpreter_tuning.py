"""`serve` bounds the interpreter's pauses before it starts the loop (cli/serving.py): a 1 ms GIL
switch interval, and the young generation collected every 20,000 objects, not CPython's 700."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest
from sidemirror.cli.serving import GC_YOUNG_OBJECTS, GIL_SWITCH_S, tune_interpreter


@pytest.fixture
def restored() -> Iterator[None]:
    thresholds, interval = gc.get_threshold(), sys.getswitchinterval()
    yield
    gc.set_threshold(*thresholds)
    sys.setswitchinterval(interval)


@pytest.mark.usefixtures("restored")
def test_serve_collects_young_objects_less_often_and_switches_threads_sooner() -> None:
    gc.set_threshold(700, 10, 10)  # CPython's defaults
    sys.setswitchinterval(0.005)
    tune_interpreter()
    assert gc.get_threshold() == (GC_YOUNG_OBJECTS, 10, 10)
    assert GC_YOUNG_OBJECTS > 700 and gc.isenabled()  # tuned, not turned off
    assert sys.getswitchinterval() == pytest.approx(GIL_SWITCH_S)
