"""Agent files written the way real tsagent installations have them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

LEGACY_CONFIG = {
    "metadata": {
        "name": "Legacy",
        "description": "written by an older tsagent",
        "created": "2025-10-01T10:00:00.000Z",
        "lastAccessed": "2025-10-02T10:00:00.000Z",
        "skills": [{"id": "s1", "name": "Skill", "description": "d", "tags": ["x"]}],
    },
    "settings": {
        "maxChatTurns": "10",
        "maxOutputTokens": "1000",
        "temperature": "0.5",
        "topP": "0.5",
        "theme": "dark",
        "mostRecentModel": "ollama:qwen2.5:7b",
        "toolPermission": "tool",
    },
    "providers": {"openai": {"OPENAI_API_KEY": "env://OPENAI_API_KEY"}, "ollama": {}},
    "mcpServers": {
        "time": {
            "command": "uvx",
            "args": ["mcp-server-time"],
            "toolPermissionRequired": {"serverDefault": False},
        },
        "files": {
            "type": "stdio",
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
            "serverToolDefaults": {"permissionRequired": True, "include": "agent"},
            "tools": {"read_file": {"permissionRequired": False, "hash": "ab12"}},
        },
    },
    "supervisors": [],
    "futureFeature": {"enabled": True, "level": 3},
}

JSON_HEADER_RULE = (
    '---\n{\n  "name": "style",\n  "description": "House style",\n  "priorityLevel": 100,\n'
    '  "include": "always",\n  "color": "blue"\n}---\nUse short sentences.\n\n---\n\n'
    "A horizontal rule above is part of the text.\n"
)
YAML_HEADER_REF = (
    "---\nname: glossary\ndescription: Terms\npriorityLevel: 300\nenabled: true\n"
    "include: agent\n---\n# Glossary\n\n---\nagent: a program that acts\n"
)
CRLF_RULE = '---\r\n{\r\n  "name": "crlf",\r\n  "include": "manual"\r\n}---\r\nWindows text\r\n'


def write_legacy_agent(root: Path) -> Path:
    (root / "rules").mkdir(parents=True)
    (root / "refs").mkdir()
    (root / "tsagent.json").write_text(json.dumps(LEGACY_CONFIG, indent=2), encoding="utf-8")
    (root / "prompt.md").write_text("You are Legacy.\n", encoding="utf-8")
    (root / "rules" / "style.mdt").write_text(JSON_HEADER_RULE, encoding="utf-8")
    (root / "rules" / "crlf.mdt").write_bytes(CRLF_RULE.encode())
    (root / "refs" / "glossary.mdt").write_text(YAML_HEADER_REF, encoding="utf-8")
    return root


@pytest.fixture
def legacy_agent(tmp_path: Path) -> Path:
    return write_legacy_agent(tmp_path / "legacy")


YAML_AGENT = """\
# An agent in tsagent's single-file format.
metadata:
  name: Single File   # shown in the agent list
  description: one YAML file
  autonomous: true
settings:
  maxChatTurns: 20
  temperature: 0.5
  model: ollama:llama3
systemPrompt: |
  You are helpful.
  Be brief.
rules:
  - name: brevity
    description: Short answers
    priorityLevel: 10
    include: always
    text: Keep it short.
    embeddings:
      - [0.1, 0.2]
references: []
providers:
  claude:
    ANTHROPIC_API_KEY: env://ANTHROPIC_API_KEY
mcpServers:
  web:
    type: streamable-http
    url: http://127.0.0.1:9000/mcp
    headers:
      Authorization: env://WEB_TOKEN
supervisors:
  - type: agent
    id: watcher
    name: Watcher
    config:
      agentPath: ./watcher.yaml
      allowedActions: [read_only]
unknownTopLevel: kept
"""

WATCHER_AGENT = """\
metadata:
  name: Watcher
settings: {}
systemPrompt: Watch.
"""


@pytest.fixture
def yaml_agent(tmp_path: Path) -> Path:
    (tmp_path / "watcher.yaml").write_text(WATCHER_AGENT, encoding="utf-8")
    path = tmp_path / "single.yaml"
    path.write_text(YAML_AGENT, encoding="utf-8")
    return path
