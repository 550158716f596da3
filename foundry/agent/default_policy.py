"""The default L0 policy: routine work runs, plain harm is refused, a person decides the rest.

It is data (a PolicyConfig) that every new agent carries and its user can read and edit; the rule
names are what a person sees as the reason for a decision. First match wins, in this order:

1. `deny-...`: commands and statements that are plainly destructive or run downloaded code, in
   the parameters a shell or a database tool takes, whatever the tool; and a URL to this
   machine, its network or its cloud's metadata, however spelt.
2. A trusted server's resources and prompts may be read (`file:` URIs only inside the
   workspace); the time server's tools are routine.
3. Percent-encoded paths ask, as a server might decode them after they were judged.
4. Writes (`write_file`, `edit_file`, `create_directory`, `move_file`): inside the workspace they
   run, unless the target is sensitive (credentials, version-control internals, CI and hook
   configuration, shell start-up files, editor tasks and settings, agent and MCP client
   configuration, build files, git attributes and modules, an agent's own definition: what
   other programs run or read as instructions) or the content is over 1 MiB, which ask a person;
   a move asks too when either end holds what is sensitive (a folder moved to `.github`);
   anywhere else they are denied.
5. Reading credentials in the workspace asks a person; other reads and listings in it run, and
   elsewhere they are denied.
6. Read-only git tools and staging on a repository inside the workspace run, unless an argument
   looks like a command-line option (one that writes a file is refused) or shows committed
   credentials; other git tools ask a person.
7. The servers people run (GitHub, GitLab, Slack, memory, sequential thinking, fetch, sqlite,
   PostgreSQL, Playwright, Puppeteer, a shell server, the reference test server): reads run,
   what is published or sent asks, a secret sent to another service is refused; statements,
   command lines and URLs judged by real parsers (`read_only_sql`, `read_only_command`,
   `reaches`, `carries_data`).
8. `...-ask-a-person`: shells, network requests, mail and messages, databases, deployments.
9. A tool its trusted server declares read-only and closed-world runs when every path the call
   names is inside the workspace; anything else asks a person.

Tool names are those of the servers' own packages (`@modelcontextprotocol/server-filesystem`,
`mcp-server-git`, `github-mcp-server`, ...), under any server name (`*.read_file`); the rules
that let their calls through or refuse them are bound to servers of that kind (`kind`, as
`tools/identity.py` tells it from the server's package, or the agent declares it), so a
third-party server's `read_file` or `get_issue` meets none of them and goes to a person. The
rules that ask stay for any server. Paths are judged by the `within` operator (relative to the
project, every path the call names) and sensitive names by `matches` on the path parameters as
written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from foundry.agent.models import (
    PolicyCondition,
    PolicyConfig,
    PolicyMatch,
    PolicyOperator,
    PolicyRule,
)

Action = Literal["allow", "deny", "human"]  # this module is data only: agent/templates.py reads it

WORKSPACE = "."
CONTENT_LIMIT_BYTES = 1024 * 1024
FILESYSTEM, GIT, TIME = "filesystem", "git", "time"  # the kinds of server these rules are for

COMMAND_PARAMS = ("command", "cmd", "script", "code", "stdin")
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
# what a shell reads as more than a word: `;`, `|`, `&&`, `` ` ``, `$(`, `${`, `<(`, `>(`, a line
SHELL_SYNTAX = r"[;|`\n]|&&|\$[({]|[<>]\("
# `/`, `//`, `/.`, a system folder, `~` or `$HOME`, quoted or not, with or without `/*`
_ROOT_OR_HOME = (
    r"[\"']?(?:/[/.]{0,8}\*?|/{1,8}(?:bin|boot|dev|etc|home|lib|lib64|opt|root|sbin|srv|usr|var)"
    r"/?\*?|~/?\*?|\$\{?HOME\}?/?\*?)[\"']?"
)
# between the words of a statement: spaces, or comments (`drop/**/table`)
_SQL_GAP = r"(?:\s|/\*[^*]{0,200}\*/|--[^\n]{0,200}\n){1,20}"
_SHELL = r"(?:sudo\s+(?:-\S+\s+){0,8})?(?:env\s+)?(?:\S*/)?(?:ba|da|k|z|fi|tc|c)?sh\b(?![.\w-])"
# credential files as a word of a command line names them (CREDENTIAL_FILES below: a path's)
CREDENTIAL_FILES_IN_A_COMMAND = (
    r"\.env[\w.-]*|[\w.-]*\.(?:pem|key|p12|pfx|jks|keystore|kdbx)|id_(?:rsa|dsa|ecdsa|ed25519)"
    r"[\w.-]*|\.npmrc|\.pypirc|\.netrc|\.git-credentials|\.pgpass|\.htpasswd"
    r"|credentials(?:\.json)?|\.(?:aws|ssh|gnupg|kube|docker)/\S*"
)
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
    "deny-deleting-root-or-home-in-code": (
        r"\brmtree\s*\(\s*(?:os\.path\.expanduser\s*\(\s*)?(?:Path\.home\s*\(\s*\)"
        r"|[\"'](?:~|/|\$HOME)/?[\"'])"
    ),
    "deny-deleting-with-find-from-root-or-home": (
        r"\bfind\s+[\"']?(?:/|~|\$\{?HOME\}?)[^|;&\n]{0,300}\s-(?:delete\b|exec(?:dir)?\s+rm\b)"
    ),
    # up to 12 words after curl or wget, then an option that uploads a credential file
    "deny-sending-credential-files": (
        r"\b(?:curl|wget)(?:\s+[^\s|;&]{1,200}){0,12}?\s+(?:-d|--data(?:-[a-z]+)?|-F|--form|-T"
        r"|--upload-file|--post-file)[=\s]{1,8}[\"']?(?:\w{1,40}=)?@?<?(?:[^\s'\"]{0,200}/)?"
        rf"(?:{CREDENTIAL_FILES_IN_A_COMMAND})(?=$|[\s'\";&|])"
    ),
    "deny-deleting-after-changing-to-root-or-home": (
        r"\bcd\s+[\"']?(?:~|\$\{?HOME\}?|/)/?[\"']?\s*(?:&&|;|\|\|)\s*(?:sudo\s+)?rm\s+"
        r"(?:-{1,2}[\w-]+\s+){0,8}[\"']?(?:\.|\*|\./\*|\.\*)/?[\"']?(?=$|[\s;&|)'\"`])"
    ),
    "deny-redirecting-into-shell-start-up-files": (
        r">{1,2}\s*[\"']?\S*/?\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zshenv|zprofile"
        r"|zlogin|cshrc|tcshrc|kshrc)\b"
    ),
}
DESTRUCTIVE_STATEMENTS: dict[str, str] = {
    "deny-dropping-databases-or-tables": (
        rf"(?i)\b(?:drop{_SQL_GAP}(?:database|schema|table)"
        rf"|truncate(?:{_SQL_GAP}table)?{_SQL_GAP}[\w\"`\[])"
    ),
    "deny-running-programs-from-the-database": (
        rf"(?i)\bcopy\b[\s\S]{{0,2000}}?\b(?:to|from){_SQL_GAP}program\b"
    ),
    "deny-loading-native-code-into-the-database": r"(?i)\bload_extension\s*\(",
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
# staging and unstaging (mcp-server-git's reset only unstages), and a new local branch: each
# undone by another, nothing published
GIT_STAGING_TOOLS = ("git_add", "git_reset", "git_create_branch")
# git options that write a file where they say, or run a program
GIT_WRITING_OPTIONS = r"^\s*--(?:output|ext-diff|textconv|exec|upload-pack|receive-pack)\b"
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
        for tool in (*GIT_READ_TOOLS, *GIT_STAGING_TOOLS)
    ]
    committed = PolicyCondition(param="revision", op="matches", value=CREDENTIALS_IN_A_REVISION)
    writing = _matching(GIT_ARGUMENT_PARAMS, GIT_WRITING_OPTIONS)
    return [
        _rule("deny-git-options-that-write-files-or-run-programs", "*.git_*", "deny", some=writing),
        _rule("ask-before-git-arguments-like-options", "*.git_*", "human", some=options),
        _rule("ask-before-showing-committed-credentials", "*.git_show", "human", [committed]),
        *reads,
        _rule("git-changes-ask-a-person", "*.git_*", "human"),
    ]


# --- the servers people run, by kind ----------------------------------------------------------
#
# These come after the filesystem and git rules: a rule bound to a kind applies to every server
# where no map of servers says what each is (a rule tested alone), and the reference servers'
# rules must decide their tools first. No rule here covers every tool (`*`) but those that
# only refuse or ask.

GITHUB, GITLAB, SLACK, MEMORY = "github", "gitlab", "slack", "memory"
THINKING, EVERYTHING, FETCH = "sequential-thinking", "everything", "fetch"
SQLITE, POSTGRES, SHELL = "sqlite", "postgres", "shell"
PLAYWRIGHT, PUPPETEER = "playwright", "puppeteer"
# what a call hands to another service, in the parameters these servers take it in
SENT_PARAMS = (
    "body", "text", "content", "files", "title", "description", "message", "commit_message",
    "value", "values", "fields", "url", "code", "function", "script", "comment",
)  # fmt: skip
SENDING_KINDS = (GITHUB, GITLAB, SLACK, PLAYWRIGHT, PUPPETEER, FETCH)
URL_PARAMS = ("url", "urls", "href", "link", "endpoint", "data")
NETWORK_URL = r"(?i)^\s*(?:https?|ftp|gopher|wss?)://"
FILE_URL = r"(?i)^\s*file:"
# a browser field typing into which, or a button clicking which, is not routine
SECRET_FIELD = r"(?i)pass(?:word|wd|phrase)?|secret|token|api.?key|access.?key|card|cvv|otp|ssn"
COMMITTING_CLICK = (
    r"(?i)\b(?:buy|order|pay|purchase|checkout|delete|remove|send|submit|confirm|transfer"
    r"|subscribe|sign.?up|publish|post|merge|approve|install|unsubscribe)\b"
)
# repository servers' reads, by name (the archived npm servers declare no annotations);
# GitHub's consolidated tools read by `*_read` (but `mark_all_notifications_read` marks)
REPOSITORY_READS = ("*.get_*", "*.list_*", "*.search_*")
GITHUB_READS = (
    "*.issue_read", "*.pull_request_read", "*.issue_dependency_read", "*.actions_get",
    "*.actions_list", "*.projects_get", "*.projects_list", "*.find_duplicate",
)  # fmt: skip
REPOSITORY_CHANGES = (
    "*.create_*", "*.update_*", "*.push_*", "*.merge_*", "*.delete_*", "*.fork_*", "*_write",
    "*.add_*", "*.request_*", "*.submit_*", "*.assign_*", "*.remove_*", "*.resolve_*",
    "*.unresolve_*", "*.star_*", "*.unstar_*", "*.dismiss_*", "*.mark_*", "*.manage_*",
    "*.set_*", "*.reprioritize_*", "*.actions_run_trigger", "*.rerun_*", "*.cancel_*",
)  # fmt: skip
REPOSITORY_PATH_PARAMS = ("path", "file_path")
SLACK_READS = ("*.slack_list_*", "*.slack_get_*")
MEMORY_READS = ("*.read_graph", "*.search_nodes", "*.open_nodes")
MEMORY_ADDITIONS = ("*.create_entities", "*.create_relations", "*.add_observations")
MEMORY_CORRECTIONS = ("*.delete_observations", "*.delete_relations")
MEMORY_PARAMS = ("entities", "observations", "relations")
SQLITE_TOOLS = ("*.read_query", "*.write_query", "*.create_table")
SQLITE_READS = ("*.list_tables", "*.describe_table")
# the reference test server's tools (its old names too), but its environment
EVERYTHING_TOOLS = (
    "echo", "get-sum", "get-tiny-image", "getTinyImage", "get-annotated-message",
    "annotatedMessage", "get-resource-links", "get-resource-reference", "getResourceReference",
    "get-structured-content", "structuredContent", "trigger-long-running-operation",
    "longRunningOperation", "toggle-simulated-logging", "toggle-subscriber-updates",
    "simulate-research-query", "gzip-file-as-resource", "sampleLLM", "startElicitation",
)  # fmt: skip
EVERYTHING_ENVIRONMENT = ("*.get-env", "*.printEnv")
# Playwright's tools that look at the page or the browser, or act as a reader does (scroll,
# pick from a list, close); some save what they saw to a file
BROWSER_LOOKS = (
    "snapshot", "take_screenshot", "console_messages", "network_requests", "network_request",
    "wait_for", "find", "navigate_back", "close", "resize", "hover", "press_key", "drag",
    "handle_dialog", "emulate_media", "pdf_save", "select_option",
)  # fmt: skip
BROWSER_SAVES = "filename"
PUPPETEER_LOOKS = ("screenshot", "hover", "click", "fill", "select")
SHELL_TOOLS = ("*.shell_execute",)


def _kind_rules(
    kind: str, rules: Sequence[tuple[str, str | Sequence[str], Action]]
) -> list[PolicyRule]:
    """Rules bound to `kind`: (name, tool glob or globs, action), one rule a glob, each named
    by its name with `{tool}` the glob's words (`*.get_*`: `get`)."""
    return [
        _rule(name.format(tool=_tool_words(tool)), tool, action, kind=kind)
        for name, tools, action in rules
        for tool in ((tools,) if isinstance(tools, str) else tools)
    ]


