"""Every file path a tool call names, found by name and by shape and resolved where its server runs.

Finding: a string is a path when its parameter's name says so (`path`, `paths`, `file_path`,
`repoPath`, `destination`, `cwd`, ... in any case and with `_`, `-` or camelCase), or when it
looks like one (`/x`, `~/x`, `./x`, `../x`, `C:\\x`, `file:///x`, or `a/b.ext` and `a/../b`),
wherever it sits: in lists, in nested objects, as the keys of an object under a path name.
Values under text keys (`content`, `newText`, `query`, ...) are content, not paths, and are
skipped. A command (`command`, `cmd`, `script`) is split into words as a shell would, and each
argument with a slash in it is a path; one spelt with a shell variable (`$DIR/x`) or a command
substitution cannot be judged. A path with percent-escapes (`..%2f`) or spaces around it is judged
twice: as written, and decoded and trimmed, as a server may read it after it was judged.

Resolving: `~` is expanded, a relative path is joined to the folder the tool's server really runs
in, and to each folder its command line names (where a filesystem server takes it from, read
through wrappers by `tools/identity.py`), each reading judged, and symlinks are followed through
the deepest part that exists. A server of no kind Foundry knows may take a relative path from
anywhere: there a relative path cannot be judged, and every parameter it is sent is searched
(text keys too). A path is
*unresolvable* when it cannot be judged: a NUL or control character, a `file:` URL with a `?` or
`#`, text that is not valid Unicode, more than 4096 characters or a name over 255 bytes, a `..`
that would land elsewhere once symlinks are followed than it does on paper, a symlink loop, a
name that does not exist but has a twin in another Unicode form, a server whose working folder is
unknown, or a relative path sent to a server of unknown kind. An unresolvable path never lies
within anything.
"""

from __future__ import annotations

import binascii
import contextlib
import errno
import json
import os
import re
import shlex
import stat
import threading
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel

from foundry.agent.models import InternalServer, McpServerConfig, StdioServer
from foundry.supervision.secrets import mask_text

MAX_PATH_CHARS = 4096
MAX_NAME_BYTES = 255
MAX_DEPTH = 12
MAX_VALUES = 10_000  # strings and containers visited in one call's parameters
MAX_LINK_SEARCH = 20_000  # entries of the project searched for a hard-linked file's other names

T = TypeVar("T")
UNKNOWN_KIND = (
    "a relative path sent to a server of no kind Foundry knows: where it takes one from is unknown"
)


@dataclass(frozen=True)
class ServerSite:
    """Where one server takes relative paths from, and which server Foundry knows it to be.

    `folders`: the folder it runs in, then the folders its command line gives it (the reference
    filesystem server joins a relative path to those); None when unknown (a remote server).
    `kind`: its kind (`tools/identity.py`: "filesystem", "git", ...), None when Foundry does
    not know it; rules written for a kind apply to it only when it is of that kind.
    """

    folders: tuple[Path, ...] | None
    kind: str | None = None


# A site, or (as a site of unknown kind) its folder, its folders, or None for unknown ones.
ServerPlace = ServerSite | Path | tuple[Path, ...] | None
ServerPlaces = Mapping[str, ServerPlace]

PATH_NAMES = frozenset(
    {
        "path", "paths", "file", "files", "filename", "filenames", "fname", "filepath",
        "source", "sources", "src", "destination", "destinations", "dest", "dst",
        "target", "targets", "dir", "dirs", "dirname", "directory", "directories",
        "folder", "folders", "cwd", "workdir", "root", "location",
    }
)  # fmt: skip
PATH_LAST_WORDS = frozenset(
    {
        "path", "paths", "file", "files", "filename", "filenames", "dir", "dirs", "dirname",
        "directory", "directories", "folder", "folders", "cwd", "root",
    }
)  # fmt: skip
TEXT_NAMES = frozenset(
    {
        "content", "contents", "body", "data", "text", "filecontent", "oldtext", "newtext",
        "oldstring", "newstring", "oldstr", "newstr", "replacement", "message", "description",
        "comment", "title", "summary", "prompt", "query", "pattern", "regex", "code", "patch",
        "diff", "note", "notes", "subject", "input", "instructions",
    }
)  # fmt: skip

