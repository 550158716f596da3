"""Odd, broken or hostile agent files are read as tsagent reads them, or refused cleanly."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from foundry.agent import AgentError, read_agent, save_agent, validate_agent
from foundry.agent.limits import MAX_DEPTH, MAX_FILE_BYTES, MAX_YAML_CHARS
from foundry.agent.syntax import parse_yaml, plain
from foundry.cli import main

from .samples import TSAGENT_YAML, tree_digest, write_folder_agent, write_yaml_agent


def messages(path: Path) -> list[str]:
    return [str(problem) for problem in validate_agent(path)]


@pytest.fixture
def folder_agent(tmp_path: Path) -> Path:
    return write_folder_agent(tmp_path / "agent")


@pytest.fixture
def yaml_agent(tmp_path: Path) -> Path:
    return write_yaml_agent(tmp_path / "ledger.yaml")


# YAML 1.2 core schema, as tsagent reads it


def test_tsagent_yaml_with_unquoted_timestamps_is_valid(yaml_agent: Path) -> None:
    document = read_agent(yaml_agent)
    assert document.problems == [] and document.agent is not None
    assert document.agent.metadata.created == "2025-05-01T08:15:00.250Z"
    assert document.agent.metadata.version == "1.0.2"


def test_tsagent_yaml_saves_byte_for_byte(yaml_agent: Path, tmp_path: Path) -> None:
    save_agent(read_agent(yaml_agent), tmp_path / "copy.yaml")
    assert (tmp_path / "copy.yaml").read_text() == TSAGENT_YAML
    save_agent(read_agent(yaml_agent))
    assert yaml_agent.read_text() == TSAGENT_YAML


def test_an_edit_rewrites_only_the_edited_line(yaml_agent: Path) -> None:
    document = read_agent(yaml_agent)
    assert document.agent is not None
    document.agent.metadata.description = "Changed"
    save_agent(document)
    expected = TSAGENT_YAML.replace(
        "description: This agent answers questions about the team ledger", "description: Changed"
    )
    assert yaml_agent.read_text() == expected


def test_an_edited_block_text_keeps_everything_around_it(yaml_agent: Path) -> None:
    document = read_agent(yaml_agent)
    assert document.agent is not None
    document.agent.references[0].text = "Credit: money in\nDebit: money out\n"
    saved = save_agent(document)
    assert saved.agent is not None and saved.agent.references[0].text.startswith("Credit")
    text = yaml_agent.read_text()
    assert "    text: |\n      Credit: money in\n      Debit: money out\n    include: agent" in text
    assert "- [ -0.02968061901628971, 0.11594855040311813," in text  # untouched flow list
    assert text.count("\n") == TSAGENT_YAML.count("\n") - 2


@pytest.mark.parametrize(
    ("written", "read_as"),
    [
        ("2025-04-07T17:32:29.081Z", "2025-04-07T17:32:29.081Z"),
        ("2001-12-14", "2001-12-14"),
        ("1:20", "1:20"),
        ("yes", "yes"),
        ("off", "off"),
        ("0b101", "0b101"),
        ("1_000", "1_000"),
        ("0o17", 15),
        ("0x1F", 31),
        ("017", 17),
        ("+12", 12),
        ("1e3", 1000.0),
        (".5", 0.5),
        ("true", True),
        ("~", None),
        ("<<", "<<"),
    ],
)
def test_plain_scalars_follow_the_core_schema(written: str, read_as: object) -> None:
    value = plain(parse_yaml(f"key: {written}\n", Path("x.yaml")))["key"]
    assert value == read_as and isinstance(value, type(read_as))
    assert isinstance(value, bool) == isinstance(read_as, bool)


def test_infinity_is_a_number_and_survives_a_save(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("metadata:\n  name: A\n  description: d\nlimits:\n  soft: .inf\n  odd: .nan\n")
    document = read_agent(path)
    assert document.agent is not None
    document.agent.metadata.description = "e"
    save_agent(document)
    assert path.read_text().endswith("limits:\n  soft: .inf\n  odd: .nan\n")


def test_tags_outside_the_core_schema_are_refused_at_their_line(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("metadata:\n  name: A\nextra: !!python/object:os.system ls\n")
    assert messages(path) == [
        f"{path}:3:8: the tag !!python/object:os.system is not supported "
        "(agent files use the YAML 1.2 core schema)"
    ]


# Only regular files, at most 10 MiB, UTF-8


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def link_to_dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def make_loop(path: Path) -> None:
    path.symlink_to(path.name)


def make_folder(path: Path) -> None:
    path.mkdir()


def make_dangling(path: Path) -> None:
    path.symlink_to("nowhere")


UNREADABLE = {
    "fifo": (make_fifo, "is a FIFO (named pipe), not a regular file"),
    "dev-zero": (
        link_to_dev_zero,
        "is a character device (through a symbolic link), not a regular file",
    ),
    "loop": (make_loop, "is a symbolic link loop"),
    "folder": (make_folder, "is a folder, not a regular file"),
    "dangling": (make_dangling, "is a symbolic link to a missing file"),
}


@pytest.mark.parametrize("kind", list(UNREADABLE))
def test_an_unreadable_prompt_is_a_problem_and_never_overwritten(
    folder_agent: Path, kind: str
) -> None:
    prompt = folder_agent / "prompt.md"
    prompt.unlink()
    make, message = UNREADABLE[kind]
    make(prompt)
    before = tree_digest(folder_agent)
    document = read_agent(folder_agent)
    assert [str(problem) for problem in document.problems] == [f"{prompt}: {message}"]
    assert document.agent is not None and prompt in document.broken_files

    document.agent.metadata.description = "edited"
    save_agent(document)
    after = tree_digest(folder_agent)
    assert after[f"agent/{prompt.name}"] == before[f"agent/{prompt.name}"]
    assert json.loads((folder_agent / "tsagent.json").read_text())["metadata"]["description"] == (
        "edited"
    )

    document = read_agent(folder_agent)
    assert document.agent is not None
    document.agent.system_prompt = "A new prompt."
    with pytest.raises(AgentError, match="so it is not overwritten"):
        save_agent(document)
    assert tree_digest(folder_agent)[f"agent/{prompt.name}"] == before[f"agent/{prompt.name}"]


def test_a_missing_prompt_is_an_empty_prompt(folder_agent: Path) -> None:
    (folder_agent / "prompt.md").unlink()
    document = read_agent(folder_agent)
    assert document.problems == [] and document.agent is not None
    assert document.agent.system_prompt == ""


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "loop", "folder"])
def test_config_and_yaml_files_that_are_not_regular_files_are_refused(
    tmp_path: Path, kind: str
) -> None:
    make, message = UNREADABLE[kind]
    folder = tmp_path / "agent"
    folder.mkdir()
    make(folder / "tsagent.json")
    make(tmp_path / "agent.yaml")
    assert messages(folder) == [f"{folder / 'tsagent.json'}: {message}"]
    assert messages(tmp_path / "agent.yaml") == [f"{tmp_path / 'agent.yaml'}: {message}"]


def test_a_rule_that_is_a_fifo_is_a_broken_file(folder_agent: Path) -> None:
    fifo = folder_agent / "rules" / "waiting.mdt"
    os.mkfifo(fifo)
    document = read_agent(folder_agent)
    assert [str(p) for p in document.problems] == [f"{fifo}: {UNREADABLE['fifo'][1]}"]
    assert document.broken_files == {fifo} and document.agent is not None


def test_a_rules_entry_that_is_not_a_folder_is_reported(folder_agent: Path) -> None:
    rules = folder_agent / "rules"
    for path in rules.iterdir():
        path.unlink()
    rules.rmdir()
    rules.write_text("not a folder")
    assert messages(folder_agent) == [f"{rules}: is not a folder, so its files cannot be read"]


def test_files_over_the_size_limit_are_refused_unread(folder_agent: Path) -> None:
    prompt = folder_agent / "prompt.md"
    with prompt.open("wb") as handle:
        handle.truncate(int(23.4 * 1024 * 1024))
    assert messages(folder_agent) == [
        f"{prompt}: is 23.4 MiB; agent files are limited to {MAX_FILE_BYTES // 2**20} MiB"
    ]


def test_text_that_is_not_utf8_names_the_byte_and_its_line(folder_agent: Path) -> None:
    prompt = folder_agent / "prompt.md"
    prompt.write_bytes("one\ntwo\ncaf\xe9\n".encode("latin-1"))
    assert messages(folder_agent) == [f"{prompt}: is not UTF-8 text: invalid byte 0xe9 at line 3"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_and_utf32_text_is_refused_as_such(folder_agent: Path, encoding: str) -> None:
    rule = folder_agent / "rules" / "brevity.mdt"
    rule.write_bytes(rule.read_text().encode(encoding))
    [problem] = validate_agent(folder_agent)
    assert problem.file == rule
    assert problem.message.startswith(("is UTF-16 text", "is UTF-32 text", "is not UTF-8 text"))


def test_a_utf8_bom_is_read_past_and_kept_on_save(folder_agent: Path, tmp_path: Path) -> None:
    bom = "\ufeff"
    for path in (folder_agent / "tsagent.json", folder_agent / "prompt.md"):
        path.write_text(bom + path.read_text())
    rule = folder_agent / "rules" / "brevity.mdt"
    rule.write_text(bom + rule.read_text())
    yaml_path = tmp_path / "bom.yaml"
    yaml_path.write_text(bom + TSAGENT_YAML)
    for agent in (folder_agent, yaml_path):
        document = read_agent(agent)
        assert document.problems == [] and document.agent is not None
        assert not document.agent.system_prompt.startswith(bom)
        assert document.agent.rules[0].name == "brevity" if agent == folder_agent else True
        document.agent.metadata.description = "edited"
        document.agent.system_prompt = "Edited prompt."
        for rule_item in document.agent.rules:
            rule_item.text = "Edited rule."
        save_agent(document)
    for path in (folder_agent / "tsagent.json", folder_agent / "prompt.md", rule, yaml_path):
        assert path.read_text().startswith(bom), path
        assert not path.read_text()[1:].startswith(bom), path
    assert read_agent(folder_agent).problems == [] and read_agent(yaml_path).problems == []


# No parser blow-ups


def test_deep_json_is_one_problem(folder_agent: Path) -> None:
    config = folder_agent / "tsagent.json"
    config.write_text('{"metadata": {"name": "x"},\n"deep": ' + "[" * 10_000 + "]" * 10_000 + "}")
    assert messages(folder_agent) == [f"{config}:2: nested more than {MAX_DEPTH} levels deep"]


def test_deep_yaml_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("metadata:\n  name: x\ndeep: " + "[" * 10_000 + "]" * 10_000 + "\n")
    [problem] = validate_agent(path)
    assert problem.line == 3 and problem.message == f"nested more than {MAX_DEPTH} levels deep"


def test_nesting_up_to_the_limit_is_fine(tmp_path: Path) -> None:
    path = tmp_path / "nested.yaml"
    path.write_text("metadata:\n  name: x\ndeep: " + "[" * 98 + "]" * 98 + "\n")
    assert validate_agent(path) == []


def test_integers_too_long_to_convert_are_one_problem(folder_agent: Path, tmp_path: Path) -> None:
    config = folder_agent / "tsagent.json"
    config.write_text('{"metadata": {"name": "x"},\n"big": ' + "9" * 5000 + "}")
    assert messages(folder_agent) == [f"{config}:2: a number of more than 4300 digits is too long"]
    for literal in ("9" * 5000, "0x" + "f" * 4000):
        path = tmp_path / "big.yaml"
        path.write_text(f"metadata:\n  name: x\nsettings:\n  maxChatTurns: {literal}\n")
        assert messages(path) == [f"{path}:4:17: a number of more than 4300 digits is too long"]


def test_nan_and_infinity_are_not_json(folder_agent: Path) -> None:
    config = folder_agent / "tsagent.json"
    config.write_text('{"metadata": {"name": "x"},\n"a": NaN}')
    assert messages(folder_agent) == [f"{config}:2: NaN is not a JSON value"]


BILLION_LAUGHS = "metadata:\n  name: x\na: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{previous}'] * 10)}]\n"
    for previous, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def test_an_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(BILLION_LAUGHS)
    [problem] = validate_agent(path)
    assert problem.message.startswith("holds more than 100,000 values")
    assert problem.line == 7


def test_more_than_a_hundred_aliases_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "aliases.yaml"
    path.write_text("metadata:\n  name: x\nv: &v 1\nmany: [" + ", ".join(["*v"] * 101) + "]\n")
    [problem] = validate_agent(path)
    assert problem.message == "more than 100 aliases (a guard against alias bombs)"


def test_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "loop.yaml"
    path.write_text("metadata:\n  name: x\n  description: d\nloop: &l [*l]\n")
    assert messages(path) == [
        f"{path}:4:11: the alias *l is inside the node it names (a recursive alias)"
    ]


def test_yaml_over_its_size_limit_is_refused_unparsed(tmp_path: Path) -> None:
    path = tmp_path / "huge.yaml"
    path.write_text("metadata:\n  name: x\n" + "# comment\n" * (MAX_YAML_CHARS // 10 + 1))
    [problem] = validate_agent(path)
    assert problem.message == "holds 4.0 MiB of YAML; YAML in agent files is limited to 4 MiB"


def test_supervisor_paths_that_are_loops_or_not_paths_are_problems(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    path = tmp_path / "watched.yaml"
    entries = "".join(
        f"  - type: agent\n    id: s{n}\n    config:\n      agentPath: {target}\n"
        for n, target in enumerate(["loop", '"a\\0b"', "/dev/zero", "x" * 5000])
    )
    path.write_text(f"metadata:\n  name: x\nsupervisors:\n{entries}")
    found = messages(path)
    assert len(found) == 4 and all("\n" not in line for line in found)
    assert all("cannot be followed" in found[n] for n in (0, 1)), found


# Anchors and aliases


ANCHORED = """\
metadata:
  name: Anchored
  description: before
