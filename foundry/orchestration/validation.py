"""Validation of a task's criteria against its workspace, with a confidence score per criterion.

Each check yields evidence for one factor: code (keywords, Python AST patterns, words in the
answer), tests (a command that exits with 0), files (paths that must exist). The agent's own claim
is a factor too, weighted least. A criterion's score is the weighted mean of the factors it has
evidence for, 0-100; the thresholds turn it into pass, uncertain or fail. Results are cached by
the hashes of the files a criterion's checks look at, so unchanged files are not checked twice.
Words in the answer count only outside sentences that echo the goal or a criterion, and an answer
that repeats itself (one sentence over and over, hardly any distinct words) counts as no answer.
"""

from __future__ import annotations

import ast
import asyncio
import difflib
import fnmatch
import hashlib
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from foundry.orchestration.taskfile import (
    STOP_WORDS,
    Check,
    Criterion,
    Thresholds,
    significant_words,
)

Factor = Literal["code", "tests", "files", "claim"]
Level = Literal["pass", "uncertain", "fail"]
FACTOR_WEIGHTS: dict[str, float] = {"code": 40.0, "tests": 30.0, "files": 20.0, "claim": 10.0}
KEYWORD_STRENGTH = 0.8  # words found are weaker evidence than a parsed construct
IGNORED_PARTS = frozenset(
    {".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".venv", "node_modules"}
)
MAX_FILE_BYTES = 1_000_000
DONE = re.compile(r"\b(done|complete[d]?|implemented|created|added|finished|wrote|written)\b", re.I)
NOT_DONE = re.compile(
    r"\b(fail(ed)?|could ?n[o']t|cannot|can't|unable|not (yet )?(done|implemented))\b", re.I
)
ECHO_RATIO = 0.85  # difflib ratio at which a sentence is a near-copy of the goal or a criterion
ECHO_COVERAGE = 0.8  # share of a source's content words a sentence must repeat, adding none
MIN_REPEATS = 3  # a sentence said this often, in an answer of mostly repeats, is degenerate
MAX_DISTINCT_SHARE = 0.5  # distinct sentences / sentences at or below which repeats dominate
MIN_TOKENS_FOR_VARIETY = 40  # answers this long are judged by their share of distinct words
MIN_DISTINCT_TOKENS = 0.2  # distinct words / words below which an answer is degenerate
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
LIST_MARK = re.compile(r"^\s*(?:[-*>•]+|\d+[.)])\s*")
STATUS_LINE = re.compile(r"^\s*STATUS:", re.I)
WORD = re.compile(r"[a-z0-9]+")


class Evidence(BaseModel):
    model_config = ConfigDict(frozen=True)

    factor: Factor
    value: float  # 0..1
    detail: str
    files: tuple[str, ...] = ()


class CriterionScore(BaseModel):
    model_config = ConfigDict(frozen=True)

    criterion: str
    score: float
    level: Level
    factors: dict[str, float]
    evidence: tuple[Evidence, ...]
    cached: bool = False

    @property
    def failed_details(self) -> list[str]:
        return [e.detail for e in self.evidence if e.value < 1.0 and e.factor != "claim"]


def claims_done(reply: str) -> bool:
    """Whether the agent says it finished; the weakest evidence there is."""
    status = re.search(r"STATUS:\s*(\w+)", reply, re.I)
    if status:
        return status.group(1).lower() in ("done", "complete", "completed", "success")
    return bool(DONE.search(reply)) and not NOT_DONE.search(reply)


def score(
    criterion: str, evidence: Sequence[Evidence], claimed: bool, thresholds: Thresholds
) -> CriterionScore:
    """The weighted mean of the factors present, the claim always among them."""
    by_factor: dict[str, list[float]] = {}
    for item in evidence:
        by_factor.setdefault(item.factor, []).append(item.value)
    factors = {name: sum(values) / len(values) for name, values in by_factor.items()}
    if not factors:  # a claim with nothing behind it is not enough
        factors["code"] = 0.0
    factors["claim"] = 1.0 if claimed else 0.0
    total = sum(FACTOR_WEIGHTS[name] for name in factors)
    value = round(100 * sum(FACTOR_WEIGHTS[n] * v for n, v in factors.items()) / total, 2)
    level: Level = (
        "pass"
        if value >= thresholds.pass_
        else "uncertain"
        if value >= thresholds.uncertain
        else "fail"
    )
    claim = Evidence(
        factor="claim",
        value=factors["claim"],
        detail="the agent says it is done" if claimed else "the agent does not say it is done",
    )
    return CriterionScore(
        criterion=criterion,
        score=value,
        level=level,
        factors=factors,
        evidence=(*evidence, claim),
    )


# -- the answer ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """An operator's answer as evidence: echoes of the task removed, degenerate repetition named."""

    text: str
    degenerate: str | None = None


def sentences(text: str) -> list[str]:
    """The answer's sentences and lines, list marks and surrounding space removed."""
    parts = (LIST_MARK.sub("", part).strip() for part in SENTENCE_END.split(text))
    return [part for part in parts if part]


def words_of(text: str) -> list[str]:
    return WORD.findall(text.lower())


def content_words(text: str) -> set[str]:
    return {w for w in words_of(text) if w not in STOP_WORDS}


def is_echo(sentence: str, sources: Sequence[str]) -> bool:
    """Whether a sentence is a near-copy of one of the task's own texts (goal or criteria):
    close as text, or repeating most of a text's content words and adding none of its own."""
    plain = " ".join(words_of(sentence))
    mine = content_words(sentence)
    if not plain:
        return False
    for source in sources:
        if difflib.SequenceMatcher(None, plain, " ".join(words_of(source))).ratio() >= ECHO_RATIO:
            return True
        theirs = content_words(source)
        if mine and theirs and mine <= theirs and len(mine) / len(theirs) >= ECHO_COVERAGE:
            return True
    return False


def degeneracy(text: str) -> str | None:
    """Why the answer is no answer (one sentence repeated, hardly any distinct words), else None."""
    said = [" ".join(words_of(s)) for s in sentences(text) if not STATUS_LINE.match(s)]
    said = [s for s in said if s]
    if said:
        count = Counter(said).most_common(1)[0][1]
        if count >= MIN_REPEATS and len(set(said)) / len(said) <= MAX_DISTINCT_SHARE:
            return f"the answer repeats one sentence {count} times"
    tokens = words_of(text)
    if (
        len(tokens) >= MIN_TOKENS_FOR_VARIETY
        and len(set(tokens)) / len(tokens) < MIN_DISTINCT_TOKENS
    ):
        return f"the answer uses only {len(set(tokens))} distinct words in {len(tokens)}"
    return None


def read_answer(reply: str, goal: str, criteria: Sequence[str]) -> Answer:
    """The answer's own words: sentences that repeat the goal or a criterion do not count."""
    reason = degeneracy(reply)
    if reason:
        return Answer(text="", degenerate=reason)
    sources = [text for text in (goal, *criteria, " ".join(criteria)) if text.strip()]
    kept = [s for s in sentences(reply) if not is_echo(s, sources)]
    return Answer(text="\n".join(kept))


# -- the workspace --------------------------------------------------------------------------------


def workspace_files(root: Path) -> list[str]:
    """The workspace's files as sorted relative POSIX paths, caches and VCS folders left out
    (and not walked into)."""
    if not root.is_dir():
        return []
    found = []
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name not in IGNORED_PARTS]
        base = Path(folder).relative_to(root)
        found += [(base / name).as_posix() for name in files]
    return sorted(found)


