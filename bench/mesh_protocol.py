"""Send agent-mesh's own request shapes to agent-mesh and to `foundry serve`; print where the
answers differ (status codes, fields, values).

    python bench/mesh_protocol.py --agent-mesh /path/to/agent-mesh [--record]

agent-mesh (0.8.6, built from its source) listens on every interface, so the bench runs itself
inside a network namespace of its own (`unshare -n`, as root) where only loopback exists. It
starts two agent-mesh servers (one with a 1 s approval timeout, for the timed-out answers) and
`foundry serve` over a fresh store, makes each request's record fresh on both (a pending
approval comes from a real tool call on agent-mesh, and is written to the store for Foundry,
as a session would), sends the request to both, and compares the answers' shapes
(tests/api/mesh_shapes.py). `--record` saves agent-mesh's shapes to tests/api/mesh_answers.json,
which tests/api/test_mesh_protocol.py holds Foundry to.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from foundry.runtime.approvals import Approvals
from foundry.store import ApprovalRecord, Store
from foundry.store.tables import utc_now
from tests.api.mesh_shapes import (
    ANSWERS,
    GRANT,
    PARAMS,
    REQUESTS,
    RULE,
    TOOL,
    MeshRequest,
    differences,
    shape,
)

IN_NAMESPACE = "FOUNDRY_BENCH_MESH_NETNS"
TOKEN = "bench-mesh-token-0123456789"
MESH_PORT, QUICK_MESH_PORT, FOUNDRY_PORT = 9090, 9091, 8787
WAIT_S = 20.0
SERVE = "import sys; from foundry.cli import main; sys.exit(main())"
MESH_CONFIG = """\
port: {port}
approval:
  timeout_seconds: {timeout}
supervisor:
  enabled: true
cli_tools:
  - name: files
    bin: "true"
    default_action: human_approval
    commands:
      write: {{}}
policies:
  - name: {rule}
    agent: "*"
    rules:
      - tools: ["files.*"]
        action: human_approval
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--agent-mesh",
        required=True,
        type=Path,
        help="the agent-mesh binary: version 0.8.6 built from its source (github.com/KTCrisis/"
        "agent-mesh, `go build`); the bench runs as root for its network namespace",
    )
    parser.add_argument("--record", action="store_true", help=f"save agent-mesh's to {ANSWERS}")
    parser.add_argument("--only", help="send only the requests whose name holds this text")
    args = parser.parse_args()
    if os.environ.get(IN_NAMESPACE) != "1":
        return _in_own_network(sys.argv)
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    with tempfile.TemporaryDirectory(prefix="bench-mesh-") as folder:
        chosen = [r for r in REQUESTS if args.only is None or args.only in r.name]
        return _compare(args.agent_mesh.resolve(), Path(folder), chosen, args.record)


def _in_own_network(argv: list[str]) -> int:
    print("running in a network namespace of its own (unshare -n): loopback only", flush=True)
    command = ["unshare", "-n", "--", sys.executable, *argv]
    return subprocess.run(command, env={**os.environ, IN_NAMESPACE: "1"}).returncode


def _compare(binary: Path, folder: Path, requests: list[MeshRequest], record: bool) -> int:
    with (
        _mesh(binary, folder / "mesh", MESH_PORT, 300) as mesh,
        _mesh(binary, folder / "quick", QUICK_MESH_PORT, 1) as quick,
        _foundry(folder / "foundry") as foundry,
    ):
        answers: dict[str, Any] = {}
        total = 0
        for request in requests:
            try:
                mesh_shape = mesh.answer(request, quick)
            except TimeoutError as error:
                print(f"{request.name}: skipped, agent-mesh's record did not appear: {error}")
                continue
            foundry_shape = foundry.answer(request)
            answers[request.name] = mesh_shape
            found = differences(mesh_shape, foundry_shape)
            total += len(found)
            _report(request, found)
        print(f"\n{total} differences in {len(requests)} requests")
    if record:
        ANSWERS.write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")
        print(f"agent-mesh's answers saved to {ANSWERS}")
    return 0


def _report(request: MeshRequest, found: list[str]) -> None:
    mark = "same" if not found else f"{len(found)} differ"
    print(f"{request.method:6} {request.path:36} {request.name}: {mark}")
    for line in found:
        print(f"         {line}")


