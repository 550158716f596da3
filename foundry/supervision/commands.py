"""Whether a shell command line only reads inside a folder, as a shell will parse it.

The line is parsed by bashlex (a port of bash's own parser). It reads only when every command
of it (in pipelines, `;`, `&&`, `||` and `&` lists) is a program known to read only, with none
of its options that write or run something else (`find -exec`, `sort -o`, `rg --pre`, `git -c`,
...); when nothing is substituted or expanded (`$(...)`, backquotes, `<(...)`, `$VAR`, a
here-document that expands, brace expansion, a glob that reaches `..`); when nothing is
redirected but into /dev/null or from a file; and when every word that may name a file (every
argument, and what follows `=` in an option) lies inside the folder, taken from the folder the
command runs in. Compound commands (loops, subshells, functions), assignments and a text that
does not parse are not reads. A command given as a list of words is judged as the line its
words make joined by spaces: as a server that joins them for a shell runs it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bashlex
from bashlex.errors import ParsingError

from foundry.supervision.paths import UnresolvablePath, resolve_path

MAX_COMMAND_CHARS = 20_000  # a longer line is not judged a read
READING_PROGRAMS = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "tree",
        "pwd", "echo", "printf", "stat", "file", "du", "df", "sort", "cut", "tr", "diff",
        "cmp", "comm", "basename", "dirname", "realpath", "readlink", "which", "whoami", "id",
        "uname", "date", "true", "false", "nl", "md5sum", "sha1sum", "sha256sum", "sha512sum",
        "tac", "rev", "fold", "expand", "column", "strings", "od", "hexdump", "git", "uptime",
    }
)  # fmt: skip
# options that make a reading program write a file or run another program
ACTING_OPTIONS: dict[str, tuple[str, ...]] = {
    "find": ("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0",
             "-fprintf", "-fls"),
    "sort": ("-o", "--output", "--compress-program"),
    "rg": ("--pre", "--pre-glob", "--search-zip", "-z"),
    "tree": ("-o",),
    "date": ("-s", "--set"),
    "file": ("-C", "--compile"),
    # global options (`-c`, `-C`, `--git-dir`) cannot come first: a subcommand must
    "git": ("--output", "--ext-diff", "--textconv", "--exec", "--upload-pack"),
}  # fmt: skip
GIT_READING_COMMANDS = frozenset(
    {"status", "log", "diff", "show", "ls-files", "rev-parse", "blame", "shortlog", "branch"}
)
# `git branch` lists with these alone; a name creates, `-d` deletes, `-m` renames
GIT_BRANCH_LISTING = frozenset(
    {"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--list", "--show-current",
     "--merged", "--no-merged", "--no-color", "--color"}
)  # fmt: skip
READING_REDIRECTS = frozenset({"<"})
NULL_DEVICE = "/dev/null"
_BRACE_EXPANSION = re.compile(r"\{[^}]*(?:,|\.\.)[^}]*\}")
_HIDDEN_GLOB = re.compile(r"(?:^|/)\.[^/]*[*?\[]")  # `.*` matches `..` in some shells
_EXPANDING = re.compile(r"[$`]")


@dataclass(frozen=True)
class _Place:
    """Where the command runs (None: unknown) and the folder its files must lie in."""

    runs_in: Path | None
    folder: str


def reads_only_inside(command: Any, runs_in: Path | None, folder: str) -> bool:
    """Whether `command` (a line, or a list of words) only reads inside `folder` (resolved),
    run from `runs_in` (None: unknown, so a relative word cannot be placed)."""
    line = _line(command)
    if line is None or len(line) > MAX_COMMAND_CHARS or not line.strip():
        return False
    try:
        trees = bashlex.parse(line)
    except (ParsingError, NotImplementedError, IndexError, AttributeError, TypeError):
        return False  # bashlex raises more than its own error on lines it cannot take
    place = _Place(runs_in, folder)
    return all(_node_reads(tree, place) for tree in trees)


def command_words(command: Any) -> list[str] | None:
    """Every word of `command` as the shell reads it (quotes removed: `.e""nv` is `.env`), the
    files it redirects from or to too, and the words of what it substitutes; None when it does
    not parse."""
    line = _line(command)
    if line is None or len(line) > MAX_COMMAND_CHARS:
        return None
    try:
        trees = bashlex.parse(line)
    except (ParsingError, NotImplementedError, IndexError, AttributeError, TypeError):
        return None
    words: list[str] = []

    class _Words(bashlex.ast.nodevisitor):
        def visitword(self, node: Any, word: str) -> None:
            words.append(word)

    for tree in trees:
        _Words().visit(tree)
    return words


def _line(command: Any) -> str | None:
    if isinstance(command, str):
        return command
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        return " ".join(command)
    return None


def _node_reads(node: Any, place: _Place) -> bool:
    kind = node.kind
    if kind in ("list", "pipeline"):
        return all(_node_reads(part, place) for part in node.parts)
    if kind in ("operator", "pipe"):
        return True
    if kind == "command":
        return _command_reads(node, place)
    return False  # compound commands, functions, loops, anything unforeseen


def _command_reads(node: Any, place: _Place) -> bool:
    words: list[str] = []
    for part in node.parts:
        if part.kind == "word":
            if not _plain_word(part):
                return False
            words.append(part.word)
        elif part.kind == "redirect":
            if not _redirect_reads(part, place):
                return False
        else:  # an assignment (`PAGER=... git log`), a reserved word
            return False
    return bool(words) and _program_reads(words, place)


def _plain_word(word: Any) -> bool:
    """A word with nothing a shell substitutes or expands in it, but `~` (judged as a path)."""
    parts = getattr(word, "parts", None) or []
    if any(part.kind != "tilde" for part in parts):
        return False
    text = word.word
    return _BRACE_EXPANSION.search(text) is None and _HIDDEN_GLOB.search(text) is None


def _redirect_reads(node: Any, place: _Place) -> bool:
    heredoc = getattr(node, "heredoc", None)
    if heredoc is not None:  # an unquoted here-document expands `$(...)` and `$VAR`
        return node.type == "<<" and _EXPANDING.search(heredoc.value) is None
    target = node.output
    if isinstance(target, int):
        return node.type in (">&", "<&")  # one descriptor into another: `2>&1`
    if not _plain_word(target):
        return False
    if node.type in READING_REDIRECTS:
        return _inside(target.word, place)
    if node.type == "<<<":
        return True
    return target.word == NULL_DEVICE


def _program_reads(words: Sequence[str], place: _Place) -> bool:
    program, arguments = words[0], words[1:]
    if program not in READING_PROGRAMS:
        return False
    acting = ACTING_OPTIONS.get(program, ())
    if any(_is_option(word, acting) for word in arguments):
        return False
    if program == "git" and not _git_reads(arguments):
        return False
    return all(_inside(candidate, place) for candidate in _file_words(arguments))


def _is_option(word: str, options: Sequence[str]) -> bool:
    """Whether `word` is one of `options` (a long one with `=VALUE`, a short one clustered or
    with its value attached)."""
    for option in options:
        if word == option or word.startswith(option + "="):
            return True
        if len(option) == 2 and word.startswith("-") and not word.startswith("--"):
            if option[1] in word[1:] and word[1:].isalpha():
                return True
            if word.startswith(option):
                return True
    return False


def _git_reads(arguments: Sequence[str]) -> bool:
    """git's first word must be a subcommand that reads (no global option before it)."""
    if not arguments or arguments[0] not in GIT_READING_COMMANDS:
        return False
    return arguments[0] != "branch" or all(word in GIT_BRANCH_LISTING for word in arguments[1:])


def _file_words(arguments: Sequence[str]) -> Iterator[str]:
    """The words that may name a file: every argument, what follows `=` in an option, and the
    value attached to a short option (`-f/etc/x`)."""
    for word in arguments:
        if not word.startswith("-"):
            yield word
        elif "=" in word:
            yield word.split("=", 1)[1]
        elif not word.startswith("--") and len(word) > 2:
            yield word[2:]


def _inside(word: str, place: _Place) -> bool:
    if word == NULL_DEVICE:
        return True
    try:
        resolved = resolve_path(word, place.runs_in)
    except UnresolvablePath:
        return False
    return os.path.commonpath([resolved, place.folder]) == place.folder