def matching(files: Iterable[str], pattern: str) -> list[str]:
    """The files a glob names; `**/` also matches the top folder."""
    patterns = [pattern, pattern[3:]] if pattern.startswith("**/") else [pattern]
    return [f for f in files if any(fnmatch.fnmatch(f, p) for p in patterns)]


def read(root: Path, relative: str) -> str:
    path = root / relative
    if path.stat().st_size > MAX_FILE_BYTES:
        return ""
    return path.read_text(encoding="utf-8", errors="replace")


def file_hash(path: Path) -> str:
    """The content's sha256; for a file too big to check, its size and time of change."""
    status = path.stat()
    if status.st_size > MAX_FILE_BYTES:
        return f"{status.st_size}:{status.st_mtime_ns}"
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- checks ---------------------------------------------------------------------------------------


@dataclass
class Checker:
    """Runs a criterion's checks in one workspace."""

    root: Path
    files: list[str] = field(default_factory=list)
    hashes: dict[str, str] = field(default_factory=dict)

    def refresh(self) -> None:
        """Read the workspace again: its files and their hashes (blocking: run it in a thread)."""
        self.files = workspace_files(self.root)
        self.hashes = {relative: file_hash(self.root / relative) for relative in self.files}

    def involved_files(self, check: Check, named: Sequence[str] | None = None) -> list[str]:
        """The files a check reads: its glob's, or the `named` ones when an agent said where."""
        if named is not None and (check.keywords or check.ast):
            return [f for f in named if f in self.files]
        if check.keywords:
            return matching(self.files, check.within)
        if check.ast:
            return matching(self.files, check.ast.file)
        if check.command:
            return list(self.files)  # a test run may read anything
        if check.files or check.dirs:  # what exists of them: a file appearing changes the key
            present = [f for pattern in check.files or [] for f in matching(self.files, pattern)]
            return present + [f"{d}/" for d in check.dirs or [] if (self.root / d).is_dir()]
        return []

    async def run(self, check: Check, reply: str, named: Sequence[str] | None = None) -> Evidence:
        """The check's evidence; files are read on a worker thread, commands run as processes."""
        if check.command:
            return await self.command(check.command, check.timeout)
        return await asyncio.to_thread(self.run_now, check, reply, named)

    def run_now(self, check: Check, reply: str, named: Sequence[str] | None = None) -> Evidence:
        """The evidence of a check that reads files or the answer (blocking)."""
        if check.keywords:
            return self.keywords(check.keywords, self.involved_files(check, named))
        if check.files or check.dirs:
            return self.structure(check.files or [], check.dirs or [])
        if check.ast:
            return self.ast_pattern(check, self.involved_files(check, named))
        return self.in_reply(check.reply or [], reply)

    def keywords(self, words: Sequence[str], files: Sequence[str]) -> Evidence:
        texts = {f: read(self.root, f) for f in files}
        found: dict[str, list[str]] = {
            w: [f for f, t in texts.items() if w.lower() in t.lower()] for w in words
        }
        hits = [w for w, where in found.items() if where]
        detail = "; ".join(
            f"'{w}' in {', '.join(where[:3])}" if where else f"'{w}' not found"
            for w, where in found.items()
        )
        share = len(hits) / len(words) if words else 0.0
        return Evidence(
            factor="code",
            value=round(share * KEYWORD_STRENGTH, 4),
            detail=f"keywords: {detail}",
            files=tuple(sorted({f for where in found.values() for f in where})),
        )

    def structure(self, files: Sequence[str], dirs: Sequence[str]) -> Evidence:
        present = [f for f in files if matching(self.files, f)]
        present += [d for d in dirs if (self.root / d).is_dir()]
        wanted = [*files, *dirs]
        missing = [w for w in wanted if w not in present]
        detail = "files: all present" if not missing else f"files: missing {', '.join(missing)}"
        return Evidence(
            factor="files", value=len(present) / len(wanted), detail=detail, files=tuple(present)
        )

    def ast_pattern(self, check: Check, files: Sequence[str]) -> Evidence:
        pattern = check.ast
        assert pattern is not None
        wanted = describe_pattern(pattern.function, pattern.class_, pattern.imports, pattern.call)
        for relative in files:
            try:
                tree = ast.parse(read(self.root, relative), filename=relative)
            except SyntaxError as error:
                return Evidence(
                    factor="code",
                    value=0.0,
                    detail=f"ast: {relative} does not parse: {error.msg} (line {error.lineno})",
                    files=(relative,),
                )
            line = find_construct(
                tree, pattern.function, pattern.class_, pattern.imports, pattern.call
            )
            if line is not None:
                return Evidence(
                    factor="code",
                    value=1.0,
                    detail=f"ast: {wanted} at {relative}:{line}",
                    files=(relative,),
                )
        return Evidence(factor="code", value=0.0, detail=f"ast: no {wanted} in {pattern.file}")

    async def command(self, command: str, timeout: float) -> Evidence:
        process = await asyncio.create_subprocess_shell(
            command,
            cwd=self.root,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            return Evidence(
                factor="tests", value=0.0, detail=f"command: `{command}` ran over {timeout:g} s"
            )
        tail = output.decode(errors="replace").strip().splitlines()[-3:]
        outcome = "passed" if process.returncode == 0 else f"exited with {process.returncode}"
        detail = f"command: `{command}` {outcome}" + (f": {' | '.join(tail)}" if tail else "")
        return Evidence(
            factor="tests", value=1.0 if process.returncode == 0 else 0.0, detail=detail
        )

    def in_reply(self, words: Sequence[str], reply: str) -> Evidence:
        hits = [w for w in words if w.lower() in reply.lower()]
        missing = [w for w in words if w not in hits]
        detail = (
            "answer: all words present" if not missing else f"answer: missing {', '.join(missing)}"
        )
        return Evidence(
            factor="code", value=len(hits) / len(words) if words else 0.0, detail=detail
        )

    def candidates(self, criterion: Criterion, limit: int = 5) -> list[str]:
        """The files most likely to hold a criterion, by how many of its words they contain."""
        words = {w.lower() for w in significant_words(criterion.text)}
        for check in criterion.effective_checks():
            words.update(w.lower() for w in check.keywords or [])
            if check.ast:
                words.update(
                    n.lower() for n in (check.ast.function, check.ast.class_, check.ast.call) if n
                )
        ranked = []
        for relative in self.files:
            text = read(self.root, relative).lower()
            hits = sum(1 for w in words if w in text or w in relative.lower())
            if hits:
                ranked.append((-hits, relative))
        return [relative for _, relative in sorted(ranked)[:limit]]


def describe_pattern(
    function: str | None, class_: str | None, imports: str | None, call: str | None
) -> str:
    parts = [
        f"def {function}" if function else "",
        f"class {class_}" if class_ else "",
        f"import {imports}" if imports else "",
        f"call {call}()" if call else "",
    ]
    return " and ".join(p for p in parts if p)


def find_construct(
    tree: ast.AST, function: str | None, class_: str | None, imports: str | None, call: str | None
) -> int | None:
    """The line of the first node that has every asked-for construct's name, else None."""
    needed = {
        k: v
        for k, v in (
            ("function", function),
            ("class", class_),
            ("imports", imports),
            ("call", call),
        )
        if v
    }
    seen: dict[str, int] = {}
    for node in ast.walk(tree):
        for kind, name in _names(node):
            if needed.get(kind) == name:
                seen.setdefault(kind, getattr(node, "lineno", 0))
    if len(seen) == len(needed):
        return min(seen.values())
    return None


def _names(node: ast.AST) -> list[tuple[str, str]]:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [("function", node.name)]
    if isinstance(node, ast.ClassDef):
        return [("class", node.name)]
    if isinstance(node, ast.Import):
        return [("imports", alias.name) for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [("imports", node.module or "")] + [("imports", alias.name) for alias in node.names]
    if isinstance(node, ast.Call):
        target = node.func
        name = (
            target.id
            if isinstance(target, ast.Name)
            else target.attr
            if isinstance(target, ast.Attribute)
            else ""
        )
        return [("call", name)]
    return []


# -- validation with a cache ----------------------------------------------------------------------


class ValidationCache:
    """Evidence per criterion, keyed by the criterion, its checks and the hashes of its files."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Evidence, ...]] = {}
        self.hits = 0

    def get(self, key: str) -> tuple[Evidence, ...] | None:
        found = self._entries.get(key)
        if found is not None:
            self.hits += 1
        return found

    def put(self, key: str, evidence: tuple[Evidence, ...]) -> None:
        self._entries[key] = evidence


def cache_key(criterion: Criterion, checker: Checker, reply: str) -> str:
    checks = criterion.effective_checks()
    involved = sorted({f for check in checks for f in checker.involved_files(check)})
    material = {
        "criterion": criterion.model_dump(mode="json", by_alias=True),
        "files": [(f, checker.hashes.get(f, "folder")) for f in involved],
        "reply": hashlib.sha256(reply.encode()).hexdigest() if any(c.reply for c in checks) else "",
    }
    return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()


async def check_evidence(
    checker: Checker, check: Check, answer: Answer, named: Sequence[str] | None = None
) -> Evidence:
    """A check's evidence; a degenerate answer is no answer, and says why."""
    if check.reply and answer.degenerate:
        return Evidence(factor="code", value=0.0, detail=f"answer: {answer.degenerate}")
    return await checker.run(check, answer.text, named)


async def validate(
    criteria: Sequence[Criterion],
    checker: Checker,
    reply: str,
    thresholds: Thresholds,
    cache: ValidationCache,
    goal: str = "",
) -> list[CriterionScore]:
    """Score every criterion against the workspace as it is now and the answer's own words."""
    await asyncio.to_thread(checker.refresh)
    answer = read_answer(reply, goal, [c.text for c in criteria])
    claimed = claims_done(reply) and answer.degenerate is None
    scores = []
    for criterion in criteria:
        key = cache_key(criterion, checker, f"{answer.degenerate}\n{answer.text}")
        evidence = cache.get(key)
        cached = evidence is not None
        if evidence is None:
            evidence = tuple(
                [await check_evidence(checker, c, answer) for c in criterion.effective_checks()]
            )
            cache.put(key, evidence)
        result = score(criterion.text, evidence, claimed, thresholds)
        scores.append(result.model_copy(update={"cached": cached}))
    return scores