_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_PATH_START = re.compile(r"^(?:/|\.{1,2}[\\/]|\.\.$|~[\w.-]*(?:[\\/]|$)|[A-Za-z]:[\\/]|\\\\)")
_FILE_NAME = re.compile(r"^[\w.@+-]*\.[A-Za-z0-9]{1,10}$")
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_JUNK = re.compile("[\u202a-\u202e\u2066-\u2069\ufffd]")
_PARENT = re.compile(r"(?:^|[\\/])\.\.(?:[\\/]|$)")
_SEPARATOR = re.compile(r"[\\/]")
_SEPARATOR_BYTE = re.compile(rb"[\\/]")
_LOOSE_PATH = re.compile(r"^[^\s/\\]{1,255}[/\\]\S{0,4000}$")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_HOME_VARIABLE = re.compile(r"^\$(?:HOME\b|\{HOME\})")
_SHELL_EXPANSION = re.compile(r"[$`]")
_HEX_ESCAPES = re.compile(r"\\x([0-9A-Fa-f]{2})")
_ENCODED_RUN = re.compile(r"[A-Za-z0-9+/]{8,}={0,2}")
_CODE = re.compile(r"['\"()]")
_EMBEDDED_PATH = re.compile(r"(?:(?<=^)|(?<=[\s'\"(=,:]))(?:~|\.\.?)?/[^\s'\"`;|&()<>,]*")
COMMAND_NAMES = frozenset({"command", "cmd", "commandline", "script", "shellcommand"})
_COMMAND_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")"})
OTHER_READING = " (as a server may read it)"  # after `where`: decoded, or trimmed


class FoundPath(BaseModel, frozen=True):
    """One path a call names: where in the parameters, as written, and where it really points
    (`resolved`), or why it cannot be judged (`problem`)."""

    where: str
    raw: str
    resolved: str | None = None
    problem: str | None = None


class CallPaths(BaseModel, frozen=True):
    """Every path one call names; `problem` when the parameters could not be searched whole."""

    paths: tuple[FoundPath, ...] = ()
    problem: str | None = None

    def all_within(self, container: str) -> bool:
        """Whether every path resolves inside `container` (a resolved folder); true when the
        call names no path, false when any path is unresolvable."""
        return self.first_outside(container) is None

    def first_outside(self, container: str) -> FoundPath | None:
        """The first path that is unresolvable or outside `container`, if any."""
        if self.problem is not None:
            return FoundPath(where="", raw="", problem=self.problem)
        return next((p for p in self.paths if not _inside(p.resolved, container)), None)

    def describe_outside(self, container: str) -> str | None:
        """In words, why the call does not stay inside `container`, or None when it does."""
        found = self.first_outside(container)
        if found is None:
            return None
        if found.problem is not None and not found.where:
            return mask_text(found.problem)
        shown = mask_text(found.raw)  # this reason is shown and traced: a path may hold a password
        if found.problem is not None:
            return f"{found.where} {shown!r} cannot be judged: {found.problem}"
        resolved = mask_text(found.resolved or "")
        return f"{found.where} {shown!r} resolves to {resolved}"


def _inside(resolved: str | None, container: str) -> bool:
    if resolved is None:
        return False
    try:
        return os.path.commonpath([resolved, container]) == container
    except ValueError:  # different drives
        return False


# --- resolving -------------------------------------------------------------------------------


class UnresolvablePath(ValueError):
    """A path that cannot be judged; the message says why."""