def _tool_words(glob: str) -> str:
    """A tool glob as the words of a rule's name: `*.browser_take_screenshot`,
    `browser-take-screenshot`."""
    return glob.removeprefix("*.").strip("*_").replace("_", "-").replace(".", "-").lower()


def _holding_secret(params: Sequence[str]) -> list[PolicyCondition]:
    return [PolicyCondition(param=param, op="holds_secret", value=True) for param in params]


def _url(op: PolicyOperator, value: object) -> PolicyCondition:
    return PolicyCondition(param="url", op=op, value=value)


def inside_address_rule() -> PolicyRule:
    """A URL to this machine, its network or its cloud's metadata, however spelt: refused."""
    inside = [PolicyCondition(param=param, op="reaches", value="inside") for param in URL_PARAMS]
    return _rule("deny-urls-to-this-machine-or-its-network", "*", "deny", some=inside)


# the servers whose resources are what they say (their schemas, a repository's files, notes):
# another server's may be anything (`internal://credentials`), and reading one asks
RESOURCE_KINDS = (
    "filesystem", "everything", "github", "gitlab", "postgres", "sqlite", "memory",
    "puppeteer", "playwright",
)  # fmt: skip


def resource_and_prompt_rules() -> list[PolicyRule]:
    """What a known server lists as its resources may be read, any trusted server's prompts
    got; a file outside the workspace or a network address inside may not be read, and another
    server's resources ask (the gateway's `SERVER.read_resource`)."""
    glob, uri = "*.read_resource", "uri"
    is_file = PolicyCondition(param=uri, op="matches", value=FILE_URL)
    on_network = PolicyCondition(param=uri, op="matches", value=NETWORK_URL)
    inside = PolicyCondition(param=uri, op="reaches", value="inside")
    carries = PolicyCondition(param=uri, op="carries_data", value=True)
    return [
        _rule("reading-workspace-files-as-resources", glob, "allow", [is_file, _inside(uri)]),
        _rule("deny-reading-files-outside-the-workspace-as-resources", glob, "deny", [is_file]),
        _rule("deny-reading-resources-inside-the-network", glob, "deny", [on_network, inside]),
        _rule("ask-before-resources-that-carry-data", glob, "human", [on_network, carries]),
        *(_rule(f"reading-{kind}-resources", glob, "allow", kind=kind) for kind in RESOURCE_KINDS),
        _rule("getting-a-servers-prompts", "*.get_prompt", "allow"),
    ]


