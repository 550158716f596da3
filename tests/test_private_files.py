"""What Foundry writes about its user's work is theirs alone: the store, its write-ahead log and
shared-memory files, and the log are made 0600, the folders Foundry makes 0700 (they were
readable by everyone under the usual umask)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from foundry.home import FoundryHome
from foundry.logs import configure_logging
from foundry.store import ApprovalRecord, Store


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    """The umask most systems give a user: files 0644, folders 0755 unless Foundry says."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def test_the_store_and_its_wal_and_shared_memory_files_are_the_owners_only(
    foundry_home: Path,
) -> None:
    with Store.open() as store:
        store.approvals.create(ApprovalRecord(session_id="s", agent_id="a", tool="t.x"))
        database = FoundryHome.from_environment().database_path
        written = [database, database.with_name(database.name + "-wal")]
        written.append(database.with_name(database.name + "-shm"))
        assert [mode_of(path) for path in written] == [0o600, 0o600, 0o600]
    data = FoundryHome.from_environment()
    assert mode_of(data.data_dir) == mode_of(data.config_dir) == 0o700


def test_a_store_at_a_url_is_made_the_owners_only(tmp_path: Path) -> None:
    database = tmp_path / "elsewhere.sqlite3"
    with Store.open(f"sqlite:///{database}"):
        assert mode_of(database) == 0o600


def test_a_store_already_there_keeps_its_permissions(tmp_path: Path) -> None:
    """A file the user shared on purpose (made by another tool, or chmod-ed) is left as it is."""
    database = tmp_path / "shared.sqlite3"
    with Store.open(f"sqlite:///{database}"):
        pass
    database.chmod(0o640)
    with Store.open(f"sqlite:///{database}"):
        assert mode_of(database) == 0o640


def test_the_log_and_its_rotations_are_the_owners_only(foundry_home: Path) -> None:
    path = configure_logging()
    assert path is not None
    handler = next(
        h for h in logging.getLogger().handlers if getattr(h, "baseFilename", "") == str(path)
    )
    try:
        logging.getLogger("foundry.test").warning("written")
        handler.doRollover()  # type: ignore[attr-defined]
        logging.getLogger("foundry.test").warning("written after the rotation")
        assert mode_of(path) == mode_of(path.with_name(path.name + ".1")) == 0o600
        assert mode_of(path.parent) == 0o700
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
