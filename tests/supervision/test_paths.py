"""Every path a call names is judged where its server runs; a path that cannot be judged never
passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from foundry.agent.default_policy import default_policy
from foundry.agent.models import McpServerConfig, PolicyConfig
from foundry.supervision.paths import (
    ServerFolders,
    ServerSite,
    UnresolvablePath,
    find_paths,
    is_path_name,
    looks_like_path,
    resolve_path,
    server_folders,
)
from foundry.supervision.policy import PolicyEngine


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with `src/`, a `data/` folder, and `escape` linking to a folder outside it."""
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "data").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "escape").symlink_to(outside, target_is_directory=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root


def rules(*entries: dict[str, Any]) -> PolicyConfig:
    return PolicyConfig.model_validate({"rules": list(entries), "loopDetection": False})


def files_at(*folders: Path) -> ServerSite:
    """A filesystem server taking relative paths from these folders."""
    return ServerSite(folders=folders, kind="filesystem")


READS_INSIDE = rules(
    {
        "name": "reads-inside-project",
        "tool": "*.read*",
        "when": {"all": [{"param": "path", "op": "within", "value": "."}]},
        "action": "allow",
    },
    {"name": "the-rest", "tool": "*", "action": "deny"},
)


def within_rule(tool: str, param: str) -> PolicyConfig:
    return rules(
        {
            "name": "inside",
            "tool": tool,
            "when": {"all": [{"param": param, "op": "within", "value": "."}]},
            "action": "allow",
        }
    )


# --- finding paths ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "path", "paths", "file", "files", "file_path", "filePath", "FILE_PATH", "file-path",
        "filename", "source", "destination", "src", "dst", "dest", "target", "dir", "directory",
        "cwd", "repo_path", "repoPath", "root", "folder", "configFile", "output_dir", "baseDir",
        "working_directory", "location",
    ],
)  # fmt: skip
def test_parameters_named_for_paths_are_paths(name: str) -> None:
    assert is_path_name(name)


@pytest.mark.parametrize("name", ["profile", "content", "query", "to", "url", "mode", "text"])
def test_other_parameter_names_are_not(name: str) -> None:
    assert not is_path_name(name)


@pytest.mark.parametrize(
    ("value", "is_path"),
    [
        ("/etc/hostname", True),
        ("~/.ssh/id_rsa", True),
        ("~", True),
        ("./build", True),
        ("../secrets", True),
        ("..", True),
        ("C:\\Windows\\win.ini", True),
        ("file:///etc/passwd", True),
        ("src/main.py", True),
        ("a/../../x", True),
        ("docs/policy.md", True),
        ("text/plain", False),
        ("owner/repo", False),
        ("https://example.com/a/b.html", False),
        ("hello world", False),
        ("~5 minutes", False),
        ("see docs/policy.md for details", False),
        ("line one\n/etc/passwd", False),
        ("", False),
    ],
)
def test_strings_that_look_like_paths(value: str, is_path: bool) -> None:
    assert looks_like_path(value) is is_path


def test_paths_are_found_in_lists_nested_objects_and_keys() -> None:
    params = {
        "paths": ["a.txt", "b.txt"],
        "options": {"workingDir": "sub", "exclude": ["../../etc/passwd"]},
        "files": {"/etc/x": "content of x"},
        "args": ["--verbose", "~/notes.md"],
        "url": "https://example.com/x.html",
        "content": "/etc/shadow",
        "edits": [{"oldText": "/usr/bin", "newText": "/opt/bin"}],
    }
    found, problem = find_paths(params)
    assert problem is None
    assert dict(found) == {
        "paths[0]": "a.txt",
        "paths[1]": "b.txt",
        "options.workingDir": "sub",
        "options.exclude[0]": "../../etc/passwd",
        "files./etc/x (a key)": "/etc/x",
        "args[1]": "~/notes.md",
    }


def test_parameters_too_deep_to_search_cannot_be_judged(project: Path) -> None:
    deep: dict[str, Any] = {"path": "a.txt"}
    for _ in range(20):
        deep = {"inner": deep}
    paths = ServerFolders(project).paths_of("fs.read_file", deep)
    assert paths.problem is not None
    assert not paths.all_within(str(project))


