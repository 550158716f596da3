"""What a bundle's ELF files show a distribution: what it would refuse, and what they need.

    python3 packaging/elf_audit.py strip BUNDLE     # debug info out of BUNDLE/_internal
    python3 packaging/elf_audit.py check BUNDLE     # exit 1, one line per problem
    python3 packaging/elf_audit.py unbundle BUNDLE  # remove the copies of Debian's libraries
    python3 packaging/elf_audit.py depends BUNDLE   # the Debian packages, as a Depends value

`strip` strips each library as dh_strip does (--strip-unneeded), and keeps a file as it was
when its stripped copy would not load: strip moves the segments of a library that patchelf
edited (auditwheel's, in the wheels' `.libs` folders) off their page alignment, and the loader
refuses it ("ELF load command address/offset not page-aligned"). `unbundle` removes,
for the .deb, the libraries PyInstaller copied from Debian packages into the bundle's top folder
(not libpython, which PyInstaller's program loads by its path), so that the package takes them
from the system and Debian's updates reach it. `check` refuses misaligned segments, a search
path (RUNPATH or RPATH) that is not `$ORIGIN`-relative (a build
machine's folder, which the installed program would search first), debug sections, and
symbolic links that lead nowhere. `depends` takes the libraries the ELF files need (NEEDED)
that the bundle does not carry, finds each where the dynamic loader would (`ldconfig -p`) and
names the Debian package that installed it (`dpkg-query -S`); libc6 gets the newest glibc
symbol version the files ask for. A library found in neither place is a problem: the bundle
would not start on a machine like this one.

Run by packaging/build-linux.sh with the system's Python; it needs binutils' readelf.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ELF_MAGIC = b"\x7fELF"
BATCH = 200  # files per readelf run
SEARCH_PATH = re.compile(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]")
NEEDED = re.compile(r"\(NEEDED\)\s+Shared library: \[(.*)\]")
SECTION = re.compile(r"^\s*\[\s*\d+\]\s+(\S+)", re.MULTILINE)
GLIBC_VERSION = re.compile(r"Name: GLIBC_([0-9][0-9.]*)")
LDCONFIG_ENTRY = re.compile(r"^\s+(\S+) \(([^)]*)\) => (\S+)$", re.MULTILINE)
LOAD_SEGMENT = re.compile(r"^\s*LOAD\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s", re.MULTILINE)
KEPT_COPIES = ("libpython",)  # loaded by PyInstaller's program from the bundle, by path
PAGE = 4096  # the loader wants each segment's address and file offset equal modulo a page


@dataclass
class ElfFile:
    path: Path
    search_paths: list[str] = field(default_factory=list)
    needed: list[str] = field(default_factory=list)
    debug_sections: list[str] = field(default_factory=list)
    glibc_versions: list[str] = field(default_factory=list)
    misaligned: bool = False


def elf_paths(root: Path) -> list[Path]:
    paths = []
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as file:
                if file.read(4) == ELF_MAGIC:
                    paths.append(path)
    return paths


def read_elf_files(root: Path) -> list[ElfFile]:
    """Every ELF file under `root`, read with readelf a batch at a time."""
    paths = elf_paths(root)
    files: list[ElfFile] = []
    for start in range(0, len(paths), BATCH):
        batch = paths[start : start + BATCH]
        files.extend(_read_batch(batch))
    return files


def _read_batch(paths: list[Path]) -> Iterator[ElfFile]:
    # With several files readelf prints "File: NAME" before each; with one, nothing.
    arguments = ["readelf", "--wide", "--dynamic", "--section-headers", "--version-info", "-l"]
    text = subprocess.run(
        [*arguments, *map(str, paths)], capture_output=True, text=True, check=True
    ).stdout
    parts = re.split(r"^File: (.*)$", text, flags=re.MULTILINE)
    reports = dict(zip(parts[1::2], parts[2::2], strict=True)) if len(paths) > 1 else None
    for path in paths:
        report = text if reports is None else reports.get(str(path), "")
        yield _parse(path, report)


def _parse(path: Path, report: str) -> ElfFile:
    search_paths = [part for line in SEARCH_PATH.findall(report) for part in line.split(":")]
    sections = SECTION.findall(report)
    return ElfFile(
        path=path,
        search_paths=search_paths,
        needed=NEEDED.findall(report),
        debug_sections=[name for name in sections if name.startswith((".debug", ".zdebug"))],
        glibc_versions=GLIBC_VERSION.findall(report),
        misaligned=_misaligned(report),
    )


def _misaligned(report: str) -> bool:
    segments = LOAD_SEGMENT.findall(report)
    return any((int(offset, 16) - int(address, 16)) % PAGE for offset, address in segments)


def strip_bundle(root: Path) -> list[str]:
    """Strip every ELF file under root/_internal that stays loadable; the ones kept as they were."""
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        results = pool.map(_strip_one, elf_paths(root / "_internal"))
    return [f"{path.relative_to(root)}: not stripped ({why})" for path, why in results if why]


def _strip_one(path: Path) -> tuple[Path, str]:
    stripped = path.with_name(path.name + ".stripped")
    done = subprocess.run(
        ["strip", "--strip-unneeded", "-o", str(stripped), str(path)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        stripped.unlink(missing_ok=True)
        return path, done.stderr.strip()
    if next(_read_batch([stripped])).misaligned:
        stripped.unlink()
        return path, "strip would move its segments off their page alignment"
    shutil.copymode(path, stripped)
    os.replace(stripped, path)
    return path, ""


def problems(root: Path) -> Iterator[str]:
    for elf in read_elf_files(root):
        where = elf.path.relative_to(root)
        for entry in elf.search_paths:
            if entry != "$ORIGIN" and not entry.startswith("$ORIGIN/"):
                yield f"{where}: searches {entry!r} for libraries (not $ORIGIN-relative)"
        if elf.debug_sections:
            yield f"{where}: has debug sections ({', '.join(elf.debug_sections)})"
        if elf.misaligned:
            yield f"{where}: a segment is not page-aligned (the loader refuses it)"
    for link in sorted(root.rglob("*")):
        if link.is_symlink() and not link.exists():
            target = os.readlink(link)
            yield f"{link.relative_to(root)}: symbolic link to {target}, which is missing"


def unbundle(root: Path) -> list[str]:
    """Remove the top folder's libraries that a Debian package installed here; their names."""
    architecture = dpkg_architecture()
    known = loader_paths()
    removed = []
    for path in sorted((root / "_internal").glob("lib*.so*")):
        if path.is_symlink() or not path.is_file() or path.name.startswith(KEPT_COPIES):
            continue
        if path.name in known and owning_package(known[path.name], architecture):
            path.unlink()
            removed.append(path.name)
    return removed


