"""Checks, confidence scores and the validation cache, on real files in a temporary workspace."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundry.orchestration.taskfile import Check, Criterion, Thresholds
from foundry.orchestration.validation import (
    Checker,
    Evidence,
    ValidationCache,
    claims_done,
    score,
    validate,
)

THRESHOLDS = Thresholds()


def criterion(text: str, *checks: dict) -> Criterion:  # type: ignore[type-arg]
    return Criterion(text=text, checks=[Check.model_validate(c) for c in checks])


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "shapes.py").write_text(
        "import math\n\nclass Circle:\n    def area(self):\n        return math.pi * self.r ** 2\n"
    )
    (tmp_path / "test_shapes.py").write_text("def test_ok():\n    assert 1 + 1 == 2\n")
    return tmp_path


def test_the_score_is_the_weighted_mean_of_the_factors_present() -> None:
    evidence = [
        Evidence(factor="code", value=1.0, detail="ast"),
        Evidence(factor="code", value=0.4, detail="keywords"),
        Evidence(factor="tests", value=0.0, detail="failed"),
        Evidence(factor="files", value=1.0, detail="present"),
    ]
    # code 0.7 * 40 = 28, tests 0, files 20, claim 10 -> 58 / 100
    result = score("c", evidence, claimed=True, thresholds=THRESHOLDS)
    assert (result.score, result.level) == (58.0, "uncertain")
    assert score("c", evidence[:1], claimed=False, thresholds=THRESHOLDS).score == 80.0
    assert score("c", [], claimed=True, thresholds=THRESHOLDS).score == 20.0  # a claim alone fails
    assert score("c", evidence[2:3], claimed=True, thresholds=THRESHOLDS).level == "fail"


def test_a_claim_is_read_from_the_status_line_first() -> None:
    assert claims_done("All done.")
    assert not claims_done("I could not finish it.")
    assert not claims_done("Done with part one. STATUS: failed: no access")
    assert claims_done("Nothing to add. STATUS: done")


async def test_each_kind_of_check_on_real_files(workspace: Path) -> None:
    checks = [
        {"ast": {"file": "pkg/*.py", "class": "Circle", "imports": "math"}},
        {"ast": {"function": "perimeter"}},
        {"keywords": ["math.pi", "radius"], "within": "pkg/*.py"},
        {"files": ["pkg/shapes.py", "README.md"]},
        {"dirs": ["pkg"]},
        {"command": "python -c 'import sys; sys.exit(3)'"},
        {"command": "python -m pytest -q test_shapes.py"},
        {"reply": ["circle", "area"]},
    ]
    checker = Checker(workspace)
    checker.refresh()
    results = [await checker.run(Check.model_validate(c), "The Circle has an area") for c in checks]
    assert [(r.factor, r.value) for r in results] == [
        ("code", 1.0),
        ("code", 0.0),
        ("code", 0.4),
        ("files", 0.5),
        ("files", 1.0),
        ("tests", 0.0),
        ("tests", 1.0),
        ("code", 1.0),
    ]
    assert "pkg/shapes.py:1" in results[0].detail
    assert "missing README.md" in results[3].detail and "exited with 3" in results[5].detail


async def test_unchanged_files_hit_the_cache_and_a_change_misses_it(workspace: Path) -> None:
    cache = ValidationCache()
    checker = Checker(workspace)
    criteria = [
        criterion("Circle exists", {"ast": {"file": "pkg/*.py", "class": "Circle"}}),
        criterion("tests pass", {"command": "python -m pytest -q test_shapes.py"}),
    ]
    first = await validate(criteria, checker, "done", THRESHOLDS, cache)
    second = await validate(criteria, checker, "done", THRESHOLDS, cache)
    assert [s.cached for s in first] == [False, False]
    assert [s.cached for s in second] == [True, True]
    assert [s.score for s in second] == [s.score for s in first]

    (workspace / "pkg" / "shapes.py").write_text("class Square:\n    pass\n")
    third = await validate(criteria, checker, "done", THRESHOLDS, cache)
    assert [s.cached for s in third] == [False, False]  # the test run reads every file
    assert third[0].level == "fail" and cache.hits == 2


def test_a_criterion_without_checks_looks_for_its_own_words() -> None:
    checks = criterion("`parse_config` handles empty files").effective_checks()
    assert checks[0].keywords == ["parse_config"]
    plain = criterion("README explains installation").effective_checks()
    assert plain[0].keywords == ["README", "explains", "installation"]


async def test_a_file_that_does_not_parse_is_named(workspace: Path) -> None:
    (workspace / "pkg" / "broken.py").write_text("def (:\n")
    checker = Checker(workspace)
    checker.refresh()
    result = await checker.run(
        Check.model_validate({"ast": {"file": "pkg/broken.py", "function": "f"}}), ""
    )
    assert result.value == 0.0 and "pkg/broken.py does not parse" in result.detail


async def test_a_file_that_appears_is_seen_although_the_check_was_cached(workspace: Path) -> None:
    cache = ValidationCache()
    checker = Checker(workspace)
    criteria = [criterion("there is a README", {"files": ["README.md"]}, {"dirs": ["docs"]})]
    before = await validate(criteria, checker, "done", THRESHOLDS, cache)
    (workspace / "README.md").write_text("# shapes\n")
    (workspace / "docs").mkdir()
    after = await validate(criteria, checker, "done", THRESHOLDS, cache)
    assert (before[0].level, after[0].level, after[0].cached) == ("fail", "pass", False)
    again = await validate(criteria, checker, "done", THRESHOLDS, cache)
    assert again[0].cached and again[0].level == "pass"


def test_caches_and_virtual_environments_are_not_walked(workspace: Path) -> None:
    from foundry.orchestration.validation import workspace_files

    (workspace / ".venv" / "lib").mkdir(parents=True)
    (workspace / ".venv" / "lib" / "big.py").write_text("x = 1\n")
    (workspace / "pkg" / "__pycache__").mkdir()
    (workspace / "pkg" / "__pycache__" / "shapes.pyc").write_bytes(b"\0")
    assert workspace_files(workspace) == ["pkg/shapes.py", "test_shapes.py"]
