"""The task file: a goal, its acceptance criteria, the agents that work on it, a workspace, limits.

    name: add-greeting
    goal: Add a function `greet(name)` to greetings.py that returns "Hello, NAME!".
    criteria:
      - text: greetings.py defines greet(name)
        checks:
          - ast: {file: greetings.py, function: greet}
          - keywords: [Hello]
      - text: the tests pass
        checks: [{command: python -m pytest -q}]
    operators: [../agents/coder]       # or {name: path}; the first is the default
    supervisor: ../agents/planner       # plans and rescues (optional)
    helper: ../agents/reviewer          # verifies uncertain criteria (optional)
    team: {researcher: {agent: ../agents/researcher}}   # delegation by the supervisor (optional)
    workspace: workspace                 # relative to this file; created if missing
    limits: {maxIterations: 5, stepTimeouts: [5, 10, 30], maxRetries: 2, rescueAfter: 2}

A file with errors is rejected with every problem at once, each naming the file, the field and
the line, as agent files are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from foundry.agent.checks import validate_agent
from foundry.agent.document import locate_problems
from foundry.agent.problems import AgentError, AgentProblem
from foundry.agent.syntax import parse_yaml, plain, read_text
from foundry.agent.yamlfile import YamlSource

TaskType = Literal["implementation", "configuration", "testing", "documentation", "refactoring"]
STOP_WORDS = frozenset(
    re.findall(
        r"\w+",
        "the a an and or of to in on for with that this is are be it its has have must should "
        "from into by as at file files function class defines define return returns",
    )
)


class TaskModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class AstPattern(TaskModel):
    """A Python construct that must exist in `file` (a glob inside the workspace)."""

    file: str = "**/*.py"
    function: str | None = None
    class_: str | None = Field(default=None, alias="class")
    imports: str | None = None
    call: str | None = None

    @model_validator(mode="after")
    def _one_pattern(self) -> AstPattern:
        if not any((self.function, self.class_, self.imports, self.call)):
            raise ValueError("name a function, class, imports or call to look for")
        return self


class Check(TaskModel):
    """One piece of evidence a criterion asks for; exactly one kind per check."""

    keywords: list[str] | None = None  # words that must appear in the workspace's files
    within: str = "**/*"  # the files `keywords` are looked for in
    files: list[str] | None = None  # paths (or globs) that must exist
    dirs: list[str] | None = None
    ast: AstPattern | None = None
    command: str | None = None  # exits with 0 when run in the workspace
    timeout: float = 60.0
    reply: list[str] | None = None  # words that must appear in the agent's answer

    @model_validator(mode="after")
    def _one_kind(self) -> Check:
        kinds = [
            k for k in ("keywords", "files", "dirs", "ast", "command", "reply") if getattr(self, k)
        ]
        if len(kinds) != 1:
            raise ValueError(
                "give exactly one of keywords, files, dirs, ast, command or reply"
                + (f" (this check has {', '.join(kinds)})" if kinds else "")
            )
        return self

    @property
    def kind(self) -> str:
        if self.keywords:
            return "keywords"
        if self.files or self.dirs:
            return "files"
        return "ast" if self.ast else "command" if self.command else "reply"


class Criterion(TaskModel):
    text: str = Field(min_length=1)
    checks: list[Check] = Field(default_factory=list)

    def effective_checks(self) -> list[Check]:
        """The checks given, or keywords taken from the criterion's own words."""
        return self.checks or [Check(keywords=significant_words(self.text))]


class WorkerSpec(TaskModel):
    agent: str
    description: str = ""
    workers: dict[str, WorkerSpec] = Field(default_factory=dict)  # a worker that supervisors

    @field_validator("workers")
    @classmethod
    def _worker_names(cls, workers: dict[str, WorkerSpec]) -> dict[str, WorkerSpec]:
        return _check_names(workers)


class Limits(TaskModel):
    max_iterations: int = Field(default=5, ge=1, le=100)
    step_timeouts: list[float] = Field(default_factory=lambda: [5.0, 10.0, 30.0], min_length=1)
    max_retries: int = Field(default=2, ge=0, le=10)
    rescue_after: int = Field(default=2, ge=1)
    interrogation_rounds: int = Field(default=2, ge=0, le=2)
    repeated_error_limit: int = Field(default=2, ge=2)


class Thresholds(TaskModel):
    pass_: float = Field(default=70.0, alias="pass", ge=0, le=100)
    uncertain: float = Field(default=50.0, ge=0, le=100)

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if self.uncertain > self.pass_:
            raise ValueError("uncertain must not be above pass")
        return self


class PreviousTask(TaskModel):
    id: str
    summary: str = ""


class ProjectContext(TaskModel):
    """What the task belongs to; the task-aware context passes on only what the task needs."""

    root: str = ""
    goal: str = ""
    completed: list[PreviousTask] = Field(default_factory=list)
    blocked: list[PreviousTask] = Field(default_factory=list)
    queue: list[str] = Field(default_factory=list)


