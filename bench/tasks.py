"""Task supervision on a fixed set of scripted tasks, measured in one run.

Each task of a small project (a geometry library) runs twice through the engine with scripted
agents: once with task-aware context (the project's goal, completed tasks and queue only when the
task refers to them) and once with the full context. Printed per task and in total: the size of
what the agents were sent (from the task's `agent_consulted` events), and the supervisor calls
and iterations (from TaskMetrics). Targets: task-aware prompts 30-50% smaller; 1-2 supervisor
calls per task that needs a plan.

Run: python bench/tasks.py
"""

from __future__ import annotations

import json
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from foundry.metrics import load_task_log, task_metrics
from foundry.runtime.engine import Engine
from foundry.store import Store

PROJECT = {
    "root": "shapes",
    "goal": "Build `shapes`, a small geometry library with a command line, documented, typed and "
    "tested, that a teacher can install with pip and use in a classroom without reading code.",
    "completed": [
        {"id": f"T{n:02}", "summary": summary}
        for n, summary in enumerate(
            [
                "Created the package layout with pyproject.toml, src/shapes and a tests folder.",
                "Added Point with distance_to and a __repr__ that round-trips through eval.",
                "Added Circle(center, radius) with area; radius must be positive, else ValueError.",
                "Added a click-based command line: `shapes area circle --radius 2`.",
                "Configured ruff and mypy in CI; the package type-checks in strict mode.",
                "Wrote the README's first section: installation with pip and an example.",
                "Added Rectangle with area and perimeter and a from_corners constructor.",
                "Published a test release to the test index and installed it in a clean venv.",
            ],
            1,
        )
    ],
    "blocked": [
        {"id": "T09", "summary": "Docs site: waits for the CLI reference pages."},
        {"id": "T10", "summary": "Release 1.0: waits for the polygon family and the docs site."},
    ],
    "queue": [
        "CLI reference pages generated from click's help",
        "Polygon base class with area by the shoelace formula",
        "Triangle and Hexagon as Polygon subclasses",
        "Docs site with mkdocs",
        "Release 1.0",
    ],
}
DONE = {"text": "Done. STATUS: done"}


def write(path: str, content: str) -> dict[str, Any]:
    return {"name": "workspace.write_file", "arguments": {"path": path, "content": content}}


def plan(prompt: str, operator: str = "coder") -> dict[str, Any]:
    return {
        "json": {
            "understanding": prompt,
            "complexity": 3,
            "confidence": 0.8,
            "steps": [{"step": 1, "action": prompt, "params": {}, "fallback": None}],
            "operator": operator,
            "operator_prompt": prompt,
            "timeout_seconds": 10,
            "max_retries": 0,
        }
    }


@dataclass
class BenchTask:
    name: str
    goal: str
    criteria: list[Any]
    coder: list[dict[str, Any]]
    planner: list[dict[str, Any]] = field(default_factory=list)
    senior: list[dict[str, Any]] = field(default_factory=list)


def file_task(name: str, goal: str, path: str, code: str, *words: str) -> BenchTask:
    criteria = [{"text": f"{path} holds it", "checks": [{"keywords": list(words), "within": path}]}]
    return BenchTask(name, goal, criteria, [{"tool_calls": [write(path, code)]}, DONE])


def answer_task(name: str, goal: str, answer: str, *words: str) -> BenchTask:
    criteria = [{"text": "the answer is right", "checks": [{"reply": list(words)}]}]
    return BenchTask(name, goal, criteria, [{"text": f"{answer} STATUS: done"}])


def two_criteria(task: BenchTask, text: str, *words: str) -> BenchTask:
    check = {"text": text, "checks": [{"keywords": list(words)}]}
    return BenchTask(task.name, task.goal, [*task.criteria, check], task.coder, [plan(task.goal)])


