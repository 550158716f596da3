"""The default L0 policy: routine work runs, plain harm is refused, a person decides the rest.

It is data (a PolicyConfig) that every new agent carries and its user can read and edit; the rule
names are what a person sees as the reason for a decision. First match wins, in this order:

1. `deny-...`: commands and statements that are plainly destructive or run downloaded code, in
   the parameters a shell or a database tool takes, whatever the tool.
2. The time server's tools are routine.
3. `...-ask-a-person`: shells, network requests, mail and messages, databases, deployments; and
   percent-encoded paths, which a server might decode after they were judged.
4. Writes (`write_file`, `edit_file`, `create_directory`, `move_file`): inside the workspace they
   run, unless the target is sensitive (credentials, version-control internals, CI and hook
   configuration, shell start-up files, editor tasks and settings, agent and MCP client
   configuration, build files, git attributes and modules, an agent's own definition: what
   other programs run or read as instructions) or the content is over 1 MiB, which ask a person;
   a move asks too when either end holds what is sensitive (a folder moved to `.github`);
   anywhere else they are denied.
5. Reading credentials in the workspace asks a person; other reads and listings in it run, and
   elsewhere they are denied.
6. Read-only git tools on a repository inside the workspace run, unless an argument looks like a
   command-line option or shows committed credentials; other git tools ask a person.
7. Anything else asks a person.

Tool names are those of `@modelcontextprotocol/server-filesystem`, `mcp-server-git` and
`mcp-server-time`, under any server name (`*.read_file`); the rules that let their calls through
or refuse them are bound to servers of that kind (`kind`, as `tools/identity.py` tells it from the
server's package, or the agent declares it), so a third-party server's `read_file` or
`search_files` meets none of them and goes to a person. The rules that ask stay for any server.
Paths are judged by the `within` operator (relative to the project, every path the call names)
and sensitive names by `matches` on the path parameters as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from foundry.agent.models import PolicyCondition, PolicyConfig, PolicyMatch, PolicyRule

Action = Literal["allow", "deny", "human"]  # this module is data only: agent/templates.py reads it

WORKSPACE = "."
CONTENT_LIMIT_BYTES = 1024 * 1024
FILESYSTEM, GIT, TIME = "filesystem", "git", "time"  # the kinds of server these rules are for

COMMAND_PARAMS = ("command", "cmd", "script", "code")
STATEMENT_PARAMS = ("query", "sql", "statement", "command", "cmd")
FILE_PATH_PARAMS = ("path", "paths", "source", "destination")
GIT_ARGUMENT_PARAMS = (
    "target",
    "revision",
    "branch_type",
    "contains",
    "not_contains",
    "start_timestamp",
    "end_timestamp",
)

ENCODED_PATH = r"(?i)%(?:2e|2f|5c)"
# `/`, `//`, `/.`, a system folder, `~` or `$HOME`, quoted or not, with or without `/*`
_ROOT_OR_HOME = (
    r"[\"']?(?:/[/.]{0,8}\*?|/{1,8}(?:bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|srv|usr|var)"
    r"/?\*?|~/?\*?|\$\{?HOME\}?/?\*?)[\"']?"
)
# between the words of a statement: spaces, or comments (`drop/**/table`)
_SQL_GAP = r"(?:\s|/\*[^*]{0,200}\*/|--[^\n]{0,200}\n){1,20}"
_SHELL = r"(?:sudo\s+(?:-\S+\s+){0,8})?(?:env\s+)?(?:\S*/)?(?:ba|da|k|z|fi|tc|c)?sh\b(?![.\w-])"
# Every repetition is bounded, so that no pattern takes more than linear time on a long text.
DESTRUCTIVE_COMMANDS: dict[str, str] = {
    "deny-deleting-root-or-home": (
        rf"\brm\s+(?:-{{1,2}}[\w-]+\s+){{0,8}}{_ROOT_OR_HOME}(?=$|[\s;&|)'\"`])"
    ),
    "deny-running-downloaded-code": (
        r"\b(?:curl|wget)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?(?:\S*/)?"
        r"(?:(?:ba|da|k|z|fi|tc|c)?sh|python[\d.]*|perl|ruby|node|php)\b(?![.\w-])"
        r"|<\(\s*(?:curl|wget)\b"
        r"|(?:\bsh|\bbash|\bzsh|\beval)\s+(?:-c\s+)?[\"']?\$\(\s*(?:curl|wget)\b"
    ),
    "deny-piping-into-a-shell": rf"\|\s*{_SHELL}",
    "deny-formatting-a-disk": r"\bmkfs(?:\.\w+)?\b",
    "deny-overwriting-a-disk": (
        r"\bdd\b[^\n;|&]{0,200}\bof=/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)"
        r"|>\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk)\w*"
    ),
    "deny-fork-bomb": r"(?<![\w:])([\w:]{1,32})\s*\(\)\s*\{\s*\1\s*\|\s*\1\s*&\s*\}",
    "deny-opening-root-to-everyone": (
        r"\bchmod\s+(?:-\w+\s+){0,8}(?:0?777|a\+rwx|ugo\+rwx)\s+(?:-\w+\s+){0,8}/\*?(?=$|[\s;&|])"
    ),
}
DESTRUCTIVE_STATEMENTS: dict[str, str] = {
    "deny-dropping-databases-or-tables": (
        rf"(?i)\b(?:drop{_SQL_GAP}(?:database|schema|table)"
        rf"|truncate(?:{_SQL_GAP}table)?{_SQL_GAP}[\w\"`\[])"
    ),
}


def _names(files: str = "", folders: str = "", after: str = r"[\\/]") -> str:
    """A pattern for a path whose last name is one of `files`, or that is or passes through one
    of `folders`; any case, either slash. A name starts the text or follows `after`; it may
    end in dots, spaces or a `:stream`, which Windows drops (`.git./hooks` is `.git/hooks`)."""
    windows_tail = r"[. ]*(?::[^\\/]*)?"
    choices = [f"(?:{files}){windows_tail}$"] if files else []
    choices += [rf"(?:{folders}){windows_tail}(?:[\\/]|$)"] if folders else []
    return rf"(?i)(?:^|{after})(?:" + "|".join(choices) + ")"


CREDENTIAL_FILES = (
    r"\.env[^\\/]*|[^\\/]*\.(?:pem|key|p12|pfx|jks|keystore|kdbx)"
    r"|id_(?:rsa|dsa|ecdsa|ed25519)[^\\/]*|\.npmrc|\.pypirc|\.netrc|\.git-credentials"
    r"|\.pgpass|\.htpasswd|credentials(?:\.json)?"
)
CREDENTIAL_FOLDERS = r"\.(?:aws|ssh|gnupg|kube|docker)"
# `git_show` of `HEAD:.env` shows a file as committed: the name follows a colon there
CREDENTIALS_IN_A_REVISION = _names(CREDENTIAL_FILES, CREDENTIAL_FOLDERS, after=r"[\\/:]")


# between the names of a sensitive path of several: a slash, after what Windows drops from a name
_THEN = r"[. ]*(?::[^\\/]*)?[\\/]"
# What other programs run or read as instructions, by kind; a write, an edit, a new folder or a
# move (either end) there asks a person. Routine source, documentation, notes and tests are not
# in it: `src/*.py`, `docs/*.md`, `.gitignore`, `.github/CONTRIBUTING.md`.
SENSITIVE_PATHS: dict[str, str] = {
    "credentials": _names(CREDENTIAL_FILES, CREDENTIAL_FOLDERS),
    "version-control-internals": _names(folders=r"\.(?:git|hg|svn|bzr)"),
    "ci-and-hook-configuration": _names(
        files=r"(?:\.gitlab-ci|\.pre-commit-config|\.travis|azure-pipelines|bitbucket-pipelines"
        r"|\.drone|\.?lefthook)\.ya?ml|jenkinsfile",
        folders=rf"\.github{_THEN}(?:workflows|actions)|\.(?:gitea|forgejo){_THEN}workflows"
        r"|\.circleci|\.husky|\.githooks|\.woodpecker(?:\.ya?ml)?|\.buildkite",
    ),
    "shell-start-up-files": _names(
        files=r"\.(?:bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zshenv|zprofile"
        r"|zlogin|zlogout|cshrc|tcshrc|kshrc)",
    ),
    # an editor runs its tasks, launch and run configurations, and local start-up files
    "editor-tasks-and-settings": _names(
        files=r"[^\\/]*\.code-workspace|\.devcontainer\.json|\.nvim\.lua|\.nvimrc|\.exrc",
        folders=r"\.(?:vscode|idea|fleet|zed|devcontainer)",
    ),
    # coding agents and MCP clients start the servers these name and follow their instructions
    "agent-and-mcp-configuration": _names(
        files=r"\.?mcp\.json|claude_desktop_config\.json|(?:claude|claude\.local|agents|gemini)\.md"
        r"|\.(?:cursorrules|windsurfrules)|\.aider\.conf\.ya?ml"
        rf"|\.github{_THEN}copilot-instructions\.md",
        folders=r"\.(?:claude|cursor|windsurf|clinerules|roo|continue|gemini|codex|amazonq|kiro)"
        rf"|\.github{_THEN}(?:instructions|prompts|chatmodes)",
    ),
    # what a build, an install or a test run executes (its scripts, its build backend)
    "build-files": _names(
        files=r"(?:gnu)?makefile|[^\\/]*\.mk|\.?justfile|rakefile|gemfile|[^\\/]*\.gemspec"
        r"|taskfile\.ya?ml|earthfile|vagrantfile|package\.json|\.yarnrc(?:\.yml)?"
        r"|\.pnpmfile\.c?js|deno\.jsonc?|bunfig\.toml|composer\.json"
        r"|setup\.py|pyproject\.toml|noxfile\.py|tox\.ini"
        r"|(?:build|settings)\.gradle(?:\.kts)?|gradlew(?:\.bat)?|pom\.xml|cmakelists\.txt"
        r"|[^\\/]*\.cmake|meson\.build|build\.rs|cargo\.toml|build\.zig"
        r"|(?:build|module|workspace)\.bazel|[^\\/]*\.bzl"
        r"|dockerfile(?:\.[^\\/]*)?|[^\\/]*\.dockerfile|containerfile"
        r"|(?:docker-)?compose(?:\.[^\\/]*)?\.ya?ml",
    ),
    "git-attributes-and-modules": _names(files=r"\.git(?:attributes|modules|config)|\.lfsconfig"),
    # the agent's own definition: its file (the policy itself), prompt, rules and references
    "agent-definitions": _names(
        files=rf"tsagent\.(?:json|ya?ml)|prompt\.md|(?:rules|refs){_THEN}[^\\/]*\.mdt"
    ),
}


def _holding(folders: str) -> str:
    """A pattern for a path whose last name is one of `folders`, under which a sensitive path
    lies (`.github` holds `.github/workflows`): moving a folder there makes its contents so."""
    return rf"(?i)(?:^|[\\/])(?:{folders})[. ]*(?::[^\\/]*)?[\\/]*$"


# for a move, by kind: the folders a sensitive path of several names starts with
HOLDING_SENSITIVE: dict[str, str] = {
    "ci-and-hook-configuration": _holding(r"\.github|\.gitea|\.forgejo"),
    "agent-and-mcp-configuration": _holding(r"\.github"),
    "agent-definitions": _holding(r"rules|refs"),
}

# filesystem tools (their path parameter is `path`), by the words their rule names use:
# (what they do, what they do to a sensitive file)
WRITE_TOOLS = {
    "write_file": ("writing", "writing"),
    "edit_file": ("editing", "editing"),
    "create_directory": ("creating-folders", "creating-folders-in"),
}
CREDENTIAL_READS = {
    "ask-before-reading-credentials": "path",
    "ask-before-reading-several-files-with-credentials": "paths",
}
CONTENT_PARAMS = {"write_file": "content", "edit_file": "edits"}
READ_TOOLS = {
    "read_file": "reading",
    "read_text_file": "reading-text",
    "read_media_file": "reading-media",
    "read_multiple_files": "reading-several-files",
    "list_directory": "listing-folders",
    "list_directory_with_sizes": "listing-folders-with-sizes",
    "directory_tree": "walking-folder-trees",
    "search_files": "searching-files",
    "get_file_info": "inspecting-files",
}
GIT_READ_TOOLS = (
    "git_status",
    "git_diff_unstaged",
    "git_diff_staged",
    "git_diff",
    "git_log",
    "git_show",
    "git_branch",
)
TIME_TOOLS = {"time.get_current_time": "current-time", "time.convert_time": "time-conversion"}
OUTWARD_TOOLS: dict[str, tuple[str, ...]] = {
    "shell-commands": ("*shell*", "*exec*", "*command*", "*terminal*", "*bash*"),
    "network-requests": ("*fetch*", "*http*", "*request*", "*browse*", "*download*", "*upload*"),
    "mail-and-messages": ("*mail*", "*send*", "*message*", "*slack*"),
    "databases": ("*sql*", "*query*", "*database*"),
    "deployments": ("*deploy*", "*publish*", "*release*"),
}


# --- building blocks -------------------------------------------------------------------------


def _rule(
    name: str,
    tool: str,
    action: Action,
    every: Sequence[PolicyCondition] = (),
    some: Sequence[PolicyCondition] = (),
    kind: str | None = None,
) -> PolicyRule:
    """A rule that, written to a file, shows only what it sets; `kind`: the kind of server it
    was written for."""
    fields: dict[str, object] = {"name": name, "tool": tool, "action": action}
    if kind is not None:
        fields["kind"] = kind
    if every or some:
        parts = {"all": list(every), "any": list(some)}
        fields["when"] = PolicyMatch.model_validate({k: v for k, v in parts.items() if v})
    return PolicyRule.model_validate(fields)


def _inside(param: str) -> PolicyCondition:
    return PolicyCondition(param=param, op="within", value=WORKSPACE)


def _given(param: str) -> PolicyCondition:
    """True when the call passes the param at all (any value but null)."""
    return PolicyCondition(param=param, op="!=", value=None)


def _matching(params: Sequence[str], pattern: str) -> list[PolicyCondition]:
    """One condition per param: the pattern is found in it (any of them will do, in `any`)."""
    return [PolicyCondition(param=param, op="matches", value=pattern) for param in params]


# --- the rules, group by group ---------------------------------------------------------------


def destructive_rules() -> list[PolicyRule]:
    """Plainly destructive commands and statements, and code fetched to run: denied outright."""
    commands = [
        _rule(name, "*", "deny", some=_matching(COMMAND_PARAMS, pattern))
        for name, pattern in DESTRUCTIVE_COMMANDS.items()
    ]
    statements = [
        _rule(name, "*", "deny", some=_matching(STATEMENT_PARAMS, pattern))
        for name, pattern in DESTRUCTIVE_STATEMENTS.items()
    ]
    return [*commands, _split_rm_rule(), *statements]


def _split_rm_rule() -> PolicyRule:
    """`rm` as the command (or the first word of a command given as a list) and `/` or `~`
    among separate arguments."""
    is_rm = PolicyCondition(param="command", op="matches", value=r"^\s*(?:sudo\s+)?(?:\S*/)?rm\s*$")
    target = rf"^\s*{_ROOT_OR_HOME}\s*$"
    targets = _matching(("args", "command"), target)
    return _rule("deny-deleting-root-or-home-in-arguments", "*", "deny", [is_rm], targets)


def time_rules() -> list[PolicyRule]:
    return [
        _rule(f"{word}-is-routine", tool, "allow", kind=TIME) for tool, word in TIME_TOOLS.items()
    ]


def outward_rules() -> list[PolicyRule]:
    """Tools that reach beyond the machine or run anything: a person decides, with a reason."""
    return [
        _rule(f"{glob.strip('*')}-tools-ask-a-person", glob, "human")
        for globs in OUTWARD_TOOLS.values()
        for glob in globs
    ]


def encoded_path_rule() -> PolicyRule:
    """A path with `%2e`, `%2f` or `%5c` in it may be decoded by a server after it was judged."""
    encoded = _matching((*FILE_PATH_PARAMS, "repo_path"), ENCODED_PATH)
    return _rule("ask-before-percent-encoded-paths", "*", "human", some=encoded)


def write_rules() -> list[PolicyRule]:
    """Each write tool: sensitive or large targets ask, inside runs, elsewhere is denied."""
    rules: list[PolicyRule] = []
    for tool, (verb, verb_to) in WRITE_TOOLS.items():
        glob, inside = f"*.{tool}", [_inside("path")]
        rules += [
            _rule(f"ask-before-{verb_to}-{kind}", glob, "human", inside, _matching(["path"], names))
            for kind, names in SENSITIVE_PATHS.items()
        ]
        if tool in CONTENT_PARAMS:
            rules.append(_too_large_rule(tool, verb, inside))
        outside = [_given("path")]
        rules += [
            _rule(f"{verb}-inside-the-workspace", glob, "allow", inside, kind=FILESYSTEM),
            _rule(
                f"deny-{verb}-outside-the-workspace", glob, "deny", some=outside, kind=FILESYSTEM
            ),
        ]
    return rules + move_rules()


def _too_large_rule(tool: str, verb: str, inside: list[PolicyCondition]) -> PolicyRule:
    size = PolicyCondition(param=CONTENT_PARAMS[tool], op="larger_than", value=CONTENT_LIMIT_BYTES)
    return _rule(f"ask-before-{verb}-over-1-mib", f"*.{tool}", "human", [*inside, size])


def move_rules() -> list[PolicyRule]:
    """`move_file` writes at its destination and removes its source: both are judged, as what
    they are and as what they hold (a folder moved to `.github` may hold `workflows/`)."""
    glob, ends = "*.move_file", ("source", "destination")
    inside = [_inside(end) for end in ends]
    return [
        *(
            _rule(f"ask-before-moving-{kind}", glob, "human", inside, _moved(ends, kind))
            for kind in SENSITIVE_PATHS
        ),
        _rule("moving-inside-the-workspace", glob, "allow", inside, kind=FILESYSTEM),
        _rule(
            "deny-moving-outside-the-workspace",
            glob,
            "deny",
            some=[_given(end) for end in ends],
            kind=FILESYSTEM,
        ),
    ]


def _moved(ends: Sequence[str], kind: str) -> list[PolicyCondition]:
    holding = HOLDING_SENSITIVE.get(kind)
    either = _matching(ends, SENSITIVE_PATHS[kind])
    return either + (_matching(ends, holding) if holding is not None else [])


def read_rules() -> list[PolicyRule]:
    """Credentials in the workspace ask; other reads and listings in it run; elsewhere, denied."""
    credentials = SENSITIVE_PATHS["credentials"]
    rules = [
        _rule(name, "*", "human", [_inside(param)], _matching([param], credentials))
        for name, param in CREDENTIAL_READS.items()
    ]
    for tool, verb in READ_TOOLS.items():
        param, glob = _path_param(tool), f"*.{tool}"
        rules += [
            _rule(f"{verb}-inside-the-workspace", glob, "allow", [_inside(param)], kind=FILESYSTEM),
            _rule(
                f"deny-{verb}-outside-the-workspace",
                glob,
                "deny",
                some=[_given(param)],
                kind=FILESYSTEM,
            ),
        ]
    listing = _rule(
        "listing-allowed-folders", "*.list_allowed_directories", "allow", kind=FILESYSTEM
    )
    return [*rules, listing]


def _path_param(tool: str) -> str:
    return "paths" if tool == "read_multiple_files" else "path"


def git_rules() -> list[PolicyRule]:
    """Read-only git tools on a repository inside the workspace run; option-like arguments ask."""
    options = [
        PolicyCondition(param=param, op="matches", value=r"^\s*-") for param in GIT_ARGUMENT_PARAMS
    ]
    inside = [_inside("repo_path")]
    reads = [
        _rule(
            f"{tool.replace('_', '-')}-inside-the-workspace", f"*.{tool}", "allow", inside, kind=GIT
        )
        for tool in GIT_READ_TOOLS
    ]
    committed = PolicyCondition(param="revision", op="matches", value=CREDENTIALS_IN_A_REVISION)
    return [
        _rule("ask-before-git-arguments-like-options", "*.git_*", "human", some=options),
        _rule("ask-before-showing-committed-credentials", "*.git_show", "human", [committed]),
        *reads,
        _rule("git-changes-ask-a-person", "*.git_*", "human"),
    ]


def default_policy() -> PolicyConfig:
    """The policy a careful user would keep, as data: see the module's description."""
    rules = [
        *destructive_rules(),
        *time_rules(),
        *outward_rules(),
        encoded_path_rule(),
        *write_rules(),
        *read_rules(),
        *git_rules(),
        _rule("ask-a-person-about-anything-else", "*", "human"),
    ]
    return PolicyConfig(rules=rules, loop_detection=True)
