"""The workspace file tools check a path again as they open it: nothing outside is reached."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from foundry.orchestration import confined
from foundry.orchestration.tools import LocalTools, workspace_tools
from foundry.supervision.policy import path_within
from foundry.tools.host import ToolResult

SECRET = "the secret outside"


@pytest.fixture(params=["race-free", "fallback"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with the open-folder walk and with the resolve-and-recheck fallback."""
    if request.param == "fallback":
        monkeypatch.setattr(confined, "RACE_FREE", False)
    elif not confined.RACE_FREE:
        pytest.skip("this platform has no race-free walk")
    return str(request.param)


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    return folder


@pytest.fixture
def workspace(tmp_path: Path, mode: str) -> Path:
    folder = tmp_path / "workspace"
    (folder / "sub").mkdir(parents=True)
    (folder / "notes.md").write_text("inside")
    (folder / "sub" / "deep.txt").write_text("deep inside")
    return folder


@pytest.fixture
def tools(workspace: Path) -> LocalTools:
    return workspace_tools(workspace)


async def read(tools: LocalTools, path: str) -> ToolResult:
    return await asyncio.wait_for(tools.call("workspace.read_file", {"path": path}), 10)


async def write(tools: LocalTools, path: str, content: str = "written") -> ToolResult:
    arguments = {"path": path, "content": content}
    return await asyncio.wait_for(tools.call("workspace.write_file", arguments), 10)


async def listing(tools: LocalTools) -> list[str]:
    result = await asyncio.wait_for(tools.call("workspace.list_files", {}), 10)
    assert not result.is_error
    return result.text.splitlines()


@pytest.fixture
def swap_after_first_look(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[], None]], None]:
    """Run `swap` right after the tool's first look at the file system (a check by realpath, an
    open, a stat or a readlink): what it decided from then on is out of date."""

    def arm(swap: Callable[[], None]) -> None:
        done = False

        def hooked(real: Callable[..., Any]) -> Callable[..., Any]:
            def look(*args: Any, **kwargs: Any) -> Any:
                nonlocal done
                result = real(*args, **kwargs)
                if not done:
                    done = True
                    swap()
                return result

            return look

        for module, name in [(os.path, "realpath"), (os, "open"), (os, "stat"), (os, "readlink")]:
            monkeypatch.setattr(module, name, hooked(getattr(module, name)))

    return arm


async def test_a_symlink_swapped_in_after_the_check_is_not_followed_out(
    tools: LocalTools,
    workspace: Path,
    outside: Path,
    swap_after_first_look: Callable[[Callable[[], None]], None],
) -> None:
    assert path_within("later/secret.txt", ".", workspace)  # decided while later/ did not exist
    swap_after_first_look(lambda: (workspace / "later").symlink_to(outside))
    result = await read(tools, "later/secret.txt")
    assert result.is_error and SECRET not in result.text
    (workspace / "later").unlink()

    swap_after_first_look(lambda: (workspace / "later").symlink_to(outside))
    result = await write(tools, "later/new.txt")
    assert result.is_error
    assert not (outside / "new.txt").exists()


async def test_a_file_swapped_for_a_symlink_after_the_check_is_not_followed_out(
    tools: LocalTools,
    workspace: Path,
    outside: Path,
    swap_after_first_look: Callable[[Callable[[], None]], None],
) -> None:
    def swap() -> None:
        (workspace / "notes.md").unlink()
        (workspace / "notes.md").symlink_to(outside / "secret.txt")

    swap_after_first_look(swap)
    result = await write(tools, "notes.md", "overwritten")
    assert (outside / "secret.txt").read_text() == SECRET
    assert result.is_error or not (workspace / "notes.md").is_symlink()


async def test_a_symlink_to_outside_in_a_middle_part_is_refused(
    tools: LocalTools, workspace: Path, outside: Path
) -> None:
    (workspace / "sub" / "out").symlink_to(outside)
    for result in [
        await read(tools, "sub/out/secret.txt"),
        await write(tools, "sub/out/new.txt"),
        await write(tools, "sub/out/deeper/new.txt"),
    ]:
        assert result.is_error and "outside the workspace" in result.text
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert "sub/out/secret.txt" not in await listing(tools)


async def test_a_relative_symlink_climbing_out_is_refused(
    tools: LocalTools, workspace: Path, outside: Path
) -> None:
    (workspace / "sub" / "up").symlink_to(Path("..") / ".." / "outside" / "secret.txt")
    result = await read(tools, "sub/up")
    assert result.is_error and "outside the workspace" in result.text


