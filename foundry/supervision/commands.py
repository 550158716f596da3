"""Whether a shell command line only reads inside a folder, as a shell will parse it.

The line is parsed by tree-sitter's bash grammar. It reads only when every command of it (in
pipelines, `;`, `&&`, `||` and `&` lists) is a program known to read only, with none of its
options that write or run something else (`find -exec`, `sort -o`, `rg --pre`, `git -c`, ...);
when nothing is substituted or expanded (`$(...)`, backquotes, `<(...)`, `$VAR`, `$'...'`, a
here-document that expands, brace expansion, a glob that reaches `..`); when nothing is
redirected but into /dev/null or from a file; and when every word that may name a file (every
argument, and what follows `=` in an option) lies inside the folder, taken from the folder the
command runs in. Compound commands (loops, subshells, functions), assignments and a text that
does not parse are not reads. A command given as a list of words is judged as the line its
words make joined by spaces: as a server that joins them for a shell runs it.

tree-sitter forgives what bash refuses and splits a few words bash keeps whole, so a line also
does not parse when the tree has an ERROR or MISSING node, when it holds a carriage return
(bash keeps it inside a word, tree-sitter takes it for a blank), a backslash-newline inside a
word (tree-sitter splits `c\\<newline>at`, bash joins it), a closing reserved word as a
command's name (`done`, `fi`, `}`), a command followed by a parenthesis (`word(...)`) or a
`[` test with no blank after it (`[x]`, a word to bash).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

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
DUPLICATING_REDIRECTS = frozenset({">&", "<&"})  # `2>&1`: one descriptor into another
CLOSING_REDIRECTS = frozenset({">&-", "<&-"})  # `2>&-`: no target, what follows is an argument
NULL_DEVICE = "/dev/null"
# reserved words that end a construct: bash refuses them as a command, tree-sitter takes them
CASE_ENDINGS = frozenset({";;", ";&", ";;&"})  # a case item's end, refused anywhere else
CLOSING_WORDS = frozenset({"done", "fi", "then", "else", "elif", "do", "esac", "in", "}", "]]"})
# the parts a word may have when nothing in it is substituted or expanded
LITERAL_PARTS = frozenset(
    {"word", "number", "string", "string_content", "raw_string", "concatenation"}
)
WORD_NODES = frozenset(
    {"word", "string", "raw_string", "concatenation", "ansi_c_string", "translated_string",
     "number", "simple_expansion", "expansion", "command_substitution",
     "process_substitution", "arithmetic_expansion", "brace_expression", "extglob_pattern"}
)  # fmt: skip
SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
# builtins tree-sitter parses as their own nodes, whose name is no node of its own
BUILTIN_COMMANDS = frozenset({"declaration_command", "unset_command"})
_BRACE_EXPANSION = re.compile(r"\{[^}]*(?:,|\.\.)[^}]*\}")
_HIDDEN_GLOB = re.compile(r"(?:^|/)\.[^/]*[*?\[]")  # `.*` matches `..` in some shells
_EXPANDING = re.compile(r"[$`]")
_JOINED_LINE = re.compile(r"(?<![ \t])\\\n")  # a backslash-newline inside a word
_UNQUOTED_ESCAPE = re.compile(r"\\(\n|.)", re.DOTALL)
_DOUBLE_QUOTED_ESCAPE = re.compile(r"\\([\\\"$`\n])")
_BASH = Language(tree_sitter_bash.language())


class _DoesNotParse(Exception):
    """The line is one bash would refuse or read otherwise than the tree says."""


@dataclass(frozen=True)
class _Place:
    """Where the command runs (None: unknown) and the folder its files must lie in."""

    runs_in: Path | None
    folder: str


@dataclass(frozen=True)
class _Redirect:
    operator: str
    target: Node | None  # None: a here-document, or a descriptor closed
    heredoc_body: str | None = None


@dataclass
class _Command:
    """A simple command as bash runs it: its words in order (name first), its redirections,
    and the statements tree-sitter hung on a here-document (`<<EOF | sh`)."""

    words: list[Node] = field(default_factory=list)
    redirects: list[_Redirect] = field(default_factory=list)
    statements: list[Node] = field(default_factory=list)


def reads_only_inside(command: Any, runs_in: Path | None, folder: str) -> bool:
    """Whether `command` (a line, or a list of words) only reads inside `folder` (resolved),
    run from `runs_in` (None: unknown, so a relative word cannot be placed)."""
    line = _line(command)
    if line is None or len(line) > MAX_COMMAND_CHARS or not line.strip():
        return False
    try:
        root = _parse(line)
        return _has_command(root) and _statement_reads(root, _Place(runs_in, folder))
    except (_DoesNotParse, RecursionError):
        return False


def command_words(command: Any) -> list[str] | None:
    """Every word of `command` as the shell reads it (quotes removed: `.e""nv` is `.env`), the
    files it redirects from or to too, and the words of what it substitutes; None when it does
    not parse."""
    line = _line(command)
    if line is None or len(line) > MAX_COMMAND_CHARS:
        return None
    words: list[str] = []
    try:
        root = _parse(line)
        if not _has_command(root):
            return None  # blank, or comments only: as bash's parser, nothing to take
        _collect_words(root, words)
    except (_DoesNotParse, RecursionError):
        return None
    return words


def _line(command: Any) -> str | None:
    if isinstance(command, str):
        return command
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        return " ".join(command)
    return None


def _parse(line: str) -> Node:
    if "\r" in line or _JOINED_LINE.search(line):
        raise _DoesNotParse
    root = Parser(_BASH).parse(line.encode("utf-8", "surrogatepass")).root_node
    if root.has_error:
        raise _DoesNotParse
    for node in _descendants(root):
        _check_bash_takes(node)
    return root


def _has_command(root: Node) -> bool:
    return any(child.type != "comment" for child in root.named_children)


def _descendants(root: Node) -> Iterator[Node]:
    pending = [root]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(node.children)


def _check_bash_takes(node: Node) -> None:
    if node.is_missing or node.is_error:
        raise _DoesNotParse
    if node.type in CASE_ENDINGS and (node.parent is None or node.parent.type != "case_item"):
        raise _DoesNotParse  # `ls;;`
    if node.type == "command":
        for index, child in enumerate(node.children):
            named_part = node.field_name_for_child(index) is not None
            if child.is_named and not named_part and child.type != "variable_assignment":
                raise _DoesNotParse  # `word(...)`: a function definition to bash, or an error
            if named_part and not child.is_named:
                raise _DoesNotParse  # `$"x"`: tree-sitter splits off the `$`, bash translates
        name = node.child_by_field_name("name")
        if name is not None and _text(name) in CLOSING_WORDS:
            raise _DoesNotParse
    elif node.type in REDIRECTS:
        _check_redirect_on_one_line(node)
    elif node.type == "test_command":
        text = _text(node)
        opening = 2 if text.startswith("[[") else 1
        if text[opening : opening + 1] not in (" ", "\t", "\n"):
            raise _DoesNotParse  # `[x]` is one word to bash


def _check_redirect_on_one_line(node: Node) -> None:
    """bash wants a redirection's target on its line (`>` then a newline is an error);
    tree-sitter looks for it on the next lines."""
    text, start = node.text or b"", node.start_byte
    parts = [child for child in node.children if child.type != "heredoc_body"]
    for before, after in itertools.pairwise(parts):
        gap = text[before.end_byte - start : after.start_byte - start].replace(b"\\\n", b"")
        if after.type not in ("heredoc_end", "heredoc_content") and b"\n" in gap:
            raise _DoesNotParse


# --- judging -------------------------------------------------------------------------------


def _statement_reads(node: Node, place: _Place) -> bool:
    kind = node.type
    if kind in ("program", "list", "pipeline"):
        return all(_statement_reads(part, place) for part in _list_parts(node))
    if kind in ("command", "redirected_statement"):
        command = _Command()
        if not _gather(node, command):
            return False
        if not all(_statement_reads(statement, place) for statement in command.statements):
            return False
        return _command_reads(command, place)
    return False  # compound commands, functions, loops, negations, anything unforeseen


def _list_parts(node: Node) -> Iterator[Node]:
    """The statements of a list or pipeline, its nested lists flattened: tree-sitter nests
    `a && b && c` to the left, as deep as the chain is long."""
    pending = [node]
    while pending:
        current = pending.pop()
        for child in reversed(current.named_children):
            if child.type in ("list", "pipeline"):
                pending.append(child)
            elif child.type != "comment":
                yield child


def _gather(node: Node, command: _Command) -> bool:
    """Put a command's words and redirections into `command`; False for what is not a simple
    command (an assignment, a compound command redirected)."""
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        if body is None or body.type != "command" or not _gather(body, command):
            return False
        return all(_gather_redirect(r, command) for r in node.children_by_field_name("redirect"))
    for index, child in enumerate(node.children):
        part = node.field_name_for_child(index)
        if part == "name":
            command.words.extend(child.named_children)
        elif part == "argument":
            command.words.append(child)
        elif part == "redirect":
            if not _gather_redirect(child, command):
                return False
        else:  # an assignment (`PAGER=... git log`)
            return False
    return True


def _gather_redirect(node: Node, command: _Command) -> bool:
    operator = next((child.type for child in node.children if not child.is_named), "")
    if node.type == "file_redirect":
        destinations = node.children_by_field_name("destination")
        if operator in CLOSING_REDIRECTS:
            command.redirects.append(_Redirect(operator, None))
            command.words.extend(destinations)
        elif destinations:  # bash gives the words after the target to the command
            command.redirects.append(_Redirect(operator, destinations[0]))
            command.words.extend(destinations[1:])
        else:
            return False
        return True
    if node.type == "herestring_redirect":
        command.redirects.append(_Redirect(operator, node.named_children[-1]))
        return True
    if node.type == "heredoc_redirect":
        return _gather_heredoc(node, operator, command)
    return False


def _gather_heredoc(node: Node, operator: str, command: _Command) -> bool:
    """A here-document; tree-sitter hangs what follows `<<EOF` on the line inside it: words
    of the command, redirections of it, and the rest of a pipeline or list."""
    body = next((child for child in node.named_children if child.type == "heredoc_body"), None)
    text = "" if body is None else _text(body)
    command.redirects.append(_Redirect(operator, None, heredoc_body=text))
    for index, child in enumerate(node.children):
        part = node.field_name_for_child(index)
        if not child.is_named or child.type in ("heredoc_start", "heredoc_body", "heredoc_end"):
            continue
        if part == "argument":
            command.words.append(child)
        elif part == "redirect":
            if not _gather_redirect(child, command):
                return False
        else:
            command.statements.append(child)
    return True


def _command_reads(command: _Command, place: _Place) -> bool:
    words = sorted(command.words, key=lambda word: word.start_byte)
    if not all(_plain_word(word) for word in words):
        return False
    if not all(_redirect_reads(redirect, place) for redirect in command.redirects):
        return False
    return bool(words) and _program_reads([_word_text(word) for word in words], place)


def _plain_word(word: Node) -> bool:
    """A word with nothing a shell substitutes or expands in it, but `~` (judged as a path)."""
    if any(part.is_named and part.type not in LITERAL_PARTS for part in _descendants(word)):
        return False
    text = _word_text(word)
    return _BRACE_EXPANSION.search(text) is None and _HIDDEN_GLOB.search(text) is None


def _redirect_reads(redirect: _Redirect, place: _Place) -> bool:
    if redirect.heredoc_body is not None:  # an unquoted here-document expands `$(...)`
        return redirect.operator == "<<" and _EXPANDING.search(redirect.heredoc_body) is None
    target = redirect.target
    if target is None:
        return False  # a descriptor closed: the program may fail or act otherwise
    if target.type == "number":
        return redirect.operator in DUPLICATING_REDIRECTS
    if not _plain_word(target):
        return False
    word = _word_text(target)
    if redirect.operator in READING_REDIRECTS:
        return _inside(word, place)
    if redirect.operator == "<<<":
        return True
    return word == NULL_DEVICE


# --- words as bash reads them --------------------------------------------------------------


def _collect_words(node: Node, words: list[str]) -> None:
    kind = node.type
    if kind in WORD_NODES:
        words.append(_word_text(node))
        for substitution in _substitutions(node):
            for child in substitution.children:
                _collect_words(child, words)
    elif kind == "heredoc_start":  # the delimiter, quotes removed
        words.append(_text(node).replace("'", "").replace('"', "").replace("\\", ""))
    elif kind == "heredoc_body":
        for substitution in _substitutions(node):
            _collect_words(substitution, words)
    elif kind == "variable_assignment":  # `KEY=value` as bash reads it, and the value alone
        value = node.children[2:]
        words.append(_text(node.children[0]) + "=" + "".join(map(_word_text, value)))
        for child in value:
            _collect_words(child, words)
    elif kind == "variable_name" and node.parent and node.parent.type in _NAMING_PARENTS:
        words.append(_text(node))  # `unset NAME`, `export NAME`, `for NAME in`
    elif kind not in ("comment", "heredoc_end"):
        if kind in BUILTIN_COMMANDS and node.children:
            words.append(_text(node.children[0]))  # `export`, `local`, `unset`
        for child in node.children:
            _collect_words(child, words)


_NAMING_PARENTS = BUILTIN_COMMANDS | {"for_statement"}


def _substitutions(node: Node) -> Iterator[Node]:
    """The commands substituted in `node` (itself one, or in its parts), outermost only."""
    if node.type in SUBSTITUTIONS:
        yield node
        return
    for child in node.children:
        yield from _substitutions(child)


def _word_text(node: Node) -> str:
    """What bash makes of a word: quotes removed, escapes and `$'...'` decoded; what it
    substitutes or expands is left as written."""
    text = _text(node)
    kind = node.type
    if kind == "word":
        return _UNQUOTED_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], text)
    if kind == "raw_string":
        return text[1:-1]
    if kind == "string":  # from the line's text: the tree leaves out a newline inside quotes
        return _DOUBLE_QUOTED_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], text[1:-1])
    if kind == "translated_string":
        return _DOUBLE_QUOTED_ESCAPE.sub(lambda m: "" if m[1] == "\n" else m[1], text[2:-1])
    if kind == "ansi_c_string":
        return _ansi_c_decoded(text[2:-1])
    if kind == "concatenation":
        return "".join(_word_text(part) for part in node.children)
    return text


_ANSI_C_ESCAPE = re.compile(
    r"\\(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3})|c(.)|(.))",
    re.DOTALL,
)
_ANSI_C_SIMPLE = {
    "a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r",
    "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
}  # fmt: skip


def _ansi_c_decoded(body: str) -> str:
    """`$'...'` as bash decodes it (`\\x63at` is `cat`)."""

    def escape(match: re.Match[str]) -> str:
        hex_byte, short, long, octal, control, other = match.groups()
        if hex_byte or octal:
            return chr(int(hex_byte, 16) if hex_byte else int(octal, 8) & 0xFF)
        if short or long:
            code = int(short or long, 16)
            return chr(code) if code <= 0x10FFFF else match[0]
        if control:
            return chr(ord(control.upper()) ^ 0x40) if control.isascii() else match[0]
        return _ANSI_C_SIMPLE.get(other, match[0])

    return _ANSI_C_ESCAPE.sub(escape, body)


def _text(node: Node) -> str:
    return (node.text or b"").decode("utf-8", errors="surrogatepass")


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