# --- resolving -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("src/\x00x", "control character"),
        ("x" * 5000, "longer than"),
        ("a/" + "n" * 300, "longer than 255"),
        ("src/\udcff.py", "not valid Unicode"),
        ("src/\u202egnp.exe", "text-direction"),
        ("escape/../proj/x", "symbolic link"),
        ("file://evil.example/etc/passwd", "another host"),
    ],
)
def test_paths_that_cannot_be_judged(project: Path, raw: str, why: str) -> None:
    with pytest.raises(UnresolvablePath, match=why):
        resolve_path(raw, project)


def test_a_relative_path_of_a_server_with_no_known_folder_cannot_be_judged() -> None:
    with pytest.raises(UnresolvablePath, match="unknown"):
        resolve_path("a.txt", None)


def test_a_path_resolves_where_its_server_runs(project: Path) -> None:
    folders = ServerFolders(
        project, {"fs": files_at(Path("/")), "data": files_at(project / "data")}
    )
    assert folders.paths_of("fs.read_file", {"path": "etc/hostname"}).paths[0].resolved == (
        "/etc/hostname"
    )
    inside = folders.paths_of("data.read_file", {"path": "a.txt"})
    assert inside.paths[0].resolved == str((project / "data" / "a.txt").resolve())
    assert folders.folder_of("other.read_file") is None


def test_server_folders_follow_the_agents_mcp_servers(project: Path) -> None:
    adapter: TypeAdapter[McpServerConfig] = TypeAdapter(McpServerConfig)
    servers = {
        "root": adapter.validate_python({"command": "x", "cwd": "/"}),
        "data": adapter.validate_python({"command": "x", "cwd": "data"}),
        "plain": adapter.validate_python({"command": "x"}),
        "remote": adapter.validate_python({"type": "sse", "url": "http://127.0.0.1:9/sse"}),
    }
    assert server_folders(servers, project) == {
        "root": ServerSite((Path("/"),)),
        "data": ServerSite((project / "data",)),
        "plain": ServerSite((project,)),
        "remote": ServerSite(None),
    }


def test_a_relative_path_is_judged_from_every_folder_its_server_may_take_it_from(
    project: Path,
) -> None:
    """The reference filesystem server joins a relative path to the folders its command line
    names, not to the folder it runs in: both readings are judged."""
    (project / "data").mkdir(exist_ok=True)
    adapter: TypeAdapter[McpServerConfig] = TypeAdapter(McpServerConfig)
    server = adapter.validate_python({"command": "mcp-server-filesystem", "args": [".."]})
    places = server_folders({"fs": server}, project / "data")
    assert places == {"fs": files_at(project / "data", project / "data" / "..")}
    folders = ServerFolders(project, places)
    found = folders.paths_of("fs.read", {"path": "a.txt"})
    assert [p.resolved for p in found.paths] == [
        str((project / "data" / "a.txt").resolve()),
        str((project / "a.txt").resolve()),
    ]
    assert not found.all_within(str((project / "data").resolve()))
    absolute = folders.paths_of("fs.read", {"path": str(project / "data" / "a.txt")})
    assert len(absolute.paths) == 1  # an absolute path reads the same from anywhere


def test_an_allow_rule_on_path_text_holds_for_every_folder_a_relative_path_is_taken_from(
    project: Path,
) -> None:
    starts_in_src = rules(
        {
            "name": "src-reads",
            "tool": "fs.read",
            "when": {"all": [{"param": "path", "op": "starts_with", "value": "src/"}]},
            "action": "allow",
        },
        {"name": "the-rest", "tool": "*", "action": "deny"},
    )
    one_place = PolicyEngine(starts_in_src, project, server_folders={"fs": files_at(project)})
    assert one_place.decide("a", "fs.read", {"path": "src/a.py"}).action == "allow"
    two_places = {"fs": files_at(project, project / "escape")}  # given a folder outside
    engine = PolicyEngine(starts_in_src, project, server_folders=two_places)
    assert engine.decide("a", "fs.read", {"path": "src/a.py"}).action == "deny"
    assert engine.decide("a", "fs.read", {"path": str(project / "src/a.py")}).action == "allow"


