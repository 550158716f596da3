"""Mutated agent files never hang, crash or change: reading gives an agent or clean problems."""

from __future__ import annotations

import contextlib
import os
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from foundry.agent import AgentDocument, AgentError, read_agent, save_agent, validate_agent
from foundry.agent.limits import MAX_FILE_BYTES

from .samples import tree_digest, write_folder_agent, write_yaml_agent

SEED = 20251123
SECONDS = 5.0
FOLDER_TARGETS = ("tsagent.json", "prompt.md", "rules/brevity.mdt", "refs/glossary.mdt")
YAML_TARGET = "ledger.yaml"
JSON_TARGETS = ("tsagent.json", "rules/brevity.mdt")
YAML_TARGETS = (YAML_TARGET, "refs/glossary.mdt")
T = TypeVar("T")


@dataclass(frozen=True)
class Mutant:
    """One change to one file of a freshly written sample agent."""

    name: str
    target: str  # a file of the folder agent, or the YAML agent's file
    change: Callable[[Path], None]

    @property
    def is_yaml_agent(self) -> bool:
        return self.target == YAML_TARGET


def _rewrite(edit: Callable[[bytes], bytes]) -> Callable[[Path], None]:
    def change(path: Path) -> None:
        path.write_bytes(edit(path.read_bytes()))

    return change


def _flip(positions: list[tuple[float, int]]) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        mutable = bytearray(data)
        for where, mask in positions:
            mutable[int(where * len(mutable))] ^= mask
        return bytes(mutable)

    return edit


def _truncate(fraction: float) -> Callable[[bytes], bytes]:
    return lambda data: data[: int(fraction * len(data))]


def _encode(encoding: str, bom: bytes = b"") -> Callable[[bytes], bytes]:
    return lambda data: bom + data.decode().replace("e", "é", 1).encode(encoding)


def _insert(fraction: float, payload: bytes) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        at = int(fraction * len(data))
        return data[:at] + payload + data[at:]

    return edit


def _after_first(marker: bytes, payload: bytes) -> Callable[[bytes], bytes]:
    def edit(data: bytes) -> bytes:
        at = data.index(marker) + len(marker)
        return data[:at] + payload + data[at:]

    return edit


