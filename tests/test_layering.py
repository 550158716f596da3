"""Which of Foundry's packages may import which: the rules of docs/architecture.md, read from the
source (every import statement, including those inside functions and under TYPE_CHECKING)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

import foundry

PACKAGE = Path(foundry.__file__).parent

# (importer, imported): no module of the first package may import any of the second
LOWER = (
    "agent",
    "llm",
    "tools",
    "store",
    "session",
    "supervision",
    "orchestration",
    "metrics",
    "telemetry",
)
HIGHER = ("runtime", "api", "gateway", "ui", "cli")
FORBIDDEN = [
    *((f"foundry.{low}", f"foundry.{high}") for low in LOWER for high in HIGHER),
    ("foundry.runtime", "foundry.gateway"),  # the gateway uses the runtime, not the other way
    ("foundry.runtime", "foundry.api"),
    ("foundry.runtime", "foundry.ui"),
    ("foundry.runtime", "foundry.cli"),
    ("foundry.api", "foundry.gateway"),
    ("foundry.api", "foundry.ui"),
    ("foundry.gateway", "foundry.ui"),
    ("foundry.tools", "foundry.session"),
    ("foundry.tools", "foundry.supervision"),
    ("foundry.store", "foundry.agent"),
    ("foundry.agent", "foundry.store"),
    ("foundry.ui", "foundry.store"),  # it goes through the runtime's services (approvals, ...)
]
QT = ("PySide6", "qasync", "pytestqt")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def imports_of(path: Path) -> frozenset[str]:
    """The absolute names of every module `path` imports (relative imports resolved)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return frozenset(names)


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def imports_across(importer: str, imported: str) -> list[str]:
    """`module imports name` for each import by a module of `importer` of one of `imported`."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        if within(module, importer):
            found += [
                f"{module} imports {name}" for name in imports_of(path) if within(name, imported)
            ]
    return sorted(set(found))


def test_the_rules_read_imports_they_mean_to() -> None:
    assert imports_across("foundry.gateway", "foundry.runtime")  # gateway is above runtime
    assert imports_across("foundry.ui", "foundry.runtime")


@pytest.mark.parametrize(("importer", "imported"), FORBIDDEN)
def test_a_lower_package_never_imports_a_higher_one(importer: str, imported: str) -> None:
    assert imports_across(importer, imported) == []


def test_only_the_ui_imports_qt() -> None:
    outside = [
        violation
        for toolkit in QT
        for violation in imports_across("foundry", toolkit)
        if not violation.startswith("foundry.ui")
    ]
    assert outside == []
