"""A save of several files changes all of them or none, refuses what is not a file, keeps modes."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from foundry.agent import AgentError, atomic, load_agent, save_agent

from .test_formats import snapshot

posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX file types and modes")
as_root = os.name == "posix" and os.geteuid() == 0


def files_in(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir())


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def three(tmp_path: Path) -> dict[Path, str]:
    """Three files with old content, and the new content a save gives them."""
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text(f"old {name}")
    return {tmp_path / name: f"new {name}" for name in ("a.txt", "b.txt", "c.txt")}


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    previous = os.umask(0o022)
    os.umask(previous)
    yield os.umask
    os.umask(previous)


def fail_replace_onto(monkeypatch: pytest.MonkeyPatch, target: Path, sources: str = ".tmp") -> None:
    """Make os.replace fail with EACCES when it moves a file named *`sources` onto `target`."""
    real_replace = os.replace

    def replace(source: str | Path, destination: str | Path) -> None:
        if Path(destination) == target and str(source).endswith(sources):
            raise PermissionError(13, "Permission denied", str(destination))
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", replace)


# Targets that are not files


def test_a_folder_where_a_file_goes_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    (tmp_path / "tsagent.json").write_text("{}")
    (tmp_path / "prompt.md").mkdir()
    with pytest.raises(AgentError, match=r"prompt\.md: is a folder, not a file") as caught:
        atomic.write_files_atomically(
            {tmp_path / "tsagent.json": '{"new": 1}', tmp_path / "prompt.md": "Hello"}
        )
    assert [problem.file for problem in caught.value.problems] == [tmp_path / "prompt.md"]
    assert (tmp_path / "tsagent.json").read_text() == "{}"
    assert files_in(tmp_path) == ["prompt.md", "tsagent.json"]


def test_saving_an_agent_whose_prompt_became_a_folder_changes_nothing(sample_agents: Path) -> None:
    assistant = sample_agents / "assistant"
    document = load_agent(assistant)
    assert document.agent is not None
    document.agent.settings.temperature = 0.1
    document.agent.system_prompt = "Changed."
    (assistant / "prompt.md").unlink()
    (assistant / "prompt.md").mkdir()
    before = snapshot(assistant)
    with pytest.raises(AgentError, match=r"prompt\.md: is a folder"):
        save_agent(document)
    assert snapshot(assistant) == before
    assert not [path for path in assistant.rglob(".*") if path.is_file()]


@posix_only
def test_a_fifo_is_refused_without_being_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "prompt.md"
    os.mkfifo(fifo)
    with pytest.raises(AgentError, match=r"prompt\.md: is a named pipe \(FIFO\), not a file"):
        atomic.write_file_atomically(fifo, "Hello")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert files_in(tmp_path) == ["prompt.md"]


@posix_only
def test_a_symlink_to_a_device_is_refused_and_left_alone(tmp_path: Path) -> None:
    link = tmp_path / "prompt.md"
    link.symlink_to("/dev/null")
    with pytest.raises(AgentError, match=r"prompt\.md: is a symbolic link to a device"):
        atomic.write_file_atomically(link, "Hello")
    assert os.readlink(link) == "/dev/null"
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)
    assert files_in(tmp_path) == ["prompt.md"]


def test_a_symlink_to_a_folder_or_to_nothing_is_refused(tmp_path: Path) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "to-folder.md").symlink_to(tmp_path / "folder")
    (tmp_path / "dangling.md").symlink_to(tmp_path / "missing.md")
    (tmp_path / "ok.md").write_text("old")
    files = {tmp_path / name: "new" for name in ("ok.md", "to-folder.md", "dangling.md")}
    with pytest.raises(AgentError) as caught:
        atomic.write_files_atomically(files)
    messages = [str(problem) for problem in caught.value.problems]
    assert len(messages) == 2, "every refused file is listed at once"
    assert "to-folder.md: is a symbolic link to a folder, not to a file" in messages[0]
    assert "dangling.md: is a symbolic link that leads nowhere" in messages[1]
    assert (tmp_path / "ok.md").read_text() == "old"
    assert not (tmp_path / "missing.md").exists()
    assert files_in(tmp_path) == ["dangling.md", "folder", "ok.md", "to-folder.md"]


def test_a_symlink_to_a_file_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    real = tmp_path / "shared" / "prompt.md"
    real.parent.mkdir()
    real.write_text("old")
    real.chmod(0o640)
    link = tmp_path / "agent" / "prompt.md"
    link.parent.mkdir()
    link.symlink_to(real)
    atomic.write_file_atomically(link, "new")
    assert link.is_symlink() and link.resolve() == real
    assert real.read_text() == "new"
    assert mode_of(real) == 0o640
    assert files_in(real.parent) == ["prompt.md"]
    assert files_in(link.parent) == ["prompt.md"]


def test_two_names_for_one_file_in_one_save_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("old")
    (tmp_path / "b.md").symlink_to(tmp_path / "a.md")
    with pytest.raises(AgentError, match=r"b\.md: is the same file as .*a\.md"):
        atomic.write_files_atomically({tmp_path / "a.md": "one", tmp_path / "b.md": "two"})
    assert (tmp_path / "a.md").read_text() == "old"


def test_a_folder_to_delete_is_refused_before_anything_is_written(
    tmp_path: Path, three: dict[Path, str]
) -> None:
    (tmp_path / "rules").mkdir()
    with pytest.raises(AgentError, match="rules: should be deleted but is a folder"):
        atomic.write_files_atomically(three, remove=(tmp_path / "rules",))
    assert all(path.read_text() == f"old {path.name}" for path in three)
    assert (tmp_path / "rules").is_dir()


def test_deleting_a_symlink_deletes_the_link_not_its_target(tmp_path: Path) -> None:
    (tmp_path / "real.md").write_text("kept")
    (tmp_path / "link.md").symlink_to(tmp_path / "real.md")
    atomic.write_files_atomically({tmp_path / "new.md": "x"}, remove=(tmp_path / "link.md",))
    assert files_in(tmp_path) == ["new.md", "real.md"]
    assert (tmp_path / "real.md").read_text() == "kept"


# Renames that fail midway


def test_a_rename_failing_on_the_second_of_three_files_puts_the_first_back(
    tmp_path: Path, three: dict[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first_inode = (tmp_path / "a.txt").stat().st_ino
    fail_replace_onto(monkeypatch, tmp_path / "b.txt")
    failure = r"b\.txt: could not be written \(Permission denied\); the save was undone"
    with pytest.raises(AgentError, match=failure) as caught:
        atomic.write_files_atomically(three)
    assert [problem.file for problem in caught.value.problems] == [tmp_path / "b.txt"]
    assert [path.read_text() for path in three] == ["old a.txt", "old b.txt", "old c.txt"]
    assert (tmp_path / "a.txt").stat().st_ino == first_inode, "the original itself is back"
    assert files_in(tmp_path) == ["a.txt", "b.txt", "c.txt"], "no temporary or backup file"


def test_a_failed_save_removes_the_new_files_it_had_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "old.txt").write_text("old")
    fail_replace_onto(monkeypatch, tmp_path / "old.txt")
    with pytest.raises(AgentError, match=r"old\.txt: could not be written"):
        atomic.write_files_atomically({tmp_path / "created.txt": "new", tmp_path / "old.txt": "x"})
    assert files_in(tmp_path) == ["old.txt"]
    assert (tmp_path / "old.txt").read_text() == "old"


def test_nothing_is_deleted_when_a_rename_fails(
    tmp_path: Path, three: dict[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "gone.txt").write_text("still here")
    fail_replace_onto(monkeypatch, tmp_path / "c.txt")
    with pytest.raises(AgentError, match=r"c\.txt: could not be written"):
        atomic.write_files_atomically(three, remove=(tmp_path / "gone.txt",))
    assert (tmp_path / "gone.txt").read_text() == "still here"
    assert [path.read_text() for path in three] == ["old a.txt", "old b.txt", "old c.txt"]
    assert files_in(tmp_path) == ["a.txt", "b.txt", "c.txt", "gone.txt"]


def test_a_deletion_that_fails_undoes_the_writes_and_earlier_deletions(
    tmp_path: Path, three: dict[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "one.txt").write_text("one")
    (tmp_path / "two.txt").write_text("two")
    real_rename = os.rename

    def rename(source: str | Path, destination: str | Path) -> None:
        if Path(source).name == "two.txt":
            raise PermissionError(13, "Permission denied", str(source))
        real_rename(source, destination)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(AgentError, match=r"two\.txt: could not be written"):
        atomic.write_files_atomically(three, remove=(tmp_path / "one.txt", tmp_path / "two.txt"))
    assert [path.read_text() for path in three] == ["old a.txt", "old b.txt", "old c.txt"]
    assert (tmp_path / "one.txt").read_text() == "one"
    assert files_in(tmp_path) == ["a.txt", "b.txt", "c.txt", "one.txt", "two.txt"]


def test_a_file_that_turns_into_a_folder_after_the_check_fails_the_whole_save(
    tmp_path: Path, three: dict[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_stage = atomic._stage

    def stage_then_swap(path: Path, content: str) -> Path:
        staged = real_stage(path, content)
        if path.name == "c.txt":  # all checked and staged: now b.txt becomes a folder
            (tmp_path / "b.txt").unlink()
            (tmp_path / "b.txt").mkdir()
        return staged

    monkeypatch.setattr(atomic, "_stage", stage_then_swap)
    with pytest.raises(AgentError, match=r"b\.txt: could not be written"):
        atomic.write_files_atomically(three)
    assert (tmp_path / "a.txt").read_text() == "old a.txt"
    assert (tmp_path / "b.txt").is_dir()
    assert (tmp_path / "c.txt").read_text() == "old c.txt"
    assert files_in(tmp_path) == ["a.txt", "b.txt", "c.txt"]


def test_a_file_that_cannot_be_put_back_keeps_its_backup_and_says_where(
    tmp_path: Path, three: dict[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    real_replace = os.replace

    def replace(source: str | Path, destination: str | Path) -> None:
        name = Path(destination).name
        if (name == "b.txt" and str(source).endswith(".tmp")) or (
            name == "a.txt" and str(source).endswith(".bak")
        ):
            raise PermissionError(13, "Permission denied", str(destination))
        real_replace(source, destination)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(AgentError) as caught:
        atomic.write_files_atomically(three)
    failed, stuck = caught.value.problems
    assert failed.file == tmp_path / "b.txt"
    assert stuck.file == tmp_path / "a.txt"
    assert "could not be put back as it was" in stuck.message
    backups = [path for path in tmp_path.iterdir() if path.name.endswith(".bak")]
    assert len(backups) == 1 and str(backups[0]) in stuck.message
    assert backups[0].read_text() == "old a.txt"
    assert (tmp_path / "b.txt").read_text() == "old b.txt"
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(".tmp")]


def test_a_file_system_without_hard_links_still_gets_undone(
    tmp_path: Path, three: dict[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_link(*args: object, **kwargs: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    atomic.write_files_atomically({tmp_path / "a.txt": "new a.txt"})
    assert (tmp_path / "a.txt").read_text() == "new a.txt"
    fail_replace_onto(monkeypatch, tmp_path / "c.txt")
    with pytest.raises(AgentError, match=r"c\.txt: could not be written"):
        atomic.write_files_atomically(three)
    assert [path.read_text() for path in three] == ["new a.txt", "old b.txt", "old c.txt"]
    assert files_in(tmp_path) == ["a.txt", "b.txt", "c.txt"]


def test_a_successful_save_leaves_no_temporary_or_backup_file(
    tmp_path: Path, three: dict[Path, str]
) -> None:
    (tmp_path / "gone.txt").write_text("x")
    atomic.write_files_atomically(
        {**three, tmp_path / "sub" / "d.txt": "new d"}, remove=(tmp_path / "gone.txt",)
    )
    assert [path.read_text() for path in three] == ["new a.txt", "new b.txt", "new c.txt"]
    assert files_in(tmp_path) == ["a.txt", "b.txt", "c.txt", "sub"]
    assert files_in(tmp_path / "sub") == ["d.txt"]


# Modes, owners and content


@posix_only
@pytest.mark.parametrize("mode", [0o644, 0o755, 0o600, 0o640])
def test_a_rewritten_file_keeps_its_mode(
    tmp_path: Path, mode: int, umask: Callable[[int], None]
) -> None:
    umask(0o077)
    target = tmp_path / "file.txt"
    target.write_text("old")
    target.chmod(mode)
    atomic.write_file_atomically(target, "new")
    assert target.read_text() == "new"
    assert mode_of(target) == mode


@posix_only
@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_mode_the_umask_gives(
    tmp_path: Path, mask: int, mode: int, umask: Callable[[int], None]
) -> None:
    umask(mask)
    atomic.write_file_atomically(tmp_path / "new.txt", "new")
    assert mode_of(tmp_path / "new.txt") == mode


@pytest.mark.skipif(not as_root, reason="only root may give a file to another user")
def test_a_rewritten_file_keeps_its_owner_and_group(tmp_path: Path) -> None:
    target = tmp_path / "file.txt"
    target.write_text("old")
    os.chown(target, 4321, 4322)
    atomic.write_file_atomically(target, "new")
    assert (target.stat().st_uid, target.stat().st_gid) == (4321, 4322)


@posix_only
def test_a_rewritten_file_keeps_a_group_this_user_belongs_to(tmp_path: Path) -> None:
    others = [group for group in os.getgroups() if group != os.getegid()]
    if not others and not as_root:
        pytest.skip("this user belongs to one group only")
    group = others[0] if others else 4322
    target = tmp_path / "file.txt"
    target.write_text("old")
    os.chown(target, -1, group)
    atomic.write_file_atomically(target, "new")
    assert target.stat().st_gid == group


@pytest.mark.skipif(os.name != "posix" or as_root, reason="root may write to read-only folders")
def test_a_read_only_folder_fails_the_save_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    folder.mkdir()
    (folder / "a.txt").write_text("old")
    (folder / "b.txt").write_text("old")
    folder.chmod(0o555)
    try:
        with pytest.raises(PermissionError) as caught:
            atomic.write_files_atomically({folder / "a.txt": "new", folder / "b.txt": "new"})
        assert caught.value.filename == str(folder / "a.txt")
        assert [(folder / name).read_text() for name in ("a.txt", "b.txt")] == ["old", "old"]
        assert files_in(folder) == ["a.txt", "b.txt"]
    finally:
        folder.chmod(0o755)


def test_crlf_and_non_ascii_content_is_written_byte_for_byte(tmp_path: Path) -> None:
    content = "first\r\nzweite Zeile: ü ß\r\n漢字 🙂\nlone\rcarriage\r\n"
    atomic.write_files_atomically({tmp_path / "a.md": content, tmp_path / "b.md": content})
    assert (tmp_path / "a.md").read_bytes() == content.encode("utf-8")
    assert (tmp_path / "b.md").read_bytes() == content.encode("utf-8")
