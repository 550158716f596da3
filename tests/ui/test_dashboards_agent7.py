"""The dashboards over the store of a run of bench/agent7.py: agent7's decisions drawn at the
supervisor level (L1) with its confidence, the one it escalated at a person's; the picture saved
as agent7-l1.png (and in docs/screenshots with FOUNDRY_UPDATE_SCREENSHOTS=1).

agent7 is not part of Foundry: this runs where AGENT7_DIR and AGENT7_PYTHON are set (see
bench/agent7.py), and is skipped elsewhere."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from bench.agent7 import HOW_TO_GET, WRITES, run_database
from foundry.metrics import DECISION_LEVELS, OUTCOMES
from foundry.metrics.terms import L1_SUPERVISOR
from foundry.runtime.engine import Engine
from foundry.store import Store
from foundry.ui.bridge import EngineBridge
from foundry.ui.dashboards import DashboardController, DashboardView
from tests.api.test_agent7 import AGENT7, PROBLEM, PYTHON
from tests.processes import run_to_the_end

from .conftest import save_screenshot

BENCH = Path(__file__).resolve().parents[2] / "bench" / "agent7.py"
BENCH_S = 300.0

pytestmark = pytest.mark.skipif(
    PROBLEM is not None, reason=f"agent7 is not here: {PROBLEM}. {HOW_TO_GET}"
)


@pytest.fixture
def bench_bridge(tmp_path: Path) -> Iterator[EngineBridge]:
    """An engine over the store the bench left, as the app opens it."""
    assert AGENT7 is not None and PYTHON is not None
    folder = tmp_path / "run"
    command = [sys.executable, str(BENCH), "--agent7", str(AGENT7), "--python", PYTHON]
    done = run_to_the_end([*command, "--keep", str(folder)], BENCH_S)
    assert done.returncode == 0, done.stdout + done.stderr
    store = Store.open(run_database(folder))
    engine = Engine(store).start()
    connected = EngineBridge(engine)
    yield connected
    connected.close()
    engine.stop()
    store.close()


def decided(view: DashboardView, level: str, outcome: str) -> int:
    counts = view.resolutions.counts
    return int(counts[DECISION_LEVELS.index(level), OUTCOMES.index(outcome)])


def test_agent7s_decisions_are_drawn_at_the_supervisor_level(
    qtbot: QtBot, bench_bridge: EngineBridge, tmp_path: Path
) -> None:
    view = DashboardView()
    qtbot.addWidget(view)
    controller = DashboardController(view, bench_bridge, poll_ms=100)
    view.resize(1280, 1640)
    view.show()
    try:
        qtbot.waitUntil(lambda: bool(controller.figures.resolutions), timeout=20000)
        qtbot.waitUntil(lambda: decided(view, "supervisor", "allowed") == WRITES, timeout=20000)
        assert decided(view, "supervisor", "denied") == 1  # the write under /etc
        assert decided(view, "human", "denied") == 1  # what agent7 escalated, a person denied
        assert decided(view, "policy", "allowed") == 1  # the read
        total = WRITES + 3
        assert (
            view.resolutions.summary.text() == f"{total} decisions · {100 / total:.1f} % by a human"
        )
        # agent7's 92 % and 99 %, both in the histogram's last bin, as the L1 supervisor's
        histogram = view.confidence_histogram.counts[L1_SUPERVISOR]
        assert list(histogram) == [0] * 9 + [WRITES + 1]
        assert view.human_waits.summary.text().startswith("1 approval ·")  # the person's only
        save_screenshot(view, tmp_path, "agent7-l1.png")
    finally:
        controller.close()