def test_a_name_with_a_twin_in_another_unicode_form_cannot_be_judged(project: Path) -> None:
    outside = project.parent / "elsewhere"
    outside.mkdir(exist_ok=True)
    (project / "caf\u00e9").symlink_to(outside, target_is_directory=True)  # NFC
    with pytest.raises(UnresolvablePath, match="another Unicode form"):
        resolve_path("cafe\u0301/secret.md", project)  # NFD: a server may take the link
    assert resolve_path("caf\u00e9-new/a.md", project) == str(
        project.resolve() / "caf\u00e9-new/a.md"
    )


# --- the policy judges every path (finding 1) ----------------------------------------------------


def test_a_second_path_parameter_outside_the_project_is_not_read(project: Path) -> None:
    engine = PolicyEngine(READS_INSIDE, project)
    attack = {"path": "src/a.py", "file_path": "/etc/hostname"}
    decision = engine.decide("agent", "files.read_file", attack)
    assert decision.action == "deny"
    routine = {"path": "src/a.py", "file_path": "src/b.py", "encoding": "utf-8"}
    assert engine.decide("agent", "files.read_file", routine).action == "allow"


def test_a_list_of_paths_is_judged_path_by_path(project: Path) -> None:
    engine = PolicyEngine(within_rule("*.read_multiple_files", "paths"), project)
    attack = {"paths": ["src/a.py", "/etc/shadow"]}
    assert engine.decide("agent", "fs.read_multiple_files", attack).action == "deny"
    routine = {"paths": ["src/a.py", "README.md"]}
    assert engine.decide("agent", "fs.read_multiple_files", routine).action == "allow"


def test_a_move_is_judged_by_its_destination_too(project: Path) -> None:
    engine = PolicyEngine(within_rule("*.move_file", "source"), project)
    attack = {"source": "src", "destination": "/tmp/src"}
    assert engine.decide("agent", "fs.move_file", attack).action == "deny"
    routine = {"source": "src/a.py", "destination": "src/b.py"}
    assert engine.decide("agent", "fs.move_file", routine).action == "allow"


def test_a_git_repo_path_is_judged(project: Path) -> None:
    engine = PolicyEngine(within_rule("git.*", "repo_path"), project)
    assert engine.decide("agent", "git.git_status", {"repo_path": "/"}).action == "deny"
    assert engine.decide("agent", "git.git_status", {"repo_path": "."}).action == "allow"


def test_paths_hidden_in_nested_options_and_arguments_are_judged(project: Path) -> None:
    engine = PolicyEngine(READS_INSIDE, project)
    for attack in (
        {"path": "src", "options": {"include": ["../../etc/passwd"]}},
        {"path": "src", "args": ["~/.ssh/id_rsa"]},
        {"path": "src", "extra": "file:///etc/shadow"},
    ):
        assert engine.decide("agent", "fs.read_file", attack).action == "deny", attack
    routine = {"path": "src", "pattern": "**/*.py", "content": "/etc/hosts", "limit": 20}
    assert engine.decide("agent", "fs.read_file", routine).action == "allow"


def test_a_path_that_cannot_be_judged_never_satisfies_an_allow_rule(project: Path) -> None:
    engine = PolicyEngine(READS_INSIDE, project)
    for raw in ("src/\x00", "x" * 5000, "src/\udcff", "escape/../proj/src/a.py"):
        assert engine.decide("agent", "fs.read_file", {"path": raw}).action == "deny", raw


def test_a_relative_path_is_judged_where_the_server_runs(project: Path) -> None:
    """A server configured with `"cwd": "/"` reads etc/hostname as /etc/hostname."""
    folders = {"fs": files_at(Path("/")), "data": files_at(project / "data")}
    engine = PolicyEngine(READS_INSIDE, project, server_folders=folders)
    assert engine.decide("agent", "fs.read_file", {"path": "etc/hostname"}).action == "deny"
    assert engine.decide("agent", "data.read_file", {"path": "notes.txt"}).action == "allow"