def resolve_path(raw: str, folder: Path | str | None) -> str:
    """The real absolute path `raw` names for a process working in `folder`.

    Raises UnresolvablePath when it cannot be judged (see the module's description); `folder`
    None means the working folder is unknown.
    """
    text = _checked_text(_from_file_url(raw))
    if folder is None:
        raise UnresolvablePath("the server's working folder is unknown")
    climbs = _PARENT.search(text) is not None
    # realpath walks the folder's names before the path's, as the kernel does: the folder needs
    # resolving first only for the `..` check, which reads the path from the real folder
    base = _real_path(os.fspath(folder)) if climbs else os.fspath(folder)
    joined = os.path.join(base, os.path.expanduser(text))
    real = _real_path(joined)
    if climbs and _real_path(os.path.normpath(joined)) != real:
        raise UnresolvablePath("a `..` after a symbolic link points somewhere else than it reads")
    if _in_a_loop(real):
        raise UnresolvablePath("it runs into a symbolic link loop")
    if not text.isascii():
        _refuse_unicode_twins(real)
    return os.path.normcase(real)


def _refuse_unicode_twins(real: str) -> None:
    """A name that does not exist but has a twin in another Unicode form (`cafe\u0301` beside
    `caf\u00e9`) cannot be judged: a server may take the twin, and a link there leads anywhere."""
    parent = os.path.dirname(real)
    while parent != real and not os.path.lexists(real):
        name = os.path.basename(real)
        if not name.isascii():
            with contextlib.suppress(OSError):
                twins = [n for n in os.listdir(parent) if n != name and _same_text(n, name)]
                if twins:
                    raise UnresolvablePath(f"it names {twins[0]!r} in another Unicode form")
        real, parent = parent, os.path.dirname(parent)


def _same_text(one: str, other: str) -> bool:
    return unicodedata.normalize("NFC", one) == unicodedata.normalize("NFC", other)


def _in_a_loop(real: str) -> bool:
    """Whether a path `realpath` gave back runs into a symlink loop (realpath leaves a loop as
    it is; the kernel refuses to open it, and it cannot be judged)."""
    try:
        os.stat(real)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def resolve_folder(container: str, project_root: Path | str) -> str | None:
    """A rule's or a grant's folder, relative to the project; None when it cannot be judged."""
    try:
        return resolve_path(container, os.path.abspath(project_root))
    except UnresolvablePath:
        return None


def _from_file_url(raw: str) -> str:
    if raw[:5].lower() != "file:":
        return raw
    parts = urlsplit(raw)
    if parts.netloc not in ("", "localhost"):  # the host only: a netloc may hold a password
        raise UnresolvablePath(f"a file URL on another host ({parts.hostname})")
    if parts.query or parts.fragment:  # `a.py#/../../etc`: a server may take it all as a path
        raise UnresolvablePath("a file URL with a query or a fragment")
    return unquote(parts.path)


def _checked_text(text: str) -> str:
    if len(text) > MAX_PATH_CHARS:
        raise UnresolvablePath(f"longer than {MAX_PATH_CHARS} characters")
    if _CONTROL.search(text):
        raise UnresolvablePath("it holds a NUL or control character")
    if _JUNK.search(text):
        raise UnresolvablePath("it holds text-direction marks or a replacement character")
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:
        raise UnresolvablePath("it is not valid Unicode text") from None
    if any(len(name) > MAX_NAME_BYTES for name in _SEPARATOR_BYTE.split(encoded)):
        raise UnresolvablePath(f"a name in it is longer than {MAX_NAME_BYTES} bytes")
    return text


def _real_path(path: str) -> str:
    """The real absolute path, as the kernel walks it: each symlink followed where it appears
    (so `..` after one climbs out of its target), as far as the path exists; the part that
    does not exist yet is appended to the real path of its deepest existing ancestor."""
    try:
        return os.path.realpath(path)
    except (OSError, ValueError) as error:  # a symlink loop in strict mode, an odd drive
        raise UnresolvablePath(str(error)) from None


# --- finding ---------------------------------------------------------------------------------


def _words(key: str) -> list[str]:
    return [word.lower() for word in _WORDS.findall(key)]