def sending_secrets_rules() -> list[PolicyRule]:
    """A secret in what goes to another service (a message, an issue, a page, a URL): denied."""
    secret = _holding_secret(SENT_PARAMS)
    return [
        _rule(f"deny-sending-secrets-to-{kind}", "*", "deny", some=secret, kind=kind)
        for kind in SENDING_KINDS
    ]


def repository_rules() -> list[PolicyRule]:
    """GitHub and GitLab: reads and new branches run; a repository's deletion is refused;
    what is published (issues, comments, pull requests, pushes, merges) asks."""
    credentials = _matching(REPOSITORY_PATH_PARAMS, SENSITIVE_PATHS["credentials"])
    rules: list[PolicyRule] = []
    for kind in (GITHUB, GITLAB):
        reads = REPOSITORY_READS + (GITHUB_READS if kind == GITHUB else ())
        rules += [
            _rule(
                f"ask-before-reading-credentials-from-{kind}",
                "*",
                "human",
                some=credentials,
                kind=kind,
            ),
            *_kind_rules(
                kind,
                [
                    (f"deny-deleting-{kind}-repositories", "*.delete_repository", "deny"),
                    (f"{kind}-{{tool}}-tools-are-routine", reads, "allow"),
                    (f"creating-{kind}-branches-is-routine", "*.create_branch", "allow"),
                    (f"reacting-on-{kind}-is-routine", "*.add_*reaction", "allow"),
                    (f"{kind}-{{tool}}-tools-ask-a-person", REPOSITORY_CHANGES, "human"),
                ],
            ),
        ]
    return rules