@pytest.mark.parametrize("path", ["../outside/secret.txt", "sub/../../outside/secret.txt", ".."])
async def test_dot_dot_cannot_leave_the_workspace(tools: LocalTools, path: str) -> None:
    read_result, write_result = await read(tools, path), await write(tools, path)
    assert read_result.is_error and SECRET not in read_result.text
    assert write_result.is_error


async def test_dot_dot_inside_the_workspace_is_fine(tools: LocalTools, workspace: Path) -> None:
    assert (await read(tools, "sub/../notes.md")).text == "inside"
    assert not (await write(tools, "sub/../made.txt", "ok")).is_error
    assert (workspace / "made.txt").read_text() == "ok"


async def test_absolute_paths_only_inside(
    tools: LocalTools, workspace: Path, outside: Path
) -> None:
    assert (await read(tools, str(outside / "secret.txt"))).is_error
    assert (await write(tools, str(outside / "new.txt"))).is_error
    assert (await read(tools, "/etc/hostname")).is_error
    assert (await read(tools, "~/.bashrc")).is_error
    assert not (outside / "new.txt").exists()
    assert (await read(tools, str(workspace.resolve() / "notes.md"))).text == "inside"


async def test_symlinks_that_stay_inside_work(tools: LocalTools, workspace: Path) -> None:
    (workspace / "alias.md").symlink_to("notes.md")
    (workspace / "docs").symlink_to(workspace / "sub")  # absolute, and inside
    (workspace / "sub" / "back").symlink_to(Path("..") / "notes.md")

    assert (await read(tools, "alias.md")).text == "inside"
    assert (await read(tools, "docs/deep.txt")).text == "deep inside"
    assert (await read(tools, "sub/back")).text == "inside"
    assert not (await write(tools, "alias.md", "through the link")).is_error
    assert (workspace / "alias.md").is_symlink()
    assert (workspace / "notes.md").read_text() == "through the link"
    assert not (await write(tools, "docs/new.txt", "in sub")).is_error
    assert (workspace / "sub" / "new.txt").read_text() == "in sub"
    assert {"alias.md", "notes.md", "sub/back", "sub/deep.txt"} <= set(await listing(tools))


async def test_writing_a_hard_link_never_changes_the_file_outside(
    tools: LocalTools, workspace: Path, outside: Path
) -> None:
    os.link(outside / "secret.txt", workspace / "linked.txt")
    # A hard link is the file itself, so reading it reads that file (whoever linked it could
    # read it already); a write replaces the name in the workspace, never the file outside.
    assert (await read(tools, "linked.txt")).text == SECRET
    assert not (await write(tools, "linked.txt", "replaced")).is_error
    assert (outside / "secret.txt").read_text() == SECRET
    assert (workspace / "linked.txt").read_text() == "replaced"


async def test_a_fifo_is_refused_without_hanging(tools: LocalTools, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    read_result, write_result = await read(tools, "pipe"), await write(tools, "pipe")
    assert read_result.is_error and "not a regular file" in read_result.text
    assert write_result.is_error and "not a regular file" in write_result.text
    assert "pipe" not in await listing(tools)


async def test_folders_are_created_inside_and_listed(tools: LocalTools, workspace: Path) -> None:
    assert not (await write(tools, "a/b/c.txt", "hi")).is_error
    assert (workspace / "a" / "b" / "c.txt").read_text() == "hi"
    assert await listing(tools) == ["a/b/c.txt", "notes.md", "sub/deep.txt"]
    missing = await read(tools, "a/nothing.txt")
    assert missing.is_error and "There is no file" in missing.text
    folder = await read(tools, "sub")
    assert folder.is_error and "folder" in folder.text


@pytest.fixture
def no_leftovers(workspace: Path) -> Iterator[None]:
    yield
    assert not [p for p in workspace.rglob(".foundry-*.tmp")]


async def test_a_write_leaves_no_temporary_files(tools: LocalTools, no_leftovers: None) -> None:
    for index in range(3):
        assert not (await write(tools, f"file{index}.txt", "x" * index)).is_error


async def test_a_workspace_not_made_yet_is_empty_and_made_by_a_write(
    tmp_path: Path, mode: str
) -> None:
    tools = workspace_tools(tmp_path / "later" / "workspace")
    assert await listing(tools) == ["(the workspace is empty)"]
    assert "There is no file" in (await read(tools, "a.txt")).text
    assert not (await write(tools, "a.txt", "first")).is_error
    assert (tmp_path / "later" / "workspace" / "a.txt").read_text() == "first"