def is_path_name(key: str) -> bool:
    """Whether a parameter's name says it holds a path: `path`, `file_path`, `repoPath`, ..."""
    words = _words(key)
    return bool(words) and ("".join(words) in PATH_NAMES or words[-1] in PATH_LAST_WORDS)


def is_command_name(key: str) -> bool:
    """Whether a parameter's name says it holds a shell command line."""
    return "".join(_words(key)) in COMMAND_NAMES


def is_text_name(key: str) -> bool:
    """Whether a parameter's name says it holds content or prose, never a path."""
    return "".join(_words(key)) in TEXT_NAMES


def looks_like_path(value: str) -> bool:
    """Whether a string looks like a file path, whatever its parameter is called; as written,
    or once percent-decoded (`..%2fetc%2fpasswd`)."""
    if not value or len(value) > MAX_PATH_CHARS or "\n" in value or "\r" in value:
        return False
    if value[:5].lower() == "file:":
        return True
    if _URL.match(value):
        return False
    if _looks_like_path_as_written(value):
        return True
    decoded = unquote(value) if _PERCENT_ESCAPE.search(value) else value
    return decoded != value and _looks_like_path_as_written(decoded)


def _looks_like_path_as_written(value: str) -> bool:
    if _PATH_START.match(value):
        return True
    if "/" not in value and "\\" not in value:
        return False
    if _PARENT.search(value):
        return True
    last = _SEPARATOR.split(value.rstrip("\\/"))[-1]
    return " " not in value and _FILE_NAME.match(last) is not None


@dataclass
class _Search:
    """A walk over one call's parameters, counting what it visits."""

    found: list[tuple[str, str]] = field(default_factory=list)
    loose: list[tuple[str, str]] = field(default_factory=list)  # `a/b`: a path if `a` is a link
    visited: int = 0
    problem: str | None = None
    commands: bool = True  # the paths in command lines too
    skip_text: bool = True  # values under text keys (`content`, `query`) are not paths

    def walk(self, value: Any, where: str, named: bool, depth: int) -> None:
        self.visited += 1
        if self.visited > MAX_VALUES or depth > MAX_DEPTH:
            self.problem = "the parameters are too large or too deep to search for paths"
            return
        if isinstance(value, str):
            if (named and not _URL.match(value)) or looks_like_path(value):
                self.found.append((where, value))
            elif _LOOSE_PATH.match(value) and not _URL.match(value):
                self.loose.append((where, value))
            if value[:1] in ("{", "[") and (parsed := _json_in(value)) is not None:
                self.walk(parsed, f"{where} (JSON)", named, depth + 1)
        elif isinstance(value, Mapping):
            self._walk_object(value, where, named, depth)
        elif isinstance(value, list | tuple):
            for index, item in enumerate(value):
                self.walk(item, f"{where}[{index}]", named, depth + 1)

    def _walk_object(self, value: Mapping[Any, Any], where: str, named: bool, depth: int) -> None:
        for key, item in value.items():
            name = str(key)
            inner = f"{where}.{name}" if where else name
            if named or (isinstance(key, str) and looks_like_path(key)):
                self.found.append((f"{inner} (a key)", name))
            if self.skip_text and is_text_name(name) and not is_path_name(name):
                continue
            if self.commands and is_command_name(name) and isinstance(item, str):
                self._walk_command(item, inner)
            self.walk(item, inner, is_path_name(name), depth + 1)

    def _walk_command(self, command: str, where: str, depth: int = 0) -> None:
        """The arguments of a command line that name paths: any with a slash, but a program's
        own name (the first word of each command); an argument that is itself a command line
        (`sh -c "cat /x"`) is searched too, and code (`-c "open('/x')"`) for absolute paths."""
        for word in _arguments(command):
            if any(char.isspace() for char in word) and depth < MAX_DEPTH:
                self._walk_command(word, where, depth + 1)
                continue
            value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
            value = _HOME_VARIABLE.sub("~", value)
            candidates = _EMBEDDED_PATH.findall(value) if _CODE.search(value) else [value]
            for candidate in [*candidates, *_decoded_argument(value)]:
                self._command_path(candidate, where)

    def _command_path(self, value: str, where: str) -> None:
        if ("/" not in value and "\\" not in value) or _URL.match(value):
            return
        if _SHELL_EXPANSION.search(value):
            self.problem = f"{where} names a path through a shell variable: {value!r}"
        else:
            self.found.append((f"{where} (a command's argument)", value))


