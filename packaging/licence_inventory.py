"""The licences of what the bundle ships, for the .deb's copyright file (DEP-5).

    build/venv/bin/python packaging/licence_inventory.py BUNDLE TEMPLATE

Prints TEMPLATE (packaging/debian-copyright) with its placeholders filled in:
@DISTRIBUTIONS@ by the Python distributions installed in this environment (the ones the bundle
is made of), each with the licence its metadata declares; @DEBIAN_LIBRARIES@ by the Debian
packages whose libraries PyInstaller copied into BUNDLE; @PSF_LICENSE@ by the Python Software
Foundation licence from this Python's own LICENSE.txt. Each value comes from the metadata as
the distribution's authors wrote it; nothing is guessed.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from importlib.metadata import Distribution, distributions
from pathlib import Path

# What makes the bundle but is not in it.
BUILD_TOOLS = {"pip", "setuptools", "wheel", "pyinstaller", "pyinstaller-hooks-contrib", "altgraph"}
PROJECT = "foundry-studio"
PSF_START = "PYTHON SOFTWARE FOUNDATION LICENSE VERSION 2"
PSF_END = "BEOPEN.COM LICENSE AGREEMENT"


def declared_licence(distribution: Distribution) -> str:
    """License-Expression, else a one-line License field, else the licence classifiers."""
    metadata = distribution.metadata
    expression = metadata["License-Expression"]
    if expression:
        return str(expression)
    field = (metadata["License"] or "").strip()
    if field and "\n" not in field and len(field) <= 80:
        return field
    classifiers = [
        str(value).split(" :: ")[-1]
        for value in metadata.get_all("Classifier") or []
        if str(value).startswith("License ::")
    ]
    return " / ".join(classifiers) or "not declared in its metadata"


def distribution_lines() -> list[str]:
    seen = {}
    for distribution in distributions():
        name = distribution.metadata["Name"]
        key = name.lower().replace("_", "-")
        if key not in BUILD_TOOLS and key != PROJECT:
            seen[key] = f"{name} {distribution.version}: {declared_licence(distribution)}"
    return [seen[key] for key in sorted(seen)]


def debian_library_lines(bundle: Path) -> list[str]:
    """`package: file, ...` for the libraries in the bundle's top folder from Debian packages."""
    names = sorted(
        path.name
        for path in (bundle / "_internal").glob("lib*.so*")
        if path.is_file() and not path.is_symlink()
    )
    patterns = [f"/*/{name}" for name in names]
    result = subprocess.run(["dpkg-query", "-S", *patterns], capture_output=True, text=True)
    packages: dict[str, set[str]] = {}
    for line in result.stdout.splitlines():
        owner, _, path = line.partition(": ")
        for package in owner.split(", "):
            packages.setdefault(package.split(":")[0], set()).add(Path(path).name)
    return [f"{package}: {', '.join(sorted(files))}" for package, files in sorted(packages.items())]


def psf_licence() -> list[str]:
    text = (Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt").read_text(encoding="utf-8")
    start = text.index(PSF_START)
    return text[start : text.index(PSF_END, start)].strip().splitlines()


def continuation(lines: list[str]) -> str:
    """Lines as a DEP-5 field's continuation: indented by one space, empty lines as ` .`."""
    return "\n".join(f" {line}" if line.strip() else " ." for line in lines)


def main() -> int:
    bundle, template = Path(sys.argv[1]), Path(sys.argv[2])
    text = template.read_text(encoding="utf-8")
    for placeholder, lines in (
        ("@DISTRIBUTIONS@", distribution_lines()),
        ("@DEBIAN_LIBRARIES@", debian_library_lines(bundle)),
        ("@PSF_LICENSE@", psf_licence()),
    ):
        text = text.replace(f" {placeholder}", continuation(lines))
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
