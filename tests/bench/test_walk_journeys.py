"""bench/walk.py's journeys: each has a name, a title and a step (the walk itself runs under Xvfb,
not in the suite)."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

WALK = Path(__file__).resolve().parents[2] / "bench" / "walk.py"


def walk_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_walk", WALK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # (its dataclasses look their module up)
    spec.loader.exec_module(module)
    return module


def test_every_journey_has_a_name_a_title_and_a_step() -> None:
    journeys = walk_module().JOURNEYS
    assert len(journeys) == 7
    names = [journey.name for journey in journeys]
    assert all(names) and len(set(names)) == len(names)
    assert all(journey.title for journey in journeys)
    assert all(inspect.iscoroutinefunction(journey.run) for journey in journeys)
