"""A hard-linked file is judged under every name it has: reading `.env` through an innocent name
asks as reading `.env` does, and a file whose other names cannot all be found is not allowed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from foundry.supervision import paths
from foundry.supervision.paths import hard_link_names
from tests.supervision.test_server_kinds import REFERENCE_FS, careful


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "agent"
    (root / "docs").mkdir(parents=True)
    (root / ".env").write_text("DATABASE_PASSWORD=hunter2\n")
    (root / "docs" / "a.md").write_text("notes\n")
    return root


INNOCENT = ["notes.txt", "docs/readme.md", "docs/deep/x.md"]


@pytest.mark.parametrize("name", INNOCENT)
def test_reading_credentials_through_an_innocent_hard_link_asks(workspace: Path, name: str) -> None:
    link = workspace / name
    link.parent.mkdir(parents=True, exist_ok=True)
    os.link(workspace / ".env", link)
    engine = careful(workspace, fs=REFERENCE_FS)
    for tool in ("fs.read_text_file", "fs.read_file"):
        decision = engine.decide("agent", tool, {"path": name})
        assert decision.action == "human", (tool, decision)
    both = engine.decide("agent", "fs.read_multiple_files", {"paths": ["docs/a.md", name]})
    assert both.action == "human"


def test_a_hard_link_to_a_file_outside_the_project_is_not_allowed(
    workspace: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("outside\n")
    os.link(outside, workspace / "harmless.md")
    decision = careful(workspace, fs=REFERENCE_FS).decide(
        "agent", "fs.read_text_file", {"path": "harmless.md"}
    )
    assert decision.action == "deny" and "hard link" in decision.reason


def test_a_project_too_large_to_search_leaves_a_hard_link_unjudged(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.link(workspace / "docs" / "a.md", workspace / "docs" / "b.md")
    monkeypatch.setattr(paths, "MAX_LINK_SEARCH", 1)
    assert "too many files" in str(hard_link_names(str(workspace / "docs" / "a.md"), workspace))


def test_hard_links_between_innocent_names_and_plain_files_still_run(workspace: Path) -> None:
    os.link(workspace / "docs" / "a.md", workspace / "docs" / "copy.md")
    engine = careful(workspace, fs=REFERENCE_FS)
    for name in ("docs/a.md", "docs/copy.md"):
        assert engine.decide("agent", "fs.read_text_file", {"path": name}).action == "allow"
    names = hard_link_names(str((workspace / "docs" / "a.md").resolve()), workspace)
    assert names == [str((workspace / "docs" / "copy.md").resolve())]
    assert hard_link_names(str(workspace / ".env"), workspace) is None  # one name: nothing to do
