"""Carrying the changes between two renderings of a file over to its original text, line by line."""

from __future__ import annotations

from difflib import SequenceMatcher


def carry_changes(original: str, old_render: str, new_render: str) -> str:
    """`original` with what changed from `old_render` to `new_render`, the rest byte for byte.

    `old_render` is the file's data as a writer would render it, `new_render` the edited data
    rendered the same way. Lines equal in all three anchor the result; between two anchors the
    original lines stay when the renders agree there, else the new render's changed lines
    replace them (ending like the original's lines). The result must still be checked: it is
    only as right as the line matching.
    """
    ours = _lines(original)
    base = [_content(line) for line in _lines(old_render)]
    theirs = [_content(line) for line in _lines(new_render)]
    newline = "\r\n" if original.endswith("\r\n") or "\r\n" in original[:4096] else "\n"
    out: list[str] = []
    base_at = ours_at = theirs_at = 0
    anchors = _anchors(base, [_content(line) for line in ours], theirs)
    for base_line, ours_line, theirs_line in [*anchors, (len(base), len(ours), len(theirs))]:
        out.extend(
            _gap(
                ours[ours_at:ours_line],
                base[base_at:base_line],
                theirs[theirs_at:theirs_line],
                newline,
            )
        )
        if ours_line < len(ours):
            out.append(ours[ours_line])
        base_at, ours_at, theirs_at = base_line + 1, ours_line + 1, theirs_line + 1
    return "".join(out)


def _gap(ours: list[str], base: list[str], theirs: list[str], newline: str) -> list[str]:
    """The lines between two anchors: ours where the renders agree, else theirs.

    When ours and the old render have as many lines, they are taken to be the same lines
    written differently (`[ 1, 2 ]` for `[1, 2]`), so each unchanged one keeps its original.
    """
    if base == theirs:
        return ours
    if len(ours) != len(base):
        return [line + newline for line in theirs]
    lines: list[str] = []
    for tag, base_from, base_to, theirs_from, theirs_to in SequenceMatcher(
        None, base, theirs
    ).get_opcodes():
        if tag == "equal":
            lines.extend(ours[base_from:base_to])
        else:
            lines.extend(line + newline for line in theirs[theirs_from:theirs_to])
    return lines


def _lines(text: str) -> list[str]:
    """The lines of `text` with their `\\n` (other line separators are not YAML line breaks)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _content(line: str) -> str:
    return line.removesuffix("\n").removesuffix("\r")


def _anchors(base: list[str], ours: list[str], theirs: list[str]) -> list[tuple[int, int, int]]:
    """(base, ours, theirs) indexes of lines that are the same line in all three, in order."""
    in_theirs: dict[int, int] = {}
    for tag, base_from, base_to, theirs_from, _ in SequenceMatcher(
        None, base, theirs
    ).get_opcodes():
        if tag == "equal":
            for offset in range(base_to - base_from):
                in_theirs[base_from + offset] = theirs_from + offset
    anchors = []
    for block in SequenceMatcher(None, base, ours).get_matching_blocks():
        for offset in range(block.size):
            base_line = block.a + offset
            if base_line in in_theirs:
                anchors.append((base_line, block.b + offset, in_theirs[base_line]))
    return anchors