def slack_rules() -> list[PolicyRule]:
    """Slack: reading channels and people, and an emoji on a message run; messages ask."""
    return _kind_rules(
        SLACK,
        [
            ("{tool}-tools-are-routine", SLACK_READS, "allow"),
            ("reacting-on-slack-is-routine", "*.slack_add_reaction", "allow"),
            ("slack-messages-ask-a-person", "*.slack_*", "human"),
        ],
    )


def memory_rules() -> list[PolicyRule]:
    """The memory server (a local knowledge graph): reading, adding and correcting run; a secret
    kept in it, or entities forgotten, ask."""
    secret = _holding_secret(MEMORY_PARAMS)
    return [
        _rule("ask-before-keeping-secrets-in-memory", "*", "human", some=secret, kind=MEMORY),
        *_kind_rules(
            MEMORY,
            [
                ("memory-{tool}-is-routine", MEMORY_READS, "allow"),
                ("memory-{tool}-is-routine", MEMORY_ADDITIONS, "allow"),
                ("memory-{tool}-is-routine", MEMORY_CORRECTIONS, "allow"),
                ("forgetting-entities-asks-a-person", "*.delete_entities", "human"),
            ],
        ),
    ]


def local_tool_rules() -> list[PolicyRule]:
    """Sequential thinking and the reference test server act on nothing but themselves; the
    test server's environment (its tokens) asks."""
    return [
        _rule("thinking-is-routine", "*.sequentialthinking", "allow", kind=THINKING),
        *_kind_rules(
            EVERYTHING,
            [
                ("{tool}-asks-a-person", EVERYTHING_ENVIRONMENT, "human"),
                (
                    "the-test-servers-{tool}-is-routine",
                    [f"*.{t}" for t in EVERYTHING_TOOLS],
                    "allow",
                ),
            ],
        ),
    ]