x-server: &server
  type: stdio
  command: uvx
  args: [mcp-server-time]
mcpServers:
  time: *server
  clock: *server
extra:
  first: &word hello
  again: *word
"""


def test_anchors_and_aliases_survive_an_unrelated_edit(tmp_path: Path) -> None:
    path = tmp_path / "anchored.yaml"
    path.write_text(ANCHORED)
    document = read_agent(path)
    assert document.problems == [] and document.agent is not None
    document.agent.metadata.description = "after"
    save_agent(document)
    assert path.read_text() == ANCHORED.replace("description: before", "description: after")


def test_editing_one_use_of_an_alias_changes_only_that_use(tmp_path: Path) -> None:
    path = tmp_path / "anchored.yaml"
    path.write_text(ANCHORED)
    document = read_agent(path)
    assert document.agent is not None
    server = document.agent.mcp_servers["clock"]
    assert server.type == "stdio"
    server.args = ["mcp-server-clock"]
    saved = save_agent(document)
    assert saved.problems == [] and saved.agent is not None
    servers = saved.agent.mcp_servers
    assert getattr(servers["time"], "args", None) == ["mcp-server-time"]
    assert getattr(servers["clock"], "args", None) == ["mcp-server-clock"]
    assert "  time: *server\n" in path.read_text()


def test_an_edit_to_tsagent_json_keeps_the_lines_it_did_not_change(folder_agent: Path) -> None:
    config = folder_agent / "tsagent.json"
    compact = '"providers": {"ollama": {}},'
    text = config.read_text().replace('"providers": {\n    "ollama": {}\n  },', compact)
    config.write_text(text)
    document = read_agent(folder_agent)
    assert document.agent is not None
    document.agent.metadata.description = "edited"
    save_agent(document)
    assert config.read_text() == text.replace('"a folder agent"', '"edited"')


# Line numbers


def test_duplicate_names_in_yaml_say_both_lines(yaml_agent: Path) -> None:
    text = TSAGENT_YAML.replace(
        "supervisors: []\n",
        "supervisors:\n  - type: collection\n    id: stats\n  - type: collection\n    id: stats\n",
    )
    yaml_agent.write_text(text)
    line = text.splitlines().index("    id: stats") + 1
    assert messages(yaml_agent) == [
        f"{yaml_agent}:{line + 2}: supervisors[1].id: duplicate supervisor id 'stats' "
        f"(already used by supervisors[0] on line {line})"
    ]


def test_duplicate_supervisor_ids_in_tsagent_json_say_their_line(folder_agent: Path) -> None:
    config = folder_agent / "tsagent.json"
    data = json.loads(config.read_text())
    data["supervisors"].append(dict(data["supervisors"][0]))
    config.write_text(json.dumps(data, indent=2))
    lines = config.read_text().splitlines()
    first, second = (n + 1 for n, text in enumerate(lines) if '"id": "guard"' in text)
    assert messages(folder_agent) == [
        f"{config}:{second}: supervisors[1].id: duplicate supervisor id 'guard' "
        f"(already used by supervisors[0] on line {first})"
    ]


def test_duplicate_rule_names_point_at_the_header_line(folder_agent: Path) -> None:
    copy = folder_agent / "rules" / "copy.mdt"
    copy.write_text("---\ndescription: a copy\nname: brevity\n---\ntext\n")
    assert messages(folder_agent) == [
        f"{copy}:3: name: duplicate rule name 'brevity' (already used by brevity.mdt)"
    ]


def test_problems_in_a_yaml_header_point_at_their_line(folder_agent: Path) -> None:
    glossary = folder_agent / "refs" / "glossary.mdt"
    glossary.write_text("---\nname: glossary\n\npriorityLevel: 5000\ninclude: often\n---\nT\n")
    assert messages(folder_agent) == [
        f"{glossary}:4: priorityLevel: must be between 0 and 999 (got 5000)",
        f"{glossary}:5: include: unknown include mode 'often'; use always, manual or agent",
    ]


def test_header_level_problems_point_at_their_line(folder_agent: Path) -> None:
    rule = folder_agent / "rules" / "brevity.mdt"
    rule.write_text("---\n\n[1, 2]\n---\ntext\n")
    assert messages(folder_agent) == [f"{rule}:2: the header must be a mapping"]
    rule.write_text('---\n{\n  "name": "brevity"\n}\ntext without a closing line\n')
    assert messages(folder_agent) == [f"{rule}:4: the header must be followed by a `---` line"]


# The command line


HOSTILE_CASES = {
    "deep.json": '{"a": ' + "[" * 5000 + "]" * 5000 + "}",
    "bomb.yaml": BILLION_LAUGHS,
    "loop.yaml": "loop: &l [*l]\n",
    "control.yaml": "metadata:\n  name: x\x07\n",
    "duplicate.yaml": "metadata:\n  name: x\n  name: y\n",
}


def test_validate_prints_one_line_per_problem_without_tracebacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = []
    for name, text in HOSTILE_CASES.items():
        if name.endswith(".json"):
            folder = tmp_path / name.removesuffix(".json")
            folder.mkdir()
            (folder / "tsagent.json").write_text(text)
            paths.append(folder)
        else:
            (tmp_path / name).write_text(text)
            paths.append(tmp_path / name)
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    (tmp_path / "odd\nname.yaml").symlink_to("odd\nname.yaml")
    paths += [tmp_path / "fifo.yaml", tmp_path / "zero.yaml", tmp_path / "odd\nname.yaml"]
    assert main(["validate", *map(str, paths)]) == 1
    out, err = capsys.readouterr()
    assert err == "" and "Traceback" not in out
    lines = out.splitlines()
    assert len(lines) == len(paths)
    for line in lines:
        assert line.startswith(str(tmp_path)) and len(line) < 400, line
