"""Fails when the environment holds a package the lock does not pin, or another version of it.

`pip install -c constraints.txt` installs a dependency the lock forgot at whatever version is
newest, silently; this catches a lock that fell behind pyproject.toml.
"""

from __future__ import annotations

import sys
from importlib.metadata import distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

NOT_LOCKED = {"foundry-studio", "pip", "setuptools", "wheel"}


def locked_versions(lock: Path) -> dict[str, str]:
    """The exact version the lock pins for each package that applies to this interpreter."""
    pins: dict[str, str] = {}
    for line in lock.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate():
            pins[canonicalize_name(requirement.name)] = str(requirement.specifier).removeprefix("==")
    return pins


def main(lock: Path) -> int:
    pins = locked_versions(lock)
    problems = []
    for dist in distributions():
        name = canonicalize_name(dist.metadata["Name"])
        if name in NOT_LOCKED:
            continue
        if name not in pins:
            problems.append(f"{name} {dist.version} is installed but not in {lock}")
        elif pins[name] != dist.version:
            problems.append(f"{name} is {dist.version}, the lock says {pins[name]}")
    for problem in sorted(problems):
        print(problem)
    if problems:
        print(f"refresh the lock with the command at the top of {lock}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