def fetch_rules() -> list[PolicyRule]:
    """Fetching a public page runs; a URL carrying data asks (an address inside is refused
    before, by `deny-urls-to-this-machine-or-its-network`)."""
    return [
        _rule(
            "ask-before-urls-that-carry-data",
            "*.fetch",
            "human",
            [_url("carries_data", True)],
            kind=FETCH,
        ),
        _rule(
            "fetching-public-pages-is-routine",
            "*.fetch",
            "allow",
            [_url("reaches", "public")],
            kind=FETCH,
        ),
    ]


def database_rules() -> list[PolicyRule]:
    """sqlite and PostgreSQL: one statement that only reads runs, and so does describing tables;
    several statements in one are refused; any other statement asks."""
    rules: list[PolicyRule] = []
    for kind, param, tools, reading in (
        (SQLITE, "query", SQLITE_TOOLS, "*.read_query"),
        (POSTGRES, "sql", ("*.query",), "*.query"),
    ):
        several = PolicyCondition(param=param, op="several_sql_statements", value=kind)
        reads = PolicyCondition(param=param, op="read_only_sql", value=kind)
        rules += [
            *(
                _rule(
                    f"deny-several-statements-in-one-{_tool_words(t)}",
                    t,
                    "deny",
                    [several],
                    kind=kind,
                )
                for t in tools
            ),
            _rule(f"{kind}-reads-are-routine", reading, "allow", [reads], kind=kind),
        ]
    return [
        *rules,
        *_kind_rules(
            SQLITE,
            [
                ("sqlite-{tool}-is-routine", SQLITE_READS, "allow"),
                ("noting-insights-is-routine", "*.append_insight", "allow"),
            ],
        ),
    ]