def dpkg_architecture() -> str:
    return subprocess.run(
        ["dpkg", "--print-architecture"], capture_output=True, text=True, check=True
    ).stdout.strip()


def system_libraries(root: Path, files: list[ElfFile]) -> dict[str, list[Path]]:
    """The libraries the files need that the bundle does not carry, with who needs each."""
    carried = {path.name for path in root.rglob("*")}
    wanted: dict[str, list[Path]] = {}
    for elf in files:
        for name in elf.needed:
            if name not in carried:
                wanted.setdefault(name, []).append(elf.path.relative_to(root))
    return dict(sorted(wanted.items()))


def loader_paths() -> dict[str, list[str]]:
    """Each library name the dynamic loader knows, with the files it would load for it."""
    text = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    found: dict[str, list[str]] = {}
    for name, _, path in LDCONFIG_ENTRY.findall(text):
        found.setdefault(name, []).append(path)
    return found


def owning_package(paths: list[str], architecture: str) -> str | None:
    """The package of this architecture that installed one of `paths`, without `:arch`."""
    candidates = {variant for path in paths for variant in _path_variants(path)}
    result = subprocess.run(
        ["dpkg-query", "-S", *sorted(candidates)], capture_output=True, text=True
    )
    for line in result.stdout.splitlines():
        packages = line.split(": ", 1)[0]
        for package in packages.split(", "):
            name, _, arch = package.partition(":")
            if arch in ("", architecture):
                return name
    return None


def _path_variants(path: str) -> list[str]:
    """A library's path as dpkg may have recorded it: merged /usr or not, links resolved."""
    real = os.path.realpath(path)
    variants = {path, real}
    for one in (path, real):
        if one.startswith("/usr/"):
            variants.add(one[len("/usr") :])
        else:
            variants.add("/usr" + one)
    return sorted(variants)


def debian_depends(root: Path) -> tuple[str, list[str]]:
    """The Depends value for the libraries the bundle takes from the system, and the problems."""
    files = read_elf_files(root)
    architecture = dpkg_architecture()
    known = loader_paths()
    packages: dict[str, list[str]] = {}
    missing = []
    for name, users in system_libraries(root, files).items():
        package = owning_package(known.get(name, []), architecture) if name in known else None
        if package is None:
            missing.append(f"{name} (needed by {users[0]}): neither in the bundle nor installed")
            continue
        packages.setdefault(package, []).append(name)
    for package, names in sorted(packages.items()):
        print(f"  {package}: {', '.join(names)}", file=sys.stderr)
    return _depends_value(packages, files), missing


def _depends_value(packages: dict[str, list[str]], files: list[ElfFile]) -> str:
    versions = {version for elf in files for version in elf.glibc_versions}
    newest = max(versions, key=lambda v: tuple(int(part) for part in v.split(".")), default="")
    entries = []
    for package in sorted(packages):
        if package == "libc6" and newest:
            entries.append(f"libc6 (>= {newest})")
        else:
            entries.append(package)
    return ", ".join(entries)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["strip", "check", "unbundle", "depends"])
    parser.add_argument("bundle", type=Path)
    args = parser.parse_args()
    if args.command == "strip":
        for kept in strip_bundle(args.bundle):
            print(f"elf_audit.py: {kept}", file=sys.stderr)
        return 0
    if args.command == "unbundle":
        removed = unbundle(args.bundle)
        print(f"took out {len(removed)} copies of Debian's libraries: {', '.join(removed)}")
        return 0
    if args.command == "check":
        found = list(problems(args.bundle))
    else:
        print("the libraries the bundle takes from the system, by package:", file=sys.stderr)
        depends, found = debian_depends(args.bundle)
        if not found:
            print(depends)
    for problem in found:
        print(f"elf_audit.py: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