def _decoded_argument(word: str) -> list[str]:
    """What a command may decode and use (`echo L2V0Yy9wYXNzd2Q= | base64 -d`, `printf
    '\\x2fetc'`, a hex dump): the text, when it decodes to text with a slash."""
    texts = []
    escaped = _HEX_ESCAPES.findall(word)
    if escaped:
        texts.append(bytes(int(code, 16) for code in escaped))
    for blob in _ENCODED_RUN.findall(word):
        with contextlib.suppress(binascii.Error, ValueError):
            texts.append(binascii.a2b_base64(blob + "=" * (-len(blob) % 4), strict_mode=True))
        with contextlib.suppress(binascii.Error, ValueError):
            texts.append(bytes.fromhex(blob))
    decoded = (text.decode("utf-8", "replace") for text in texts)
    return [text for text in decoded if "/" in text and text.isprintable()]


def _json_in(text: str) -> Any:
    """The object or list a text holds as JSON (a server may parse it), or None."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict | list) else None


def _arguments(command: str) -> list[str]:
    """The words of a command line after each command's first (its program), as a shell
    splits them; on text a shell would not split (an open quote), at whitespace."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        words = list(lexer)
    except ValueError:
        words = command.split()
    arguments, first = [], True
    for word in words:
        if word in _COMMAND_SEPARATORS or set(word) <= set("<>&|;()"):
            first = word not in ("<", ">", ">>", "<<", "&>", "2>")
            continue
        if not first:
            arguments.append(word)
        first = False
    return arguments


def find_paths(
    params: Mapping[str, Any], commands: bool = True
) -> tuple[list[tuple[str, str]], str | None]:
    """(where, path as written) for every path in the parameters (`commands`: in command lines
    too), and a problem when the search had to stop (too many values or too deep)."""
    search = _Search(commands=commands)
    search.walk(params, "", named=False, depth=0)
    return search.found, search.problem


def _searched(params: Mapping[str, Any], skip_text: bool = True) -> _Search:
    search = _Search(skip_text=skip_text)
    search.walk(params, "", named=False, depth=0)
    return search


# --- a call's paths, where its server runs ------------------------------------------------------


class _OneDecision:
    """The memo of one decision's resolved paths (a class: a generator-based context manager
    costs a microsecond, a fifth of what L0 may spend on a call)."""

    __slots__ = ("_local",)

    def __init__(self, local: threading.local) -> None:
        self._local = local

    def __enter__(self) -> None:
        self._local.memo = {}

    def __exit__(self, *exc_info: object) -> None:
        self._local.memo = None