def _browser_url_rules(kind: str, prefix: str, tools: Sequence[str]) -> list[PolicyRule]:
    carries, public = [_url("carries_data", True)], [_url("reaches", "public")]
    return [
        _rule(f"ask-before-{kind}-urls-that-carry-data", prefix, "human", carries, kind=kind),
        *(
            _rule(f"{_tool_words(t)}-to-public-pages-is-routine", t, "allow", public, kind=kind)
            for t in tools
        ),
    ]


def playwright_rules() -> list[PolicyRule]:
    """Playwright: looking, public pages, clicks and typing run; a secret typed (refused
    before), a field for a password or a key, a click that buys, sends or deletes, a URL
    carrying data, a form, an upload and page code ask; what it saves stays in the workspace."""
    kind, every = PLAYWRIGHT, "*.browser_*"
    looks = [f"*.browser_{tool}" for tool in BROWSER_LOOKS]
    field = _matching(["element"], SECRET_FIELD)
    committing = _matching(["element"], COMMITTING_CLICK)
    clicks = "*.browser_click"
    return [
        *_playwright_file_rules(looks),
        _rule("ask-before-typing-into-secret-fields", every, "human", some=field, kind=kind),
        _rule(
            "ask-before-clicks-that-buy-send-or-delete", clicks, "human", some=committing, kind=kind
        ),
        *_browser_url_rules(kind, every, ("*.browser_navigate", "*.browser_tabs")),
        *_kind_rules(
            kind,
            [
                ("{tool}-is-routine", [*looks, clicks, "*.browser_type"], "allow"),
                ("browser-tabs-are-routine", "*.browser_tabs", "allow"),
                ("browser-actions-ask-a-person", every, "human"),
            ],
        ),
    ]


def _playwright_file_rules(looks: Sequence[str]) -> list[PolicyRule]:
    """What Playwright saves (`filename`) stays in the workspace and is no sensitive file; what
    it uploads or drops on a page asks, and from outside the workspace is refused."""
    kind, every = PLAYWRIGHT, "*.browser_*"
    saved = [_inside(BROWSER_SAVES)]
    sensitive = [c for names in SENSITIVE_PATHS.values() for c in _matching([BROWSER_SAVES], names)]
    saving = [_given(BROWSER_SAVES)]
    uploads = ("*.browser_file_upload", "*.browser_drop")  # a file dropped on a page is sent
    return [
        _rule(
            "ask-before-browser-files-that-are-sensitive",
            every,
            "human",
            saved,
            sensitive,
            kind=kind,
        ),
        *(
            _rule(f"{_tool_words(t)}-saving-inside-the-workspace", t, "allow", saved, kind=kind)
            for t in looks
        ),
        _rule("deny-browser-files-outside-the-workspace", every, "deny", some=saving, kind=kind),
        *(
            _rule(f"{_tool_words(t)}-asks-a-person", t, "human", [_inside("paths")], kind=kind)
            for t in uploads
        ),
        *(
            _rule(f"deny-{_tool_words(t)}-from-outside-the-workspace", t, "deny", kind=kind)
            for t in uploads
        ),
    ]


def puppeteer_rules() -> list[PolicyRule]:
    """Puppeteer, as Playwright; and a browser started differently (its sandbox off) asks."""
    kind, every = PUPPETEER, "*.puppeteer_*"
    launch = [_given("launchOptions"), _given("allowDangerous")]
    field, committing = (
        _matching(["selector"], SECRET_FIELD),
        _matching(["selector"], COMMITTING_CLICK),
    )
    looks = [f"*.puppeteer_{tool}" for tool in PUPPETEER_LOOKS]
    return [
        _rule("ask-before-changing-how-the-browser-runs", every, "human", some=launch, kind=kind),
        _rule("ask-before-filling-secret-fields", every, "human", some=field, kind=kind),
        _rule(
            "ask-before-puppeteer-clicks-that-buy-send-or-delete",
            "*.puppeteer_click",
            "human",
            some=committing,
            kind=kind,
        ),
        *_browser_url_rules(kind, every, ("*.puppeteer_navigate",)),
        *_kind_rules(
            kind,
            [
                ("{tool}-is-routine", looks, "allow"),
                ("puppeteer-actions-ask-a-person", every, "human"),
            ],
        ),
    ]


