"""A save rewrites the lines whose data changed and keeps every other byte of the file."""

from __future__ import annotations

from foundry.agent.textmerge import carry_changes

ORIGINAL = "a: 1   # one\nlist: [ 1, 2 ]\nb: two\nc: 3\n"
OLD = "a: 1   # one\nlist: [1, 2]\nb: two\nc: 3\n"  # how a writer renders ORIGINAL's data


def test_no_change_keeps_the_original() -> None:
    assert carry_changes(ORIGINAL, OLD, OLD) == ORIGINAL


def test_a_changed_line_is_replaced_and_differently_written_lines_stay() -> None:
    new = OLD.replace("b: two", "b: three")
    assert carry_changes(ORIGINAL, OLD, new) == ORIGINAL.replace("b: two", "b: three")


def test_added_and_removed_lines_land_between_their_neighbours() -> None:
    new = OLD.replace("c: 3\n", "c: 3\nd: 4\n").replace("a: 1   # one\n", "")
    assert carry_changes(ORIGINAL, OLD, new) == "list: [ 1, 2 ]\nb: two\nc: 3\nd: 4\n"


def test_a_change_inside_a_differently_written_region_takes_the_new_rendering() -> None:
    new = OLD.replace("[1, 2]", "[1, 2, 3]")
    assert carry_changes(ORIGINAL, OLD, new) == ORIGINAL.replace("[ 1, 2 ]", "[1, 2, 3]")


def test_crlf_files_keep_their_line_endings() -> None:
    original = ORIGINAL.replace("\n", "\r\n")
    new = OLD.replace("b: two", "b: three")
    assert carry_changes(original, OLD, new) == original.replace("b: two", "b: three")


def test_a_last_line_without_newline_stays_so() -> None:
    original = ORIGINAL.rstrip("\n")
    new = OLD.replace("a: 1", "a: 2")
    assert carry_changes(original, OLD, new) == original.replace("a: 1", "a: 2")
