"""Stores opened on several threads of one process at once all come up migrated."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from foundry.store import Store


def test_stores_opened_on_several_threads_at_once_are_all_migrated(tmp_path: Path) -> None:
    urls = [f"sqlite:///{tmp_path / f'db{number}.sqlite3'}" for number in range(4)]
    urls += [urls[0]] * 2  # the same file twice as well

    def open_and_count(url: str) -> int:
        with Store.open(url) as store:
            return len(store.sessions.list())

    with ThreadPoolExecutor(len(urls)) as pool:
        assert list(pool.map(open_and_count, urls)) == [0] * len(urls)
