"""Both on-disk formats read and write losslessly, and convert into each other without loss."""

from __future__ import annotations

import filecmp
from pathlib import Path

from foundry.agent import AgentFormat, Rule, load_agent, read_agent, save_agent
from foundry.agent.mdt import parse_mdt, render_mdt

from .conftest import CRLF_RULE, JSON_HEADER_RULE, YAML_AGENT, YAML_HEADER_REF


def snapshot(root: Path) -> dict[str, bytes]:
    if root.is_file():
        return {root.name: root.read_bytes()}
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def test_legacy_folder_reads_with_string_numbers_and_unknown_fields(legacy_agent: Path) -> None:
    agent = load_agent(legacy_agent).agent
    assert agent is not None
    assert agent.settings.max_chat_turns == 10
    assert agent.settings.temperature == 0.5
    assert agent.settings.model_reference == "ollama:qwen2.5:7b"
    assert agent.model_extra == {"futureFeature": {"enabled": True, "level": 3}}
    assert agent.metadata.model_extra and "skills" in agent.metadata.model_extra
    assert agent.mcp_servers["time"].type == "stdio"
    assert agent.providers["openai"]["OPENAI_API_KEY"] == "env://OPENAI_API_KEY"


def test_mdt_headers_in_json_yaml_and_crlf_are_understood(legacy_agent: Path) -> None:
    agent = load_agent(legacy_agent).agent
    assert agent is not None
    style = agent.rule("style")
    assert style is not None and style.priority_level == 100
    assert style.text.startswith("Use short sentences.\n\n---\n")
    assert style.model_extra == {"color": "blue"}
    crlf = agent.rule("crlf")
    assert crlf is not None and crlf.text == "Windows text\r\n"
    glossary = agent.reference("glossary")
    assert glossary is not None and glossary.include == "agent"
    assert glossary.text == "# Glossary\n\n---\nagent: a program that acts\n"


def test_unchanged_folder_agent_saves_byte_for_byte(legacy_agent: Path) -> None:
    before = snapshot(legacy_agent)
    save_agent(load_agent(legacy_agent))
    assert snapshot(legacy_agent) == before


def test_each_mdt_style_renders_back_exactly() -> None:
    for text in (JSON_HEADER_RULE, YAML_HEADER_REF, CRLF_RULE, "no header at all\n"):
        assert render_mdt(parse_mdt(text, Path("x.mdt"))) == text


def test_editing_one_setting_keeps_the_rest_of_the_file(legacy_agent: Path) -> None:
    document = load_agent(legacy_agent)
    assert document.agent is not None
    document.agent.settings.temperature = 0.9
    save_agent(document)
    config = (legacy_agent / "tsagent.json").read_text()
    assert '"temperature": 0.9' in config
    assert '"maxChatTurns": "10"' in config  # untouched values keep their old spelling
    assert '"futureFeature"' in config and '"toolPermissionRequired"' in config
    assert (legacy_agent / "rules" / "style.mdt").read_text() == JSON_HEADER_RULE


def test_editing_a_rule_keeps_its_header_style_and_unknown_keys(legacy_agent: Path) -> None:
    document = load_agent(legacy_agent)
    assert document.agent is not None
    glossary = document.agent.reference("glossary")
    style = document.agent.rule("style")
    assert glossary is not None and style is not None
    glossary.priority_level = 301
    style.text = "Use plain words.\n"
    save_agent(document)
    assert (
        (legacy_agent / "refs" / "glossary.mdt")
        .read_text()
        .startswith("---\nname: glossary\ndescription: Terms\npriorityLevel: 301\nenabled: true\n")
    )
    style_file = (legacy_agent / "rules" / "style.mdt").read_text()
    assert style_file.endswith('"color": "blue"\n}---\nUse plain words.\n')


