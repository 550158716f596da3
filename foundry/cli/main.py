"""The `foundry` command.

Each command imports what it uses when it runs: building the parser reads
the modules of foundry/cli only, so that `foundry --version` and `--help` stay fast
(tests/test_cli_imports.py holds every command to it)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from foundry.cli.doctor import add_doctor_commands
from foundry.cli.ending import end_process
from foundry.cli.gateway import add_gateway_commands
from foundry.cli.metrics import add_metrics_commands
from foundry.cli.models import add_model_commands
from foundry.cli.policy import add_policy_commands
from foundry.cli.sessions import add_session_commands
from foundry.cli.supervision import add_supervision_commands
from foundry.cli.tasks import add_task_commands
from foundry.cli.terminal import escaped
from foundry.cli.trust import REFUSED, add_trust_commands
from foundry.logs import configure_logging

if TYPE_CHECKING:
    from foundry.agent import AgentProblem


def _validate(args: argparse.Namespace) -> int:
    from foundry.agent.checks import validate_agent

    failed = False
    for path in args.paths:
        problems = validate_agent(Path(path))
        for problem in problems:
            print(problem)
        if problems:
            failed = True
        elif not args.quiet:
            print(escaped(f"{path}: OK{_file_note(Path(path))}"))
    return 1 if failed else 0


def _file_note(path: Path) -> str:
    """Which file of a folder was read, when a YAML file and an old tsagent.json are both there."""
    from foundry.agent.document import ignored_config, resolve_agent_path

    ignored = ignored_config(path)
    if ignored is None:
        return ""
    used = resolve_agent_path(path).name
    return f" (read {used}; the {ignored.name} beside it is ignored, as tsagent ignores it)"


def _create_agent(args: argparse.Namespace) -> int:
    from foundry.agent import AgentFormat, format_for_path
    from foundry.agent.templates import create_agent, new_agent

    path = Path(args.path)
    if args.format == "yaml" and format_for_path(path) is not AgentFormat.YAML:
        path = path.with_suffix(".yaml")
    if args.format == "folder" and format_for_path(path) is AgentFormat.YAML:
        print(f"{path}: a folder agent needs a path without .yaml/.yml", file=sys.stderr)
        return 2
    agent = new_agent(args.name, args.description, args.system_prompt, policy=not args.no_policy)
    create_agent(path, agent)
    print(escaped(f"created {path}"))
    return 0


def _convert(args: argparse.Namespace) -> int:
    from foundry.agent import format_for_path
    from foundry.agent.checks import inspect_agent
    from foundry.agent.document import new_agent_path_problem
    from foundry.agent.relocate import convert_agent

    source, target = Path(args.source), Path(args.target)
    problem = new_agent_path_problem(target)
    if problem and not args.force:
        print(f"{problem} (use --force to replace it)", file=sys.stderr)
        return 1
    document, problems = inspect_agent(source)
    if problems and not args.force:
        _refuse_conversion(source, problems, document.agent is not None)
        return 1
    convert_agent(document, target)
    print(
        escaped(f"converted {source} ({document.format}) to {target} ({format_for_path(target)})")
    )
    return _report_written(target, args.force)


def _refuse_conversion(source: Path, problems: list[AgentProblem], forceable: bool) -> None:
    for problem in problems:
        print(problem, file=sys.stderr)
    if forceable:
        print(f"{source}: not converted; fix it, or write it anyway with --force", file=sys.stderr)


def _report_written(target: Path, forced: bool) -> int:
    """The written agent's problems, if it has any, on stderr; 1 for them unless forced."""
    from foundry.agent.checks import validate_agent

    problems = validate_agent(target)
    if problems:
        print(
            f"foundry: wrote {target} although it has {len(problems)} problem(s):", file=sys.stderr
        )
        for problem in problems:
            print(problem, file=sys.stderr)
    return 1 if problems and not forced else 0


def _gui(args: argparse.Namespace) -> int:
    from foundry.ui.app import run

    agent = getattr(args, "agent", None)
    return run(agent_to_open(Path(agent)) if agent else None)


def agent_to_open(path: Path) -> Path:
    """The agent a path names: a folder's `tsagent.json`, which a file manager's "Open with"
    hands over, stands for its folder; any other path is the agent itself."""
    from foundry.agent.folder import CONFIG_FILE

    return path.parent if path.name == CONFIG_FILE and path.is_file() else path