def _sized(size: int, filler: bytes) -> Callable[[bytes], bytes]:
    """The file grown to `size` bytes with `filler` before its end (JSON: as a new string)."""

    def edit(data: bytes) -> bytes:
        if data.lstrip().startswith(b"{") and b"---" not in data[:4]:
            head = data.index(b"{") + 1
            room = size - len(data) - len(b'"pad": "",')
            return data[:head] + b'"pad": "' + filler * room + b'",' + data[head:]
        return data + filler * (size - len(data))

    return edit


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _dev_zero(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


def _loop(path: Path) -> None:
    path.unlink()
    path.symlink_to(path.name)


def _dangling(path: Path) -> None:
    path.unlink()
    path.symlink_to("missing-file")


def _alias_bomb() -> bytes:
    lines = ["l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]" for n in range(1, 9)]
    return ("\n".join(lines) + "\n").encode()


def _json_payloads() -> dict[str, bytes]:
    return {
        "deep": b'"deep": ' + b"[" * 10_000 + b"]" * 10_000 + b",",
        "just-too-deep": b'"deep": ' + b"[" * 100 + b"]" * 100 + b",",
        "long-int": b'"big": ' + b"7" * 4301 + b",",
        "nan": b'"odd": NaN,',
        "huge-float": b'"odd": 1e999,',
        "control": b'"odd": "a\x01b",',
    }


def _yaml_payloads() -> dict[str, bytes]:
    return {
        "deep": b"deep: " + b"[" * 10_000 + b"]" * 10_000 + b"\n",
        "deep-block": b"".join(b"  " * n + b"k:\n" for n in range(150)),
        "alias-bomb": _alias_bomb(),
        "recursive-alias": b"loop: &l [*l]\n",
        "recursive-mapping": b"loop: &m {self: *m}\n",
        "many-aliases": b"v: &v 1\nmany: [" + b", ".join([b"*v"] * 101) + b"]\n",
        "undefined-alias": b"u: *nowhere\n",
        "long-int": b"big: " + b"7" * 4301 + b"\n",
        "long-hex": b"big: 0x" + b"f" * 4000 + b"\n",
        "python-tag": b"odd: !!python/object/apply:os.system [ls]\n",
        "bad-int": b"odd: !!int twelve\n",
        "set": b"odd: !!set {a, b}\n",
        "timestamp": b"when: 2025-04-07T17:32:29.081Z\n",
        "directive": b"%YAML 1.1\n---\n",
        "tab-indent": b"odd:\n\t- x\n",
    }


def _mutants(rng: random.Random) -> list[Mutant]:
    mutants: list[Mutant] = []
    targets = (*FOLDER_TARGETS, YAML_TARGET)
    for target in targets:
        for n in range(8):
            flips = [(rng.random(), rng.randrange(1, 256)) for _ in range(rng.randrange(1, 4))]
            mutants.append(Mutant(f"flip-{n}", target, _rewrite(_flip(flips))))
        for fraction in (0.0, rng.random(), rng.random(), 0.999):
            mutants.append(
                Mutant(f"truncate-{fraction:.3f}", target, _rewrite(_truncate(fraction)))
            )
        for name, edit in _encodings(rng).items():
            mutants.append(Mutant(name, target, _rewrite(edit)))
        for n, content in enumerate(WHOLE_FILES):
            mutants.append(Mutant(f"whole-{n}", target, _rewrite(lambda _, new=content: new)))
        mutants.append(Mutant("near-limit", target, _rewrite(_sized(MAX_FILE_BYTES - 1024, b"a"))))
        mutants.append(Mutant("over-limit", target, _rewrite(_sized(MAX_FILE_BYTES + 1, b"a"))))
        for name, make in KINDS.items():
            mutants.append(Mutant(name, target, make))
    for target in JSON_TARGETS:
        for name, payload in _json_payloads().items():
            mutants.append(Mutant(f"json-{name}", target, _rewrite(_after_first(b"{", payload))))
    for target in YAML_TARGETS:
        marker = b"---\n" if target.endswith(".mdt") else b"supervisors: []\n"
        for name, payload in _yaml_payloads().items():
            mutants.append(Mutant(f"yaml-{name}", target, _rewrite(_after_first(marker, payload))))
    return mutants


def _encodings(rng: random.Random) -> dict[str, Callable[[bytes], bytes]]:
    return {
        "latin-1": _encode("latin-1"),
        "utf-16-le": _encode("utf-16-le"),
        "utf-16-be": _encode("utf-16-be"),
        "utf-16-le-bom": _encode("utf-16-le", b"\xff\xfe"),
        "utf-16-be-bom": _encode("utf-16-be", b"\xfe\xff"),
        "utf-32": _encode("utf-32"),
        "utf-8-bom": _encode("utf-8", b"\xef\xbb\xbf"),
        "invalid-utf-8": _insert(rng.random(), b"\xff"),
        "overlong-utf-8": _insert(rng.random(), b"\xc0\xaf"),
        "surrogate-utf-8": _insert(rng.random(), b"\xed\xa0\x80"),
        "nul": _insert(rng.random(), b"\x00"),
    }


WHOLE_FILES = (b"", b"5", b'"text"', b"null", b"[]", b"---", b"---\n---\n", b"\xef\xbb\xbf")
KINDS: dict[str, Callable[[Path], None]] = {
    "fifo": _fifo,
    "folder": _folder,
    "dev-zero": _dev_zero,
    "symlink-loop": _loop,
    "dangling-symlink": _dangling,
}
MUTANTS = _mutants(random.Random(SEED))


def within(seconds: float, call: Callable[[], T]) -> T:
    """`call()`'s result, failing the test if it takes longer (a daemon thread keeps a hang)."""
    outcome: dict[str, Any] = {}

    def run() -> None:
        try:
            outcome["result"] = call()
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"still running after {seconds} s")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]  # type: ignore[no-any-return]


def save_or_refuse(document: AgentDocument) -> None:
    with contextlib.suppress(AgentError):  # a save may refuse: broken files are never written
        save_agent(document)


def test_there_are_enough_mutants_of_both_formats() -> None:
    assert len(MUTANTS) >= 100
    assert sum(mutant.is_yaml_agent for mutant in MUTANTS) >= 30
    assert len({(mutant.name, mutant.target) for mutant in MUTANTS}) == len(MUTANTS)


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda mutant: f"{mutant.target}:{mutant.name}")
def test_a_mutated_agent_reads_cleanly_and_stays_untouched(mutant: Mutant, tmp_path: Path) -> None:
    if mutant.is_yaml_agent:
        agent = write_yaml_agent(tmp_path / YAML_TARGET)
        mutant.change(agent)
    else:
        agent = write_folder_agent(tmp_path / "agent")
        mutant.change(agent / mutant.target)
    before = tree_digest(tmp_path)

    problems = within(SECONDS, lambda: validate_agent(agent))
    for problem in problems:
        assert "\n" not in str(problem) and len(str(problem)) < 1000, problem
    assert tree_digest(tmp_path) == before

    document = within(SECONDS, lambda: read_agent(agent))
    if document.agent is None:
        assert document.problems, "no agent and no problem to say why"
        return
    within(SECONDS, lambda: save_or_refuse(document))
    assert tree_digest(tmp_path) == before, "a save without changes wrote something"

    document = read_agent(agent)
    assert document.agent is not None
    document.agent.metadata.description = "Edited by the fuzz test."
    broken = {str(path.relative_to(tmp_path.parent)) for path in document.broken_files}
    within(SECONDS, lambda: save_or_refuse(document))
    after = tree_digest(tmp_path)
    for name in broken:
        assert after.get(name) == before.get(name), f"{name} was changed"