class ServerFolders:
    """The folder each tool's server runs in (`server.tool` → its server's working folder), and
    the kind of server it is.

    Without a map every server is taken to run in the project folder and to be whatever a rule
    was written for (a rule tested alone, `foundry policy check` without an agent). With one, a
    server the map does not list, or lists with no folder (a remote server), has an unknown
    working folder; one it lists with no kind is a server Foundry does not know: a relative path
    it is sent cannot be judged, and all its parameters are searched for paths.
    """

    def __init__(self, project_root: Path, folders: ServerPlaces | None = None):
        self._root = Path(os.path.abspath(project_root))
        self._sites = (
            {name: _as_site(place) for name, place in folders.items()}
            if folders is not None
            else None
        )
        self._decision = threading.local()

    def one_decision(self) -> _OneDecision:
        """Within the block a call's paths are found and resolved once, however many conditions
        ask; the filesystem is read afresh for every decision."""
        return _OneDecision(self._decision)

    def _remembered(self, key: tuple[Any, ...], compute: Callable[[], T]) -> T:
        memo: dict[tuple[Any, ...], Any] | None = getattr(self._decision, "memo", None)
        if memo is None:
            return compute()
        if key not in memo:
            memo[key] = compute()
        result: T = memo[key]
        return result

    def folder(self, container: str) -> str | None:
        """A rule's or a grant's folder, resolved against the project (None: cannot be judged)."""
        return self._remembered(
            ("folder", container), lambda: resolve_folder(container, self._root)
        )

    def within_project(self, resolved: str) -> str:
        """A resolved path as seen from the project folder when it lies inside it."""
        relative = os.path.relpath(resolved, self._root)
        return resolved if relative.startswith("..") else relative

    def folder_of(self, tool: str) -> Path | None:
        """The folder the tool's server runs in (None: unknown)."""
        bases = self._bases_of(tool)
        return None if bases is None else bases[0]

    def _bases_of(self, tool: str) -> tuple[Path, ...] | None:
        if self._sites is None:
            return (self._root,)
        site = self._site_of(tool)
        return None if site is None else site.folders

    def _site_of(self, tool: str) -> ServerSite | None:
        """The site of the tool's server (the longest server name it starts with), if listed."""
        assert self._sites is not None
        servers = (name for name in self._sites if tool.startswith(name + "."))
        server = max(servers, key=len, default=None)
        return None if server is None else self._sites[server]

    def is_kind(self, tool: str, kind: str) -> bool:
        """Whether the tool's server is a server of that kind (always, without a map)."""
        if self._sites is None:
            return True
        site = self._site_of(tool)
        return site is not None and site.kind == kind

    def of_unknown_kind(self, tool: str) -> bool:
        """Whether the tool's server is one Foundry does not know (never, without a map)."""
        if self._sites is None:
            return False
        site = self._site_of(tool)
        return site is None or site.kind is None

    def paths_of(
        self, tool: str, params: Mapping[str, Any], named: Sequence[tuple[str, str]] = ()
    ) -> CallPaths:
        """Every path of the call resolved where the tool's server runs; `named` adds values a
        rule names as paths whatever they look like."""
        key = ("paths", tool, id(params), tuple(named))
        return self._remembered(key, lambda: self._paths_of(tool, params, named))

    def _paths_of(
        self, tool: str, params: Mapping[str, Any], named: Sequence[tuple[str, str]]
    ) -> CallPaths:
        unknown = self.of_unknown_kind(tool)  # its text keys too; its relative paths unknown
        search = self._remembered(
            ("find", id(params), unknown), lambda: _searched(params, skip_text=not unknown)
        )
        folder = self.folder_of(tool)
        linked = self._remembered(
            ("linked", id(params), unknown, folder), lambda: self._linked(search, folder)
        )
        others = () if unknown else (self._bases_of(tool) or ())[1:]
        seen: dict[tuple[str, str], FoundPath] = {}
        for where, raw in readings([*named, *search.found, *linked]):
            if (where, raw) in seen:
                pass
            elif unknown and _is_relative(raw):
                seen[where, raw] = FoundPath(where=where, raw=raw, problem=UNKNOWN_KIND)
            else:
                seen[where, raw] = self._resolved(where, raw, folder)
            if others and _is_relative(raw):
                for base in others:  # judged wherever the server may take it from
                    from_base = self._resolved(f"{where} (from {base})", raw, base)
                    if from_base.resolved != seen[where, raw].resolved:
                        seen[from_base.where, raw] = from_base
        for found in list(seen.values()):
            for other in self._other_names(found):
                seen[other.where, other.raw] = other
        return CallPaths(paths=tuple(seen.values()), problem=search.problem)

    def _other_names(self, found: FoundPath) -> list[FoundPath]:
        """The other names of a hard-linked file (`innocent.txt` for `.env`): a call on it reads
        the file whatever its name, so each name is one more place the path leads. Names that
        cannot all be found in the project (some lie elsewhere, or the project is too large to
        search) leave it unjudgeable."""
        if found.resolved is None:
            return []
        names = self._remembered(
            ("names", found.resolved), lambda: hard_link_names(found.resolved or "", self._root)
        )
        if names is None:
            return []
        where = f"{found.where} (a hard link)"
        if isinstance(names, str):
            return [FoundPath(where=where, raw=found.raw, problem=names)]
        return [
            FoundPath(where=f"{where} {index}", raw=found.raw, resolved=name)
            for index, name in enumerate(names, 1)
        ]

    def place_of(self, tool: str, raw: str) -> str:
        """Where a path a call of `tool` names leads, as one text that tells two calls apart:
        read as a server may read it (decoded, trimmed), from each folder its server takes it
        from, each reading the file itself when it exists (a link, a hard link, `./a` and `a`,
        any spelling the filesystem takes for it), else the path it names in one Unicode form."""
        text = _decoded(raw).strip()
        bases = self._bases_of(tool) or (None,)
        if not _is_relative(text):
            bases = bases[:1]
        elif self.of_unknown_kind(tool):
            bases = (None,)  # where it leads is not known: as written
        places = (self._place(text, base) for base in bases)
        return " | ".join(dict.fromkeys(places))

    def _place(self, text: str, folder: Path | None) -> str:
        """A path's place from one folder: the existing file its spelling or its other Unicode
        form names, else where it would be; as written, normalised, when it cannot be judged."""
        unicode_form = unicodedata.normalize("NFC", text)
        named = None
        for spelling in dict.fromkeys((text, unicode_form)):
            resolved, _ = self._resolution(spelling, folder)
            if resolved is None:
                continue
            named = named or resolved
            with contextlib.suppress(OSError):
                found = os.stat(resolved)
                return f"file {found.st_dev}:{found.st_ino}"
        if named is not None:
            return "path " + unicodedata.normalize("NFC", named)
        return "as written " + os.path.normpath(unicode_form)

    def _linked(self, search: _Search, folder: Path | None) -> list[tuple[str, str]]:
        """The text of the call that only may be a path and leads through a symlink."""
        if not search.loose or folder is None:
            return []
        with contextlib.suppress(UnresolvablePath):
            real = _real_path(os.fspath(folder))
            return [(where, raw) for where, raw in search.loose if _leads_elsewhere(raw, real)]
        return []

    def _resolved(self, where: str, raw: str, folder: Path | None) -> FoundPath:
        resolved, problem = self._resolution(raw, folder)
        return FoundPath(where=where, raw=raw, resolved=resolved, problem=problem)

    def _resolution(self, raw: str, folder: Path | None) -> tuple[str | None, str | None]:
        """Where `raw` leads from `folder`, or why it cannot be judged."""
        return self._remembered(("path", raw, folder), lambda: _resolution(raw, folder))