class TaskSpec(TaskModel):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]*$")
    goal: str = Field(min_length=1)
    type: TaskType | None = None
    criteria: list[Criterion] = Field(min_length=1)
    operators: dict[str, str] = Field(default_factory=dict)
    supervisor: str | None = None
    helper: str | None = None
    team: dict[str, WorkerSpec] = Field(default_factory=dict)
    workspace: str = "workspace"
    limits: Limits = Field(default_factory=Limits)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    project: ProjectContext = Field(default_factory=ProjectContext)
    strict: bool = False
    context: Literal["aware", "full"] = "aware"  # full: the whole project context, always

    @field_validator("criteria", mode="before")
    @classmethod
    def _criteria_from_text(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"text": item} if isinstance(item, str) else item for item in value]
        return value

    @field_validator("operators", mode="before")
    @classmethod
    def _operators_by_name(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list):
            return {Path(str(path)).stem or str(path): path for path in value}
        return value

    @field_validator("team")
    @classmethod
    def _team_names(cls, team: dict[str, WorkerSpec]) -> dict[str, WorkerSpec]:
        return _check_names(team)

    @model_validator(mode="after")
    def _someone_works(self) -> TaskSpec:
        if self.team and not self.supervisor:
            raise ValueError("a team needs a supervisor to delegate to it")
        if not self.operators and not self.team:
            raise ValueError("name at least one operator (or a team with a supervisor)")
        return self


def _check_names(workers: dict[str, WorkerSpec]) -> dict[str, WorkerSpec]:
    for name in workers:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", name):
            raise ValueError(f"worker name {name!r} must be a word (letters, digits, _ or -)")
    return workers


def significant_words(text: str) -> list[str]:
    """Identifiers and quoted words first; otherwise the words that carry meaning."""
    marked = re.findall(r"`([^`]+)`|\"([^\"]+)\"", text)
    words = [a or b for a, b in marked]
    if words:
        return words
    return [w for w in re.findall(r"[A-Za-z_][\w.-]{2,}", text) if w.lower() not in STOP_WORDS]


@dataclass(frozen=True)
class TaskFile:
    """A loaded task: the spec, where it was read from and the folders it names."""

    path: Path
    spec: TaskSpec

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    @property
    def workspace(self) -> Path:
        return (self.base_dir / self.spec.workspace).resolve()

    def agent_path(self, relative: str) -> Path:
        return (self.base_dir / relative).resolve()

    def agent_paths(self) -> list[Path]:
        """Every agent the task names (operators, supervisor, helper, team), once each."""
        data = plain(parse_yaml(read_text(self.path), self.path))
        return list(dict.fromkeys(self.agent_path(path) for _, path in _agent_references(data)))


def load_task(path: Path) -> TaskFile:
    """Read and check a task file; raises AgentError listing every problem."""
    path = Path(path)
    if not path.is_file():
        raise AgentError([AgentProblem(file=path, message="no task file here")])
    root = parse_yaml(read_text(path), path)
    if not isinstance(root, dict):
        raise AgentError([AgentProblem(file=path, message="a task file must be a YAML mapping")])
    data = plain(root)
    source = YamlSource(path, root)
    agents = _agent_problems(path, _agent_references(data), source)
    try:
        spec = TaskSpec.model_validate(data)
    except ValidationError as error:
        raise AgentError(locate_problems(error, source) + agents) from None
    if agents:
        raise AgentError(agents)
    return TaskFile(path.resolve(), spec)


def _agent_problems(
    path: Path, references: list[tuple[tuple[str | int, ...], str]], source: YamlSource
) -> list[AgentProblem]:
    """A line for each agent the file names that is not there; every problem `foundry validate`
    finds, once, in each agent that is."""
    problems: list[AgentProblem] = []
    validated: set[Path] = set()
    for location, relative in references:
        looked = (path.parent / relative).resolve()
        if not looked.exists():
            problems.append(
                AgentProblem(
                    file=path,
                    field=".".join(str(part) for part in location),
                    line=source.line_of(location),
                    message=f"no agent at {relative} (looked in {looked})",
                )
            )
        elif looked not in validated:
            validated.add(looked)
            problems += validate_agent(looked)
    return problems


def _agent_references(data: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """Every agent path the file names, read from its data as it is (valid or not)."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    operators = data.get("operators")
    if isinstance(operators, str):
        operators = [operators]
    if isinstance(operators, list):
        found += [(("operators", n), p) for n, p in enumerate(operators) if isinstance(p, str)]
    elif isinstance(operators, dict):
        found += [(("operators", n), p) for n, p in operators.items() if isinstance(p, str)]
    found += [
        ((role,), data[role])
        for role in ("supervisor", "helper")
        if isinstance(data.get(role), str)
    ]

    def team(workers: Any, prefix: tuple[str | int, ...]) -> None:
        for name, worker in (workers or {}).items() if isinstance(workers, dict) else ():
            if isinstance(worker, dict) and isinstance(worker.get("agent"), str):
                found.append(((*prefix, name, "agent"), worker["agent"]))
                team(worker.get("workers"), (*prefix, name, "workers"))

    team(data.get("team"), ("team",))
    return found