class MeshServer:
    """An agent-mesh server whose approvals come from real tool calls, left waiting."""

    def __init__(self, url: str) -> None:
        self.client = httpx.Client(base_url=url, timeout=WAIT_S)
        self._url = url
        self._calls: list[threading.Thread] = []
        self._attempts = itertools.count()
        self.last_call: httpx.Response | None = None

    def answer(self, request: MeshRequest, quick: MeshServer) -> dict[str, Any]:
        server = quick if request.target == "timed_out" else self
        record_id = server.make(request)
        response = server.client.request(request.method, request.url(record_id), **request.body())
        server.settle()
        return shape(response.status_code, response.json())

    def settle(self) -> None:
        """Deny what is still pending, so that no call is left waiting for the next request."""
        for item in self.client.get("/approvals", params={"status": "pending"}).json():
            self.client.post(f"/approvals/{item['id']}/deny")

    def make(self, request: MeshRequest) -> str:
        if request.target == "grant":
            return str(self.client.post("/grants", json=GRANT).json()["id"])
        if request.target == "none":
            return ""
        approval_id = self._pending(request.agent)
        if request.target == "resolved":
            self.client.post(f"/approvals/{approval_id}/approve")
            _until(lambda: self._traced(request.agent, approval_id))
        if request.target == "timed_out":
            _until(lambda: self._status(approval_id) == "timeout")
        return approval_id

    def _pending(self, agent: str) -> str:
        known = {item["id"] for item in self.client.get("/approvals").json()}
        call = threading.Thread(target=self._call, args=(agent,), daemon=True)
        call.start()
        self._calls.append(call)
        new: list[str] = []

        def arrived() -> bool:
            new[:] = [item["id"] for item in self.client.get("/approvals").json()]
            new[:] = [one for one in new if one not in known]
            return bool(new)

        _until(arrived, f"a pending approval (the last call answered {self._last_answer()})")
        return new[0]

    def _last_answer(self) -> str:
        call = self.last_call
        return "nothing yet" if call is None else f"{call.status_code} {call.text[:200]}"

    def _call(self, agent: str) -> None:
        headers = {"Authorization": f"Bearer agent:{agent}"}
        with contextlib.suppress(httpx.HTTPError):  # the server stopped with the call waiting
            self.last_call = httpx.post(
                f"{self._url}/tool/{TOOL}",
                json={"params": {**PARAMS, "attempt": next(self._attempts)}},
                headers=headers,
                timeout=600,
            )

    def _status(self, approval_id: str) -> str:
        return str(self.client.get(f"/approvals/{approval_id}").json().get("status"))

    def _traced(self, agent: str, approval_id: str) -> bool:
        """Whether the approved call ran and its trace says so."""
        entries = self.client.get("/traces", params={"agent": agent}).json()
        return any(e.get("approval_id") == approval_id and e.get("status_code") for e in entries)


class FoundryServer:
    """`foundry serve` over a store this bench writes approvals to, as a session's gate does."""

    def __init__(self, url: str, store: Store) -> None:
        self.client = httpx.Client(base_url=f"{url}/t/{TOKEN}", timeout=WAIT_S)
        self.store = store

    def answer(self, request: MeshRequest) -> dict[str, Any]:
        record_id = self.make(request)
        response = self.client.request(request.method, request.url(record_id), **request.body())
        body = response.json() if response.content else None
        return shape(response.status_code, body)

    def make(self, request: MeshRequest) -> str:
        if request.target == "grant":
            return str(self.client.post("/grants", json=GRANT).json()["id"])
        if request.target == "none":
            return ""
        approval = self.store.approvals.create(
            ApprovalRecord(
                agent_id=request.agent,
                tool=TOOL,
                params={**PARAMS, "attempt": 0},
                policy_rule=RULE,
                expires_at=utc_now() + timedelta(minutes=5),
            )
        )
        if request.target == "resolved":
            self.client.post(f"/approvals/{approval.id}/approve")
        if request.target == "timed_out":
            Approvals(self.store).resolve(approval.id, "timed_out", "timeout", level="timeout")
        return approval.id


@contextmanager
def _mesh(binary: Path, folder: Path, port: int, timeout_s: int) -> Iterator[MeshServer]:
    folder.mkdir()
    config = folder / "config.yaml"
    config.write_text(MESH_CONFIG.format(port=port, timeout=timeout_s, rule=RULE))
    log = (folder / "agent-mesh.log").open("w")
    process = subprocess.Popen(
        [str(binary), "--config", str(config)], cwd=folder, stdout=log, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _until(lambda: _answers(f"{url}/health"), f"agent-mesh on port {port}")
        yield MeshServer(url)
    finally:
        _stop(process)
        log.close()


@contextmanager
def _foundry(folder: Path) -> Iterator[FoundryServer]:
    folder.mkdir()
    database = f"sqlite:///{folder / 'foundry.sqlite3'}"
    env = {
        **os.environ,
        "FOUNDRY_HOME": str(folder),
        "FOUNDRY_DATABASE_URL": database,
        "FOUNDRY_API_TOKEN": TOKEN,
    }
    log = (folder / "serve.log").open("w")
    command = [sys.executable, "-c", SERVE, "serve", "--port", str(FOUNDRY_PORT)]
    process = subprocess.Popen(command, env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{FOUNDRY_PORT}"
    try:
        _until(lambda: _answers(f"{url}/health"), "foundry serve")
        with Store.open(database) as store:
            yield FoundryServer(url, store)
    finally:
        _stop(process)
        log.close()


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


def _until(condition: Callable[[], bool], what: str = "the record") -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"bench: {what} did not appear within {WAIT_S:g} s")
        time.sleep(0.05)


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


if __name__ == "__main__":
    raise SystemExit(main())
