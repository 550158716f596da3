"""Through `foundry gateway`, with the careful default policy and the reference filesystem server
rooted above the workspace (its own checks allow all of it): a symlink swapped in between the
policy's decision and the server's use never reads or writes what lies outside. Before the
kernel confined servers, 16 of 60 such reads and 15 of 60 writes escaped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.gateway.test_gateway_stdio import gateway, text_of
from tests.gateway.test_gateway_third_party import filesystem_agent
from tests.tools.escapes import NPM_BIN, _swapping

SECRET = "the crown jewels 4471"
SWAPS = 40

pytestmark = pytest.mark.skipif(
    not (NPM_BIN / "mcp-server-filesystem").exists()
    and os.environ.get("FOUNDRY_REQUIRE_NPM") != "1",
    reason="the npm test parts are not installed: npm ci --prefix tests/gateway/npm",
)


def without_loop_detection(agent: Path) -> None:
    config = json.loads((agent / "tsagent.json").read_text())
    for entry in config["supervisors"]:
        if entry["type"] == "policy":
            entry["config"]["loopDetection"] = False
    (agent / "tsagent.json").write_text(json.dumps(config))


async def test_a_symlink_swapped_in_after_the_decision_reaches_nothing_outside(
    tmp_path: Path, foundry_home: Path
) -> None:
    agent = filesystem_agent(tmp_path, root=tmp_path)  # its own checks allow all of tmp_path
    without_loop_detection(agent)  # each of the SWAPS calls is decided, none refused as a loop
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(SECRET)
    target = outside / "target.md"
    target.write_text("untouched")
    (agent / "race-w.md").write_text("inside")
    read_escapes = write_escapes = forwarded = 0
    async with gateway(agent, foundry_home) as client:
        with _swapping(agent / "race.md", outside / "secret.md"):
            for _ in range(SWAPS):
                result = await client.call_tool(
                    "fs__read_text_file", {"path": str(agent / "race.md")}
                )
                read_escapes += SECRET in text_of(result)
                forwarded += not text_of(result).startswith("Denied by policy")
        with _swapping(agent / "race-w.md", target):
            for index in range(SWAPS):
                result = await client.call_tool(
                    "fs__write_file", {"path": str(agent / "race-w.md"), "content": f"evil {index}"}
                )
                write_escapes += target.read_text() != "untouched"
                target.write_text("untouched")
    assert (read_escapes, write_escapes) == (0, 0)
    assert forwarded > 0  # the policy let some through: the kernel is what stopped them
