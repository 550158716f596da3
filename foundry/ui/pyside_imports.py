"""PySide6's import hook, made to keep nothing.

Once imported, PySide6 checks every module imported after it for the text "PySide6" in its source,
to know which modules may switch on its opt-in `__feature__`s. It reads the source through
`inspect.getsource`, which keeps each module's lines in `linecache` for as long as the process
runs: 1,400 modules and 45 MiB of the app's memory after a reply, and 0.2 s of reading and
splitting lines at start-up. The same check on the file's bytes keeps nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import PySide6  # noqa: F401  (installs the hook adjusted here)

FEATURE_MODULE = "shibokensupport.feature"


def check_sources_without_keeping_them() -> None:
    """Replace PySide6's check by the same check made on the module's file; modules without a
    `.py` file (extensions, sources inside archives) still get PySide6's own."""
    feature = sys.modules.get(FEATURE_MODULE)
    pyside_check = getattr(feature, "_mod_uses_pyside", None)
    if pyside_check is None or hasattr(pyside_check, "__wrapped__"):
        return  # a PySide6 without this hook, or replaced already
    feature._mod_uses_pyside = _file_check(pyside_check)  # type: ignore[union-attr]


def _file_check(pyside_check: Callable[[ModuleType], bool]) -> Callable[[ModuleType], bool]:
    def names_pyside(module: ModuleType) -> bool:
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".py"):
            try:
                return b"PySide6" in Path(path).read_bytes()
            except OSError:
                pass
        return pyside_check(module)

    names_pyside.__wrapped__ = pyside_check  # type: ignore[attr-defined]
    return names_pyside