def hard_link_names(real: str, root: Path) -> list[str] | str | None:
    """The other names of the regular file `real` in the folder `root`: None when it has no
    other (or is not a regular file), the list when all were found, why not when some lie
    elsewhere or `root` holds more than MAX_LINK_SEARCH entries."""
    try:
        info = os.stat(real, follow_symlinks=False)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return None
    names: list[str] = []
    visited = 0
    pending = [os.fspath(root)]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            visited += 1
            if visited > MAX_LINK_SEARCH:
                return f"it has {info.st_nlink} names (a hard link), too many files to find them"
            if entry.is_dir(follow_symlinks=False):
                pending.append(entry.path)
            elif entry.inode() == info.st_ino and _same_inode(entry, info, real):
                names.append(os.path.normcase(os.path.realpath(entry.path)))
    if len(names) + 1 < info.st_nlink:
        return f"it has {info.st_nlink} names (a hard link), some outside the project"
    return names


def _same_inode(entry: os.DirEntry[str], info: os.stat_result, real: str) -> bool:
    """Whether `entry` is another name of the file `info` describes (at `real`)."""
    return (
        entry.stat(follow_symlinks=False).st_dev == info.st_dev
        and os.path.normcase(os.path.realpath(entry.path)) != real
    )


def _leads_elsewhere(raw: str, folder: str) -> bool:
    """Whether text that only may be a path (`escape/key`), taken as one in the (real) folder
    `folder`, passes through a symlink there: then it is judged as a path; else it reads as it
    is. Only the names of `raw` that exist are looked at, one by one."""
    path = folder
    for name in _SEPARATOR.split(raw):
        if name in ("", "."):
            continue
        path = os.path.join(path, name)
        try:
            mode = os.lstat(path).st_mode
        except (OSError, ValueError):  # it does not exist (or holds a NUL): a plain name
            return False
        if stat.S_ISLNK(mode) or name == "..":
            return True
        if not stat.S_ISDIR(mode):
            return False
    return False