TASKS = [
    file_task(
        "circle-area",
        "Add `Circle.area` to circle.py.",
        "circle.py",
        "import math\nclass Circle:\n    def area(self):\n        return math.pi\n",
        "area",
    ),
    file_task(
        "circumference",
        "Extend the previous implementation of Circle with `circumference`.",
        "circle.py",
        "def circumference(r):\n    return 2 * r\n",
        "circumference",
    ),
    two_criteria(
        file_task(
            "square",
            "Add `Square` with area and then export it from __init__.py.",
            "square.py",
            "class Square:\n    def area(self): ...\n__all__ = ['Square']\n",
            "Square",
        ),
        "Square is exported",
        "__all__",
    ),
    two_criteria(
        file_task(
            "tests",
            "Write tests for Circle and Rectangle.",
            "test_shapes.py",
            "def test_circle():\n    assert True\ndef test_rectangle():\n    assert True\n",
            "test_circle",
        ),
        "Rectangle is tested",
        "test_rectangle",
    ),
    file_task(
        "readme-cli",
        "Update the README with the command line usage.",
        "README.md",
        "# shapes\n\nRun `shapes area circle --radius 2`.\n",
        "shapes area",
    ),
    file_task(
        "entry-point",
        "Configure the `shapes` entry point in pyproject.toml.",
        "pyproject.toml",
        "[project.scripts]\nshapes = 'shapes.cli:main'\n",
        "project.scripts",
    ),
    file_task(
        "json-flag",
        "Add a `--json` flag to the command line, building on the earlier command line work.",
        "cli.py",
        "def main(json=False):\n    pass\n",
        "json",
    ),
    answer_task(
        "unblock",
        "Which queue item unblocks the blocked docs site task?",
        "The CLI reference pages unblock it.",
        "CLI reference",
    ),
    answer_task(
        "mission",
        "Summarise the project goal in one sentence.",
        "A geometry library with a command line for classrooms.",
        "geometry",
    ),
    file_task(
        "triangle",
        "Add `Triangle.area` using Heron's formula.",
        "triangle.py",
        "class Triangle:\n    def area(self):\n        s = 0\n        return s\n",
        "Triangle",
    ),
    BenchTask(
        "polygon",
        "Refactor the shapes into a Polygon base class and then Hexagon.",
        [
            {
                "text": "Polygon exists",
                "checks": [{"ast": {"file": "polygon.py", "class": "Polygon"}}],
            },
            {
                "text": "Hexagon exists",
                "checks": [{"ast": {"file": "polygon.py", "class": "Hexagon"}}],
            },
        ],
        coder=[DONE, DONE],
        planner=[
            plan("Write polygon.py with Polygon and Hexagon."),
            {
                "json": {
                    "analysis": "the coder writes nothing",
                    "action": "CHANGE_AGENT",
                    "new_operator": "senior",
                }
            },
        ],
        senior=[
            {
                "tool_calls": [
                    write("polygon.py", "class Polygon: ...\nclass Hexagon(Polygon): ...\n")
                ]
            },
            DONE,
        ],
    ),
    BenchTask(
        "hexagon-retry",
        "Add `Hexagon.area` and then `Hexagon.perimeter`.",
        [
            {"text": "area", "checks": [{"keywords": ["def area"], "within": "hexagon.py"}]},
            {
                "text": "perimeter",
                "checks": [{"keywords": ["def perimeter"], "within": "hexagon.py"}],
            },
        ],
        coder=[
            {"tool_calls": [write("hexagon.py", "class Hexagon:\n    def area(self): ...\n")]},
            DONE,
            {
                "tool_calls": [
                    write(
                        "hexagon.py",
                        "class Hexagon:\n    def area(self): ...\n    def perimeter(self): ...\n",
                    )
                ]
            },
            DONE,
        ],
        planner=[plan("Write hexagon.py with area and perimeter.")],
    ),
]


def write_agent(folder: Path, turns: list[dict[str, Any]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "turns.json").write_text(json.dumps({"turns": turns}))
    settings = {"model": "scripted:turns.json", "toolPermission": "never"}
    (folder / "tsagent.json").write_text(
        json.dumps({"metadata": {"name": folder.name}, "settings": settings})
    )
    (folder / "prompt.md").write_text("You work on the shapes library.")


def write_task(root: Path, task: BenchTask, context: str) -> Path:
    folder = root / f"{task.name}-{context}"
    write_agent(folder / "coder", task.coder)
    spec: dict[str, Any] = {
        "name": task.name,
        "goal": task.goal,
        "criteria": task.criteria,
        "operators": ["coder"] + (["senior"] if task.senior else []),
        "project": PROJECT,
        "context": context,
        "limits": {"interrogationRounds": 0, "stepTimeouts": [20], "maxRetries": 0},
    }
    if task.planner:
        write_agent(folder / "planner", task.planner)
        spec["supervisor"] = "planner"
    if task.senior:
        write_agent(folder / "senior", task.senior)
    (folder / "task.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return folder / "task.yaml"


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        store = Store.open(f"sqlite:///{root / 'bench.db'}")
        with Engine(store) as engine:
            for task in TASKS:
                figures = {}
                for context in ("aware", "full"):
                    outcome = engine.submit(
                        engine.run_task(write_task(root, task, context))
                    ).result(60)
                    figures[context] = task_metrics(
                        load_task_log(store, outcome.task_id), outcome.task_id
                    )
                rows.append((task.name, figures["aware"], figures["full"]))
        store.close()

    header = ("task", "status", "iter", "sup.calls", "aware", "full", "smaller")
    print("{:15} {:10} {:>4} {:>9} {:>7} {:>7} {:>8}".format(*header))
    reductions, planned_calls = [], []
    for name, aware, full in rows:
        reduction = 100 * (1 - aware.prompt_chars / full.prompt_chars)
        reductions.append(reduction)
        if aware.supervisor_calls:
            planned_calls.append(aware.supervisor_calls)
        print(
            f"{name:15} {aware.status:10} {aware.iterations:>4} {aware.supervisor_calls:>9} "
            f"{aware.prompt_chars:>7} {full.prompt_chars:>7} {reduction:>7.1f}%"
        )
    total_aware = sum(a.prompt_chars for _, a, _ in rows)
    total_full = sum(f.prompt_chars for _, _, f in rows)
    print(
        f"\nprompt size, task-aware vs full context: {total_aware} vs {total_full} characters, "
        f"{100 * (1 - total_aware / total_full):.1f}% smaller in total "
        f"(median per task {statistics.median(reductions):.1f}%; target 30-50%)"
    )
    print(
        f"supervisor calls per task: {statistics.mean(a.supervisor_calls for _, a, _ in rows):.2f} "
        f"over all {len(rows)} tasks, {statistics.mean(planned_calls):.2f} over the "
        f"{len(planned_calls)} that needed a plan (target 1-2)"
    )


if __name__ == "__main__":
    main()
