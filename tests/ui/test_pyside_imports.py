"""PySide6's import hook checks each new module's source and keeps none of it."""

import importlib
import linecache
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import foundry.ui  # noqa: F401  (adjusts the hook)
from foundry.ui.pyside_imports import FEATURE_MODULE


@pytest.fixture
def module_folder(tmp_path: Path) -> Iterator[Path]:
    sys.path.insert(0, str(tmp_path))
    yield tmp_path
    sys.path.remove(str(tmp_path))


def imported(folder: Path, name: str, source: str) -> int:
    """Import a new module of `source`; PySide6's verdict on it (0: it names PySide6)."""
    (folder / f"{name}.py").write_text(source)
    importlib.invalidate_caches()
    module = __import__(name)  # the hook is on the import statement, not importlib's calls
    try:
        verdict: int = sys.modules[FEATURE_MODULE].pyside_feature_dict[name]
        return verdict
    finally:
        del sys.modules[name]
        assert module.__file__ not in linecache.cache


def test_modules_imported_after_pyside_keep_no_source_lines(module_folder: Path) -> None:
    assert imported(module_folder, "plain_module_for_the_hook", "VALUE = 1\n") == -1
    naming = "from PySide6.QtCore import QObject\n"
    assert imported(module_folder, "qt_module_for_the_hook", naming) == 0


def test_a_source_naming_pyside_in_a_string_counts_as_pyside_s_own_check_does(
    module_folder: Path,
) -> None:
    assert imported(module_folder, "mentions_qt_for_the_hook", 'NAME = "PySide6"\n') == 0
