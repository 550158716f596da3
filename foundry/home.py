"""Where Foundry keeps its files and its database: platform directories, or all under
FOUNDRY_HOME; FOUNDRY_DATABASE_URL for a database elsewhere."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from platformdirs import PlatformDirs

APP_NAME = "foundry"
APP_ID = "dev.foundry.Foundry"
DATABASE_URL_VARIABLE = "FOUNDRY_DATABASE_URL"
PRIVATE_FOLDER = 0o700  # what Foundry makes is for its user only
PRIVATE_FILE = 0o600


def shipped_path(*parts: str) -> Path:
    """A file shipped beside the `foundry` package (agents/, resources/): the checkout's root
    when run from source, the bundle's folder in the packaged app."""
    return Path(__file__).resolve().parent.parent.joinpath(*parts)


@dataclass(frozen=True)
class FoundryHome:
    """The folders Foundry writes to; `FOUNDRY_HOME` moves all of them under one folder."""

    config_dir: Path
    data_dir: Path

    @property
    def database_path(self) -> Path:
        return self.data_dir / "foundry.sqlite3"

    @classmethod
    def from_environment(cls) -> FoundryHome:
        root = os.environ.get("FOUNDRY_HOME")
        if root:
            base = Path(root).expanduser()
            return cls(config_dir=base / "config", data_dir=base / "data")
        dirs = PlatformDirs(APP_NAME, appauthor=False)
        return cls(config_dir=Path(dirs.user_config_dir), data_dir=Path(dirs.user_data_dir))

    def ensure(self) -> FoundryHome:
        """Make the folders, if they are not there, for their owner only (they hold the store,
        the log, the API token)."""
        self.config_dir.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER)
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=PRIVATE_FOLDER)
        return self


def cache_dir() -> Path:
    """Where Foundry keeps what it can make again (the embedded model's saved prompts): the
    platform's cache folder, or `cache` under FOUNDRY_HOME."""
    root = os.environ.get("FOUNDRY_HOME")
    if root:
        return Path(root).expanduser() / "cache"
    return Path(PlatformDirs(APP_NAME, appauthor=False).user_cache_dir)


def database_url(home: FoundryHome | None = None) -> str:
    """`FOUNDRY_DATABASE_URL` when set, else the SQLite file in Foundry's data folder."""
    configured = os.environ.get(DATABASE_URL_VARIABLE, "").strip()
    if configured:
        return normalise_url(configured)
    home = (home or FoundryHome.from_environment()).ensure()
    return f"sqlite:///{home.database_path}"


def normalise_url(url: str) -> str:
    """PostgreSQL URLs without a driver use psycopg 3, the driver Foundry installs."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url
