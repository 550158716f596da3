"""Where tsagent's own loader (@tsagent/core from npm) is installed for the tests, and the mark that
skips a test without it: except in CI (FOUNDRY_REQUIRE_NPM=1), where a missing loader fails."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

TSAGENT = Path(__file__).resolve().parent / "agent" / "tsagent"

needs_tsagent = pytest.mark.skipif(
    (shutil.which("node") is None or not (TSAGENT / "node_modules" / "@tsagent" / "core").is_dir())
    and os.environ.get("FOUNDRY_REQUIRE_NPM") != "1",
    reason="tsagent's loader is not installed: npm install --ignore-scripts --prefix "
    "tests/agent/tsagent",
)