def readings(paths: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Each (where, path), followed by the other ways a server may read it: percent-decoded
    (up to three times, `%252e`), and without the spaces around it (` /etc/passwd`)."""
    read: list[tuple[str, str]] = []
    for where, raw in paths:
        read.append((where, raw))
        other = _decoded(raw).strip()
        if other != raw:
            read.append((where + OTHER_READING, other))
    return read


def _decoded(raw: str) -> str:
    if raw[:5].lower() == "file:":  # a file URL is decoded when it is resolved
        return raw
    for _ in range(3):
        if not _PERCENT_ESCAPE.search(raw):
            break
        raw = unquote(raw, errors="surrogateescape")
    return raw


def _resolution(raw: str, folder: Path | None) -> tuple[str | None, str | None]:
    try:
        return resolve_path(raw, folder), None
    except UnresolvablePath as why:
        return None, str(why)


def server_folders(
    servers: Mapping[str, McpServerConfig], base_dir: Path
) -> dict[str, ServerPlace]:
    """Where each of an agent's MCP servers takes relative paths from, and what kind of server
    it is: a stdio server runs in its `cwd` (relative to the agent's folder) or the agent's
    folder, as the tool host starts it, and serves the folders its own arguments give it, read
    through any wrapper (`sh -c`, `env`, `npx`, ...) by `identify()`, which also tells its kind
    from its package or the agent's declaration; a remote one runs in a folder nobody here
    knows, and is of no kind Foundry knows; an internal one (Foundry's own, which takes no
    paths) runs in the agent's folder and is of the kind of what it serves (`internal-rules`)."""
    # the tools package: the MCP SDK, when needed
    from foundry.tools.identity import identify, internal_kind

    places: dict[str, ServerPlace] = {}
    for name, config in servers.items():
        if isinstance(config, InternalServer):
            places[name] = ServerSite(folders=(base_dir,), kind=internal_kind(config.tool))
            continue
        if not isinstance(config, StdioServer):
            places[name] = ServerSite(folders=None)
            continue
        folder = base_dir / config.cwd if config.cwd else base_dir
        declared = config.confinement.kind if config.confinement is not None else None
        identity = identify(config, base_dir, declared)
        roots = tuple(root for root in identity.roots(folder) if root != folder)
        places[name] = ServerSite(folders=(folder, *dict.fromkeys(roots)), kind=identity.kind_name)
    return places


def _as_site(place: ServerPlace) -> ServerSite:
    if isinstance(place, ServerSite):
        return place
    return ServerSite(folders=place if place is None or isinstance(place, tuple) else (place,))


def _is_relative(raw: str) -> bool:
    """Whether a path is taken from a folder (not absolute, not a file URL, not from home)."""
    text = raw.strip()
    return text[:5].lower() != "file:" and not os.path.isabs(os.path.expanduser(text))