class _PrintVersion(argparse.Action):
    """`--version`: the installed version is looked up only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        import foundry

        print(f"foundry {foundry.__version__}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="foundry",
        description="Build AI agents and supervise them while they run.",
    )
    parser.add_argument(
        "--version", action=_PrintVersion, nargs=0, help="print the version and exit"
    )
    parser.set_defaults(handler=_gui)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")

    validate = commands.add_parser(
        "validate",
        help="check agents and print one line per problem",
        description="Check agent folders or YAML files. Exit 0 when all are valid, 1 otherwise; "
        "each problem is printed as PATH: field.path: problem.",
    )
    validate.add_argument("paths", nargs="+", metavar="PATH", help="agent folder or .yaml file")
    validate.add_argument("-q", "--quiet", action="store_true", help="print only problems")
    validate.set_defaults(handler=_validate)

    create = commands.add_parser(
        "create-agent",
        help="create a new agent",
        description="Create a new agent as a folder (tsagent.json, prompt.md, rules/, refs/) "
        "or as one YAML file. Never replaces an existing agent.",
    )
    create.add_argument("path", metavar="PATH", help="folder to create, or a .yaml file")
    create.add_argument("--name", required=True, help="the agent's display name")
    create.add_argument("--description", default="", help="one line saying what it does")
    create.add_argument("--system-prompt", default=None, help="the system prompt text")
    create.add_argument(
        "--format",
        choices=["folder", "yaml"],
        default=None,
        help="on-disk format (default: from PATH; .yaml/.yml means yaml)",
    )
    create.add_argument(
        "--no-policy",
        action="store_true",
        help="leave out the default tool-call policy (then toolPermission decides alone)",
    )
    create.set_defaults(handler=_create_agent)

    convert = commands.add_parser(
        "convert",
        help="convert an agent between the folder and YAML formats",
        description="Convert SRC to DST; DST's format comes from its name "
        "(.yaml/.yml or a folder). "
        "Fields Foundry does not know are carried over.",
    )
    convert.add_argument("source", metavar="SRC", help="agent folder or .yaml file")
    convert.add_argument("target", metavar="DST", help="agent folder or .yaml file to write")
    convert.add_argument("--force", action="store_true", help="replace an agent already at DST")
    convert.set_defaults(handler=_convert)

    add_session_commands(commands)
    add_supervision_commands(commands)
    add_policy_commands(commands)
    add_doctor_commands(commands)
    add_metrics_commands(commands)
    add_task_commands(commands)
    add_trust_commands(commands)
    add_gateway_commands(commands)
    add_model_commands(commands)

    gui = commands.add_parser("gui", help="start the desktop app (the default)")
    gui.add_argument("agent", nargs="?", help="agent to open")
    gui.set_defaults(handler=_gui)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(quiet=True)
    try:
        code = int(args.handler(args))
    except BrokenPipeError:
        code = 0
    except Exception as error:
        code = _exit_code(error)
    if argv is None and getattr(args, "exit_at_once", False):
        end_process(code)  # run as the program (tests pass argv), its work all closed
    return code


def _exit_code(error: Exception) -> int:
    """Errors a user can cause said in one line per problem, with the exit code; others raised.

    Foundry's own error types are imported here, not at the top: a command that raised one has
    imported its module already."""
    if isinstance(error, UnicodeDecodeError):  # a file read outside the agent formats' reader
        print(
            f"foundry: a file is not UTF-8 text ({error.reason} at byte {error.start}); "
            "save it as UTF-8",
            file=sys.stderr,
        )
        return 1
    if isinstance(error, OSError):
        print(f"foundry: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 1
    from foundry.agent import AgentError
    from foundry.agent.trust import UntrustedAgent
    from foundry.llm.base import ProviderError
    from foundry.store import StoreError

    if isinstance(error, AgentError):
        for problem in error.problems:
            print(problem, file=sys.stderr)
        return 1
    if isinstance(error, UntrustedAgent):
        print(f"foundry: {error}", file=sys.stderr)
        return REFUSED
    if isinstance(error, ProviderError | StoreError | LookupError):
        print(f"foundry: {error}", file=sys.stderr)
        return 1
    raise error
