"""An agent's files as text: which files there are, and a save of one file's text that is checked
first and atomic, so that an agent can be repaired by hand without losing anything.

A text is checked by reading the agent as it would be with the text in place (a copy of its
files, in a folder of its own): a text that does not parse is refused with the problem and its
line; so is one that would add a problem `foundry validate` finds to an agent that could be
used before. An agent that
could not be used takes any text that parses, so that it can be repaired a step at a time. The
file is written only if it still holds what was shown (nothing another program wrote since is
lost), in one atomic rename (the original stays whole if the write fails).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from foundry.agent.atomic import write_file_atomically
from foundry.agent.document import AgentDocument, AgentFormat, read_agent, to_document
from foundry.agent.folder import CONFIG_FILE, ITEM_FOLDERS, ITEM_SUFFIX, PROMPT_FILE
from foundry.agent.jsonindex import JsonIndex
from foundry.agent.problems import AgentError, AgentProblem, parse_field_path
from foundry.agent.sidecar import sidecar_path
from foundry.agent.syntax import split_bom
from foundry.agent.textfile import read_text


def agent_files(document: AgentDocument) -> list[Path]:
    """The files that hold the agent: its YAML file, or its folder's tsagent.json, prompt.md
    (when there is one) and the rules' and references' .mdt files; and Foundry's settings
    beside it (`foundry.json`), when there are some."""
    sidecar = sidecar_path(document.path, document.format is AgentFormat.FOLDER)
    beside = [sidecar] if sidecar.is_file() else []
    if document.format is AgentFormat.YAML:
        return [document.path, *beside]
    root = document.path
    files = [root / CONFIG_FILE, *beside]
    if (root / PROMPT_FILE).exists():
        files.append(root / PROMPT_FILE)
    for folder in ITEM_FOLDERS.values():
        if (root / folder).is_dir():
            files += sorted(path for path in (root / folder).glob(f"*{ITEM_SUFFIX}"))
    return files


def problems_in(document: AgentDocument, file: Path) -> list[AgentProblem]:
    """The problems found in `file` when the agent was read."""
    return [problem for problem in document.problems if problem.file == file]


def placed(problems: list[AgentProblem], file: Path, text: str) -> list[AgentProblem]:
    """`problems`, those about a field of the JSON file `file` given the line of that field
    in `text` (reading names the lines of YAML and .mdt fields already)."""
    if file.name != CONFIG_FILE:
        return problems
    index = JsonIndex(split_bom(text)[1])
    return [
        problem.model_copy(update={"line": index.line_of(parse_field_path(problem.field))})
        if problem.file == file and problem.field and problem.line is None
        else problem
        for problem in problems
    ]


def editable_text(original: str) -> str:
    """A file's text as a text editor holds it: no byte order mark, lines ending in \\n."""
    return split_bom(original)[1].replace("\r\n", "\n")


def written_text(edited: str, original: str) -> str:
    """`edited` (from `editable_text(original)`) as the file writes it: the original's byte
    order mark and line endings kept."""
    bom, body = split_bom(original)
    return bom + (edited.replace("\n", "\r\n") if "\r\n" in body else edited)


def check_text(document: AgentDocument, file: Path, text: str) -> AgentDocument:
    """The agent as it would read with `text` in `file`; AgentError when the text is refused."""
    _check_is_agent_file(document, file)
    after = _read_with(document, file, text)
    unparsed = _unparsed(after, file)
    if unparsed:
        raise AgentError(unparsed)
    if document.agent is not None:
        before = {_what(problem) for problem in _all_problems(document, document)}
        found = _all_problems(document, after)
        added = [problem for problem in found if _what(problem) not in before]
        if added or after.agent is None:
            raise AgentError(added or after.problems)
    return after


def validate_problems(document: AgentDocument) -> list[AgentProblem]:
    """What `foundry validate` finds in the agent as `document` read it."""
    return _all_problems(document, document)


def _all_problems(document: AgentDocument, read: AgentDocument) -> list[AgentProblem]:
    """What `foundry validate` finds in the agent `read` gives: its files' problems, and those
    across fields and files (judged where the agent lives, from `document`)."""
    from foundry.agent.checks import check_agent  # checks.py imports document.py

    if read.agent is None or document.source is None:
        return read.problems
    placed_here = replace(document, agent=read.agent, data=to_document(read.agent))
    return [*read.problems, *check_agent(placed_here)]


def _what(problem: AgentProblem) -> tuple[Path, str, str]:
    """A problem without its line: the same problem moved by an edit above it is not new."""
    return problem.file, problem.field, problem.message


def save_text(document: AgentDocument, file: Path, text: str, shown: str) -> AgentDocument:
    """Write `text` to `file` after `check_text`, if the file still holds `shown` (the text
    it was edited from); the agent as read again. AgentError says why not."""
    check_text(document, file, text)
    try:
        on_disk = read_text(file)
    except AgentError:
        on_disk = None
    if on_disk is not None and on_disk != shown:
        message = "changed on disk since it was shown; revert to see it, then edit again"
        raise AgentError([AgentProblem(file=file, message=message)])
    write_file_atomically(file, text)
    return read_agent(document.path)


def _check_is_agent_file(document: AgentDocument, file: Path) -> None:
    if file not in agent_files(document):
        message = "is not one of the agent's files, so it is not written here"
        raise AgentError([AgentProblem(file=file, message=message)])


def _read_with(document: AgentDocument, file: Path, text: str) -> AgentDocument:
    """Read the agent from a copy of its files with `text` in `file`; problems name the real
    files."""
    base = document.path if document.format is AgentFormat.FOLDER else document.path.parent
    with tempfile.TemporaryDirectory(prefix="foundry-check-") as folder:
        copy_base = Path(folder) / "agent"
        for original in agent_files(document):
            copy = copy_base / original.relative_to(base)
            copy.parent.mkdir(parents=True, exist_ok=True)
            if original == file:
                copy.write_text(text, encoding="utf-8", newline="")
            elif original.exists():
                shutil.copyfile(original, copy)
        read = read_agent(copy_base / document.path.relative_to(base))
    problems = [_moved(problem, copy_base, base) for problem in read.problems]
    return AgentDocument(document.path, document.format, read.agent, problems, data=read.data)


def _moved(problem: AgentProblem, copy_root: Path, root: Path) -> AgentProblem:
    if problem.file == copy_root:
        return problem.model_copy(update={"file": root})
    if problem.file.is_relative_to(copy_root):
        return problem.model_copy(update={"file": root / problem.file.relative_to(copy_root)})
    return problem


def _unparsed(after: AgentDocument, file: Path) -> list[AgentProblem]:
    """The problems of `file` that are about its syntax: it could not be read at all (the
    agent's main file: nothing was read; a rule's: it was set aside unread)."""
    mine = problems_in(after, file)
    if file.name in (CONFIG_FILE,) or after.format is AgentFormat.YAML:
        return mine if not after.data else []
    return [problem for problem in mine if problem.line is not None and not problem.field]