def shell_rules() -> list[PolicyRule]:
    """A shell server: a command that only reads inside the workspace runs (a real parser:
    pipelines, lists, substitutions, redirections as a shell reads them); `rm` run in the root
    or home folder is refused; a command naming credentials asks; anything else asks."""
    in_root_or_home = _matching(("directory", "cwd"), rf"^\s*{_ROOT_OR_HOME}\s*$")
    rm = PolicyCondition(param="command", op="matches", value=r"(?:^|[\s;&|(])(?:\S*/)?rm\b")
    in_stdin = rf"(?:^|[\s=@<'\"/])(?:{CREDENTIAL_FILES_IN_A_COMMAND})"
    # each word as the shell reads it (`.e""nv`), and where it leads (a link to .env)
    named = PolicyCondition(param="command", op="command_names", value=CREDENTIALS_IN_A_REVISION)
    credentials = [named, *_matching(("stdin",), in_stdin)]
    reads = PolicyCondition(param="command", op="read_only_command", value=WORKSPACE)
    return [
        *(
            _rule(
                "deny-deleting-in-root-or-home-folders",
                t,
                "deny",
                [rm],
                in_root_or_home,
                kind=SHELL,
            )
            for t in SHELL_TOOLS
        ),
        *(
            _rule(
                "ask-before-commands-naming-credentials", t, "human", some=credentials, kind=SHELL
            )
            for t in SHELL_TOOLS
        ),
        *(
            _rule("reading-commands-inside-the-workspace", t, "allow", [reads], kind=SHELL)
            for t in SHELL_TOOLS
        ),
    ]


def server_rules() -> list[PolicyRule]:
    """The rules of the servers people run beside the reference ones, each bound to its kind."""
    return [
        *sending_secrets_rules(),
        *repository_rules(),
        *slack_rules(),
        *memory_rules(),
        *local_tool_rules(),
        *fetch_rules(),
        *database_rules(),
        *playwright_rules(),
        *puppeteer_rules(),
        *shell_rules(),
    ]


def declared_read_only_rules() -> list[PolicyRule]:
    """A tool its trusted server declares read-only and closed-world (MCP's annotations) runs
    when every path the call names lies in the workspace: a declaration never widens a path
    rule, and a tool that lies about itself is held by the kernel to its workspace. A value
    with shell syntax in it asks first: a tool that lies may hand it to a shell (`ping_host`
    with `127.0.0.1; cat .env`), and the kernel holds what the shell then reads, not what the
    tool answers."""
    hints = {"readOnlyHint": True, "openWorldHint": False}
    shell = {"param": "*", "op": "matches", "value": SHELL_SYNTAX}
    inside = {"param": "*", "op": "within", "value": WORKSPACE}
    return [
        PolicyRule.model_validate(
            {
                "name": "ask-before-shell-syntax-in-declared-read-only-tools",
                "hints": hints,
                "when": {"all": [shell]},
                "action": "human",
            }
        ),
        PolicyRule.model_validate(
            {
                "name": "tools-their-server-declares-read-only",
                "hints": hints,
                "when": {"all": [inside]},
                "action": "allow",
            }
        ),
    ]


def default_policy() -> PolicyConfig:
    """The policy a careful user would keep, as data: see the module's description."""
    rules = [
        *destructive_rules(),
        inside_address_rule(),
        *resource_and_prompt_rules(),
        *time_rules(),
        encoded_path_rule(),
        *write_rules(),
        *read_rules(),
        *git_rules(),
        *server_rules(),
        *outward_rules(),
        *declared_read_only_rules(),
        _rule("ask-a-person-about-anything-else", "*", "human"),
    ]
    return PolicyConfig(rules=rules, loop_detection=True)
