"""The default policy's sensitive files: what other programs run or read as instructions asks a
person before it is written, edited, made or moved to, however it is spelt; routine work in the
workspace (source, documentation, notes, tests) still runs unasked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from foundry.agent.default_policy import default_policy
from foundry.supervision.policy import PolicyEngine

# (a path in the workspace, the kind of sensitive file it is)
SENSITIVE = [
    (".vscode/tasks.json", "editor-tasks-and-settings"),
    (".vscode/settings.json", "editor-tasks-and-settings"),
    (".vscode/launch.json", "editor-tasks-and-settings"),
    (".idea/runConfigurations/app.xml", "editor-tasks-and-settings"),
    (".idea/workspace.xml", "editor-tasks-and-settings"),
    (".zed/tasks.json", "editor-tasks-and-settings"),
    (".devcontainer/devcontainer.json", "editor-tasks-and-settings"),
    (".devcontainer.json", "editor-tasks-and-settings"),
    ("project.code-workspace", "editor-tasks-and-settings"),
    (".nvim.lua", "editor-tasks-and-settings"),
    (".claude/settings.json", "agent-and-mcp-configuration"),
    (".claude/commands/deploy.md", "agent-and-mcp-configuration"),
    (".cursor/mcp.json", "agent-and-mcp-configuration"),
    (".cursor/rules/style.mdc", "agent-and-mcp-configuration"),
    (".windsurf/rules/a.md", "agent-and-mcp-configuration"),
    (".mcp.json", "agent-and-mcp-configuration"),
    ("config/mcp.json", "agent-and-mcp-configuration"),
    ("claude_desktop_config.json", "agent-and-mcp-configuration"),
    ("CLAUDE.md", "agent-and-mcp-configuration"),
    ("CLAUDE.local.md", "agent-and-mcp-configuration"),
    ("AGENTS.md", "agent-and-mcp-configuration"),
    ("src/AGENTS.md", "agent-and-mcp-configuration"),
    ("GEMINI.md", "agent-and-mcp-configuration"),
    (".cursorrules", "agent-and-mcp-configuration"),
    (".windsurfrules", "agent-and-mcp-configuration"),
    (".clinerules", "agent-and-mcp-configuration"),
    (".github/copilot-instructions.md", "agent-and-mcp-configuration"),
    (".github/instructions/python.instructions.md", "agent-and-mcp-configuration"),
    (".github/prompts/release.prompt.md", "agent-and-mcp-configuration"),
    (".aider.conf.yml", "agent-and-mcp-configuration"),
    ("Makefile", "build-files"),
    ("makefile", "build-files"),
    ("GNUmakefile", "build-files"),
    ("build/rules.mk", "build-files"),
    ("justfile", "build-files"),
    ("package.json", "build-files"),
    ("web/package.json", "build-files"),
    (".yarnrc.yml", "build-files"),
    ("setup.py", "build-files"),
    ("pyproject.toml", "build-files"),
    ("noxfile.py", "build-files"),
    ("tox.ini", "build-files"),
    ("build.gradle", "build-files"),
    ("settings.gradle.kts", "build-files"),
    ("pom.xml", "build-files"),
    ("CMakeLists.txt", "build-files"),
    ("cmake/deps.cmake", "build-files"),
    ("build.rs", "build-files"),
    ("Cargo.toml", "build-files"),
    ("Dockerfile", "build-files"),
    ("Dockerfile.dev", "build-files"),
    ("docker-compose.yml", "build-files"),
    ("compose.yaml", "build-files"),
    ("Gemfile", "build-files"),
    ("Rakefile", "build-files"),
    (".gitattributes", "git-attributes-and-modules"),
    (".gitmodules", "git-attributes-and-modules"),
    ("sub/.gitattributes", "git-attributes-and-modules"),
    (".lfsconfig", "git-attributes-and-modules"),
    (".github/workflows/evil.yml", "ci-and-hook-configuration"),
    (".github/actions/setup/action.yml", "ci-and-hook-configuration"),
    (".gitea/workflows/ci.yml", "ci-and-hook-configuration"),
    ("lefthook.yml", "ci-and-hook-configuration"),
    ("prompt.md", "agent-definitions"),
    ("rules/be-concise.mdt", "agent-definitions"),
    ("refs/time-zones.mdt", "agent-definitions"),
    ("tsagent.json", "agent-definitions"),
    ("tsagent.yaml", "agent-definitions"),
]

# what an agent does all day in a workspace: none of it asks anyone
ROUTINE = [
    "src/main.py",
    "src/app/settings.py",
    "src/build/steps.py",
    "src/claude_client.py",
    "src/package_json.py",
    "src/compose.py",
    "tests/test_setup.py",
    "tests/conftest.py",
    "docs/index.md",
    "docs/agents-guide.md",
    "docs/makefile-tips.md",
    "docs/prompts.md",
    "docs/rules.md",
    "rules/README.md",
    "notes/mcp-notes.md",
    "notes.md",
    "README.md",
    "CHANGELOG.md",
    ".gitignore",
    ".editorconfig",
    ".github/CONTRIBUTING.md",
    ".github/ISSUE_TEMPLATE/bug.md",
    ".github/dependabot.yml",
    "config/settings.example.json",
    "data/build.json",
]

WRITE_TOOLS = {
    "fs.write_file": ("writing", lambda path: {"path": path, "content": "x"}),
    "fs.edit_file": (
        "editing",
        lambda path: {"path": path, "edits": [{"oldText": "a", "newText": "b"}]},
    ),
    "fs.create_directory": ("creating-folders-in", lambda path: {"path": path}),
    "fs.move_file": ("moving", lambda path: {"source": "draft.txt", "destination": path}),
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "gh" / "workflows").mkdir(parents=True)
    (root / "gh" / "workflows" / "evil.yml").write_text("on: push\n")
    (root / "src").mkdir()
    (root / "draft.txt").write_text("x")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root


def decide(project: Path, tool: str, params: dict[str, Any]) -> tuple[str, str | None]:
    decision = PolicyEngine(default_policy(), project).decide("agent", tool, params)
    return decision.action, decision.rule


@pytest.mark.parametrize("tool", WRITE_TOOLS)
@pytest.mark.parametrize(("path", "kind"), SENSITIVE, ids=[path for path, _ in SENSITIVE])
def test_each_sensitive_target_asks_a_person(
    project: Path, tool: str, path: str, kind: str
) -> None:
    verb, params = WRITE_TOOLS[tool]
    assert decide(project, tool, params(path)) == ("human", f"ask-before-{verb}-{kind}")


@pytest.mark.parametrize(
    ("source", "destination", "kind"),
    [
        ("gh", ".github", "ci-and-hook-configuration"),  # gh/workflows/evil.yml comes along
        ("gh", ".github/", "ci-and-hook-configuration"),
        ("gh", "sub/.github", "ci-and-hook-configuration"),
        ("gh", ".gitea", "ci-and-hook-configuration"),
        ("gh/workflows", ".github/workflows", "ci-and-hook-configuration"),
        (".github", "gh-old", "ci-and-hook-configuration"),  # and CI goes with it
        ("gh", ".vscode", "editor-tasks-and-settings"),
        ("gh", ".claude", "agent-and-mcp-configuration"),
        ("gh", "rules", "agent-definitions"),  # anything in it ending .mdt is a rule
        ("gh", "refs", "agent-definitions"),
        ("gh", ".git", "version-control-internals"),
        ("draft.txt", "Makefile", "build-files"),
        ("prompt.md", "old-prompt.md", "agent-definitions"),
    ],
)
def test_a_move_whose_either_end_is_or_holds_something_sensitive_asks(
    project: Path, source: str, destination: str, kind: str
) -> None:
    params = {"source": source, "destination": destination}
    assert decide(project, "fs.move_file", params) == ("human", f"ask-before-moving-{kind}")


@pytest.mark.parametrize(
    "path",
    [
        ".VSCode/Tasks.json",
        "./.vscode/tasks.json",
        "a/../.vscode/tasks.json",
        "src/../.vscode/tasks.json",
        ".vscode./tasks.json",
        ".vscode /tasks.json",
        ".vscode::$INDEX_ALLOCATION/tasks.json",
        ".vscode\\tasks.json",
        ".\\.vscode\\tasks.json",
        ".vscode//tasks.json",
        "MAKEFILE",
        "Makefile.",
        "Makefile::$DATA",
        "./package.json",
        ".github./workflows/evil.yml",
        ".github\\workflows\\evil.yml",
        ".GITHUB/Copilot-Instructions.md",
        "rules./a.mdt",
        "RULES\\a.MDT",
        ".MCP.JSON",
        ".gitattributes.",
    ],
)
def test_other_spellings_of_a_sensitive_path_still_ask(project: Path, path: str) -> None:
    action, rule = decide(project, "fs.write_file", {"path": path, "content": "x"})
    assert action == "human" and rule is not None and rule.startswith("ask-before-writing-")


@pytest.mark.parametrize(
    "destination", [".github", ".GitHub.", "./.github", ".github\\", "x/../.github"]
)
def test_other_spellings_of_a_folder_that_holds_ci_still_ask_when_moved_to(
    project: Path, destination: str
) -> None:
    params = {"source": "gh", "destination": destination}
    assert decide(project, "fs.move_file", params)[0] == "human"


def test_a_link_to_a_sensitive_folder_is_judged_where_it_leads(project: Path) -> None:
    (project / ".vscode").mkdir()
    (project / "editor").symlink_to(project / ".vscode", target_is_directory=True)
    params = {"path": "editor/tasks.json", "content": "x"}
    assert decide(project, "fs.write_file", params)[0] == "human"
    (project / "ci").symlink_to(project / ".github", target_is_directory=True)
    assert decide(project, "fs.move_file", {"source": "gh", "destination": "ci"})[0] == "human"


@pytest.mark.parametrize("path", ROUTINE)
def test_routine_writes_in_the_workspace_stay_unasked(project: Path, path: str) -> None:
    assert decide(project, "fs.write_file", {"path": path, "content": "x"})[0] == "allow"
    edit = {"path": path, "edits": [{"oldText": "a", "newText": "b"}]}
    assert decide(project, "fs.edit_file", edit)[0] == "allow"
    move = {"source": "draft.txt", "destination": path}
    assert decide(project, "fs.move_file", move)[0] == "allow"


@pytest.mark.parametrize(
    "folder", ["build", "build/out", "docs/vscode", "src/rules", "notes/github", "gh2"]
)
def test_routine_folders_stay_unasked(project: Path, folder: str) -> None:
    assert decide(project, "fs.create_directory", {"path": folder})[0] == "allow"
    assert decide(project, "fs.move_file", {"source": "gh", "destination": f"{folder}x"})[0] == (
        "allow"
    )


@pytest.mark.parametrize("path", [path for path, _ in SENSITIVE[:12]] + ["Makefile", "CLAUDE.md"])
def test_reading_a_sensitive_file_is_routine(project: Path, path: str) -> None:
    assert decide(project, "fs.read_text_file", {"path": path})[0] == "allow"
