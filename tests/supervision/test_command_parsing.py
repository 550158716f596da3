"""Shell lines judged as bash reads them, where tree-sitter's grammar reads them otherwise.

tree-sitter forgives lines bash refuses and splits or joins a few words differently; each case
here is one such difference tried as an attack (the line must not be judged a read, and the
words a policy looks for must be found) beside the routine line that must still be a read.
The lines are data given to the parser only: nothing here runs them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from foundry.supervision.commands import command_words, reads_only_inside


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "notes.txt").write_text("notes\n", encoding="utf-8")
    return tmp_path.resolve()


def reads(line: str, project: Path) -> bool:
    return reads_only_inside(line, project, str(project))


# (1) a backslash-newline inside a word: bash joins `c\<newline>at`, tree-sitter splits it
JOINED_WORDS = [
    "c\\\nat /etc/shadow",
    "find . -ex\\\nec rm {} ;",
    "find . -del\\\nete",
    "ls src; r\\\nm -rf src",
]


@pytest.mark.parametrize("line", JOINED_WORDS)
def test_a_word_joined_over_lines_does_not_parse(line: str, project: Path) -> None:
    assert not reads(line, project)
    assert command_words(line) is None


def test_a_line_continued_after_a_blank_still_reads(project: Path) -> None:
    assert reads("ls \\\n  -la src", project)
    assert command_words("ls \\\n  -la src") == ["ls", "-la", "src"]


# (2) a carriage return: bash keeps it inside a word, tree-sitter takes it for a blank
@pytest.mark.parametrize("line", ["cat\r notes.txt", "ls src\r", "ls\r-la", "cat notes.txt\r\n"])
def test_a_carriage_return_does_not_parse(line: str, project: Path) -> None:
    assert not reads(line, project)
    assert command_words(line) is None


# (3) words after a redirection's target are the command's arguments
def test_words_after_a_redirection_are_judged_as_arguments(project: Path) -> None:
    assert not reads("cat >/dev/null /etc/shadow", project)
    assert not reads("cat 2>/dev/null ../outside.txt notes.txt", project)
    assert not reads("find 2>/dev/null . -delete", project)
    assert "/etc/shadow" in (command_words("cat >/dev/null /etc/shadow") or [])


def test_a_redirection_before_the_arguments_still_reads(project: Path) -> None:
    assert reads("ls 2>/dev/null -la", project)
    assert reads("cat >/dev/null notes.txt", project)
    assert reads("grep -rn TODO src 2>/dev/null", project)


def test_the_program_is_the_first_word_wherever_redirections_stand(project: Path) -> None:
    assert not reads(">/dev/null rm notes.txt", project)
    assert reads(">/dev/null ls src", project)


# (4) tree-sitter nests what follows `<<EOF` on its line inside the here-document
HEREDOC_ATTACKS = [
    ("cat <<EOF | sh\nrm -rf src\nEOF\n", "sh"),
    ("cat <<EOF > notes.txt\nnew text\nEOF\n", "notes.txt"),
    ("cat <<EOF /etc/shadow\nx\nEOF\n", "/etc/shadow"),
    ("cat <<EOF && rm notes.txt\nx\nEOF\n", "rm"),
    ("cat <<EOF 2>/tmp/log\nx\nEOF\n", "/tmp/log"),
]


@pytest.mark.parametrize(("line", "hidden"), HEREDOC_ATTACKS)
def test_what_follows_a_here_document_is_judged(line: str, hidden: str, project: Path) -> None:
    assert not reads(line, project)
    assert hidden in (command_words(line) or [])


def test_a_plain_here_document_still_reads(project: Path) -> None:
    assert reads("cat <<EOF\nplain text\nEOF\n", project)
    assert reads("cat <<EOF >/dev/null\nplain text\nEOF\n", project)
    assert reads("cat <<EOF | wc -l\nplain text\nEOF\n", project)
    assert not reads("cat <<EOF\n$(id)\nEOF\n", project)
    assert "id" in (command_words("cat <<EOF\n$(id)\nEOF\n") or [])


# (5) `>&-` closes a descriptor: it has no target, the word after it is an argument
@pytest.mark.parametrize("line", ["cat >&- /etc/shadow", "cat 2>&- /etc/shadow"])
def test_a_closed_descriptor_takes_no_target(line: str, project: Path) -> None:
    assert not reads(line, project)
    assert "/etc/shadow" in (command_words(line) or [])


def test_a_descriptor_duplicated_still_reads(project: Path) -> None:
    assert reads("ls src 2>&1", project)
    assert reads("ls 2>&1 src", project)
    assert not reads("ls 2>&1 /etc", project)


# (6) ANSI-C quoting is decoded as bash decodes it, and is never a plain word
def test_ansi_c_quoting_is_decoded_and_not_a_read(project: Path) -> None:
    assert command_words("$'\\x63at' notes.txt") == ["cat", "notes.txt"]
    assert command_words("cat $'\\x2e\\x65nv'") == ["cat", ".env"]
    assert command_words("cat $'\\056env'") == ["cat", ".env"]
    assert command_words("cat $'\\u002eenv'") == ["cat", ".env"]
    assert command_words("cat $'a\\'b'") == ["cat", "a'b"]
    assert not reads("$'\\x63at' notes.txt", project)
    assert not reads("cat $'notes.txt'", project)


# (7) what tree-sitter takes but bash refuses does not parse
REFUSED_BY_BASH = [
    "ls(src)",
    "cat notes.txt; done",
    "fi",
    "}",
    "then ls",
    "[x]",
    "ls (",
    "ls 'unterminated",
    'cat "unterminated',
    "if true; then ls",
    "ls $(",
    "password: >\n  hunter2",  # `>` then a newline: bash wants the target on its line
    "ls src;;",  # `;;` ends a case item and nothing else
    'cat $"/etc/shadow"',  # tree-sitter splits `$` off a translated string
    "",
    "# a comment only",
]


@pytest.mark.parametrize("line", REFUSED_BY_BASH)
def test_a_line_bash_refuses_does_not_parse(line: str, project: Path) -> None:
    assert not reads(line, project)
    assert command_words(line) is None


def test_a_test_command_with_blanks_is_a_command_not_a_read(project: Path) -> None:
    assert command_words("[ -f notes.txt ]") is not None
    assert not reads("[ -f notes.txt ]", project)


# (8) double-quoted words as bash reads them: newlines kept, `\"` and `\$` unescaped
def test_double_quotes_keep_newlines_and_unescape(project: Path) -> None:
    assert command_words('grep "a\nb" notes.txt') == ["grep", "a\nb", "notes.txt"]
    assert command_words('echo "\\"\\$HOME\\""') == ["echo", '"$HOME"']
    assert command_words('cat ".e""nv"') == ["cat", ".env"]
    assert command_words('echo "a\\x"') == ["echo", "a\\x"]  # other backslashes stay
    assert reads('cat "notes.txt"', project)
    assert not reads('cat "$HOME/.ssh/id_rsa"', project)
    assert not reads('cat "src/$(id)"', project)


def test_words_of_builtins_and_assignments_are_found() -> None:
    assert command_words("export TOKEN='abc' && make") == [
        "export",
        "TOKEN=abc",
        "abc",
        "make",
    ]
    assert command_words("unset SECRET") == ["unset", "SECRET"]
    assert command_words("for f in *.env; do cat $f; done") == ["f", "*.env", "cat", "$f"]


def test_a_list_of_words_is_judged_as_the_line_they_make(project: Path) -> None:
    assert reads_only_inside(["ls", "-la", "src"], project, str(project))
    assert not reads_only_inside(["cat", ">/dev/null", "/etc/shadow"], project, str(project))


def test_a_very_long_chain_is_judged_without_failing(project: Path) -> None:
    assert not reads(" && ".join(["ls src"] * 3000), project)  # longer than judged
    chain = " && ".join(["ls src"] * 1500)
    assert reads(chain, project)
    assert not reads(chain + " && rm notes.txt", project)
    assert not reads("rm notes.txt || " + chain, project)