def test_a_server_whose_folder_is_unknown_never_satisfies_a_path_rule(project: Path) -> None:
    folders = {"remote": None, "fs": files_at(project)}
    engine = PolicyEngine(READS_INSIDE, project, server_folders=folders)
    assert engine.decide("agent", "remote.read_file", {"path": "a.txt"}).action == "deny"
    assert engine.decide("agent", "unlisted.read_file", {"path": "a.txt"}).action == "deny"
    assert engine.decide("agent", "fs.read_file", {"path": "a.txt"}).action == "allow"


def test_the_default_policy_denies_a_read_that_names_a_second_path_outside(project: Path) -> None:
    engine = PolicyEngine(default_policy(), project)
    attack = {"path": "src/a.py", "file_path": "/etc/hostname"}
    assert engine.decide("agent", "filesystem.read_file", attack).action == "deny"
    assert engine.decide("agent", "filesystem.read_file", {"path": "src/a.py"}).action == "allow"


@pytest.mark.parametrize(
    ("command", "paths"),
    [
        ("cat /etc/passwd", ["/etc/passwd"]),
        ("ls -la src", []),
        ("grep -rn TODO src > docs/todo.txt", ["docs/todo.txt"]),
        ("tar -cf x.tar --directory=/etc .", ["/etc"]),
        ('bash -c "cat ../../etc/x"', ["../../etc/x"]),
        ("python3 -c \"print(open('/etc/shadow').read())\"", ["/etc/shadow"]),
        ("cat $HOME/.ssh/id_rsa", ["~/.ssh/id_rsa"]),
        ("echo hi && cat ~/.bashrc", ["~/.bashrc"]),
        ("curl https://example.com/x", []),
    ],
)
def test_the_arguments_of_a_command_line_are_paths(command: str, paths: list[str]) -> None:
    found, problem = find_paths({"command": command})
    assert problem is None
    assert [raw for where, raw in found if "a command's argument" in where] == paths


def test_a_path_spelt_with_a_shell_variable_cannot_be_judged() -> None:
    _, problem = find_paths({"cmd": "cat $DIR/x"})
    assert problem is not None and "$DIR/x" in problem


@pytest.mark.parametrize(
    ("value", "is_path"),
    [("..%2f..%2fetc%2fpasswd", True), ("%2Fetc%2Fpasswd", True), ("100%25", False)],
)
def test_a_percent_encoded_path_looks_like_one(value: str, is_path: bool) -> None:
    assert looks_like_path(value) is is_path


def test_a_symlink_loop_cannot_be_judged(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(UnresolvablePath, match="loop"):
        resolve_path("loop/x", tmp_path)


@pytest.mark.parametrize(
    ("folder", "raw", "leads_to"),
    [
        ("link/sub", "a.txt", "real/sub/a.txt"),  # the server's folder is reached by a link
        ("link/sub", "./a.txt", "real/sub/a.txt"),
        ("link/sub", "up/x", "elsewhere/x"),  # a link in the path, relative to where it lies
        ("link/sub", "ABS/elsewhere/x", "elsewhere/x"),
        ("link/sub", "ABS/link/sub/up/x", "elsewhere/x"),
        ("link/sub", "../sub/a.txt", "real/sub/a.txt"),
        ("nested", "../y", "real/y"),  # `..` climbs from where the folder's link leads
        ("nested", "up/x", "elsewhere/x"),
        ("link/sub", "up/../x", None),  # `..` after a link in the path: not where it reads
    ],
)
def test_a_path_resolves_through_the_links_of_its_folder_and_its_own(
    tmp_path: Path, folder: str, raw: str, leads_to: str | None
) -> None:
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real", target_is_directory=True)
    (tmp_path / "nested").symlink_to(tmp_path / "real" / "sub", target_is_directory=True)
    (tmp_path / "real" / "sub" / "up").symlink_to("../../elsewhere", target_is_directory=True)
    raw = raw.replace("ABS", str(tmp_path))
    if leads_to is None:
        with pytest.raises(UnresolvablePath, match="symbolic link"):
            resolve_path(raw, tmp_path / folder)
    else:
        assert resolve_path(raw, tmp_path / folder) == str(tmp_path.resolve() / leads_to)