def test_adding_and_removing_rules_adds_and_removes_files(legacy_agent: Path) -> None:
    document = load_agent(legacy_agent)
    assert document.agent is not None
    document.agent.rules = [r for r in document.agent.rules if r.name != "crlf"]
    document.agent.rules.append(Rule(name="new-rule", text="Be kind.\n", include="always"))
    saved = save_agent(document)
    assert not (legacy_agent / "rules" / "crlf.mdt").exists()
    new_file = (legacy_agent / "rules" / "new-rule.mdt").read_text()
    assert new_file.startswith('---\n{\n  "name": "new-rule"')
    assert "}---\nBe kind.\n" in new_file
    assert saved.agent is not None and saved.agent.rule("new-rule") is not None


def test_yaml_agent_round_trip_keeps_comments_and_unknown_fields(yaml_agent: Path) -> None:
    save_agent(load_agent(yaml_agent))
    assert yaml_agent.read_text() == YAML_AGENT
    document = load_agent(yaml_agent)
    assert document.agent is not None
    document.agent.settings.temperature = 0.2
    save_agent(document)
    text = yaml_agent.read_text()
    assert "temperature: 0.2" in text
    assert "# shown in the agent list" in text
    assert "unknownTopLevel: kept" in text
    assert "embeddings:" in text and "autonomous: true" in text
    assert "env://ANTHROPIC_API_KEY" in text and "env://WEB_TOKEN" in text


def test_folder_to_yaml_to_folder_is_lossless(legacy_agent: Path, tmp_path: Path) -> None:
    as_yaml = save_agent(load_agent(legacy_agent), tmp_path / "legacy.yaml")
    assert as_yaml.format is AgentFormat.YAML and as_yaml.problems == []
    back = save_agent(load_agent(tmp_path / "legacy.yaml"), tmp_path / "back")
    assert back.format is AgentFormat.FOLDER
    original, restored = load_agent(legacy_agent).agent, back.agent
    assert original is not None and restored is not None
    assert restored.model_dump(by_alias=True) == original.model_dump(by_alias=True)
    assert restored.model_extra == original.model_extra
    assert "env://OPENAI_API_KEY" in (tmp_path / "back" / "tsagent.json").read_text()


def test_sample_agent_converts_to_yaml_and_back_byte_for_byte(
    sample_agents: Path, tmp_path: Path
) -> None:
    assistant = sample_agents / "assistant"
    save_agent(load_agent(assistant), tmp_path / "assistant.yaml")
    save_agent(read_agent(tmp_path / "assistant.yaml"), tmp_path / "assistant")
    comparison = filecmp.dircmp(assistant, tmp_path / "assistant")
    assert snapshot(assistant) == snapshot(tmp_path / "assistant"), comparison.diff_files


def test_yaml_to_folder_to_yaml_keeps_content(yaml_agent: Path, tmp_path: Path) -> None:
    save_agent(load_agent(yaml_agent), tmp_path / "as-folder")
    again = save_agent(read_agent(tmp_path / "as-folder"), tmp_path / "again.yaml")
    original = load_agent(yaml_agent).agent
    assert original is not None and again.agent is not None
    written = again.agent.model_dump(by_alias=True)
    assert written["metadata"].pop("created") == written["metadata"].pop("lastAccessed")
    expected = original.model_dump(by_alias=True)
    del expected["metadata"]["created"], expected["metadata"]["lastAccessed"]
    assert written == expected  # tsagent requires the dates: the new files get them
    assert again.agent.model_extra == {"unknownTopLevel": "kept"}


def test_folder_with_tsagent_yaml_opens_the_yaml_agent(yaml_agent: Path, tmp_path: Path) -> None:
    folder = tmp_path / "modern"
    folder.mkdir()
    (folder / "tsagent.yaml").write_text(YAML_AGENT.replace("./watcher.yaml", "../watcher.yaml"))
    document = read_agent(folder)
    assert document.format is AgentFormat.YAML
    assert document.agent is not None and document.agent.metadata.name == "Single File"
