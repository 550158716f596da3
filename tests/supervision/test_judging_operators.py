"""Policy operators that judge what a parameter does by real parsers: SQL, shell lines, URLs.

Each is tried through a PolicyEngine rule as a policy file writes it, with the attempts to get
past it (a second statement after a comment, a write in a CTE, a substitution in an argument, a
redirection outside, `;` chains, an encoded metadata address, a decimal IP) and the routine
texts it must let through.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from foundry.agent.models import PolicyCondition, PolicyConfig, PolicyMatch, PolicyRule
from foundry.supervision.paths import ServerSite
from foundry.supervision.policy import PolicyEngine


def engine_allowing(
    project: Path, param: str, op: str, value: Any, sites: dict[str, Any] | None = None
) -> PolicyEngine:
    condition = PolicyCondition.model_validate({"param": param, "op": op, "value": value})
    rule = PolicyRule(name="judged", when=PolicyMatch(all=[condition]), action="allow")
    config = PolicyConfig(rules=[rule], loop_detection=False)
    return PolicyEngine(config, project, server_folders=sites)


def allowed(engine: PolicyEngine, params: dict[str, Any], tool: str = "db.query") -> bool:
    return engine.decide("agent", tool, params).action == "allow"


# --- read_only_sql ---------------------------------------------------------------------------

SQL_READS = [
    ("SELECT * FROM users WHERE id = 1", "sqlite"),
    ("SELECT name FROM sqlite_master WHERE type = 'table'", "sqlite"),
    ("select count(*) from orders group by customer order by 1 limit 5;", "sqlite"),
    ("WITH recent AS (SELECT * FROM t WHERE day > 3) SELECT * FROM recent", "postgres"),
    ("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'", "postgres"),
    ("SELECT a FROM t UNION SELECT b FROM u", None),
    ("SELECT x::int, pg_size_pretty(pg_total_relation_size('t')) FROM t", "postgres"),
    ("SELECT 1 -- a comment; DROP TABLE t", "sqlite"),  # all of it a comment, in SQLite too
    ("SELECT E'\\'; DROP TABLE t; --'", "postgres"),  # one string, as PostgreSQL reads it
]
SQL_NOT_READS = [
    ("SELECT 1; DROP TABLE users", "sqlite"),
    ("SELECT 1; -- harmless\nDELETE FROM users", "sqlite"),
    ("SELECT 1 /* /* */; DROP TABLE t; /* */", "sqlite"),  # SQLite ends at the first */
    ("SELECT 1 /* /* */; DROP TABLE t; /* */", "postgres"),  # nested: does not parse
    ("SELECT '\\'; DROP TABLE t; --'", "postgres"),  # a backslash ends no string there
    ("WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone", "postgres"),
    ("SELECT * INTO copy_of_users FROM users", "postgres"),
    ("PRAGMA writable_schema = 1", "sqlite"),
    ("ATTACH DATABASE '/tmp/other.db' AS other", "sqlite"),
    ("EXPLAIN ANALYZE DELETE FROM t", "postgres"),
    ("COMMIT; DROP TABLE t", "postgres"),  # out of a read-only transaction
    ("SELECT * FROM accounts FOR UPDATE", "postgres"),
    ("SELECT pg_read_file('/etc/passwd')", "postgres"),
    ("SELECT dblink_exec('host=x', 'DROP TABLE t')", "postgres"),
    ("SELECT load_extension('/tmp/evil.so')", "sqlite"),
    ("SELECT set_config('search_path', 'evil', false)", "postgres"),
    ("INSERT INTO t VALUES (1)", None),
    ("SELECT * FROM t; SELECT * FROM u", "sqlite"),
    ("SELEC * FROM t", "sqlite"),
    ("", None),
]


@pytest.mark.parametrize(("sql", "dialect"), SQL_READS)
def test_one_read_only_statement_is_a_read(tmp_path: Path, sql: str, dialect: str | None) -> None:
    assert allowed(engine_allowing(tmp_path, "sql", "read_only_sql", dialect), {"sql": sql})


@pytest.mark.parametrize(("sql", "dialect"), SQL_NOT_READS)
def test_a_second_statement_or_a_write_however_hidden_is_not_a_read(
    tmp_path: Path, sql: str, dialect: str | None
) -> None:
    assert not allowed(engine_allowing(tmp_path, "sql", "read_only_sql", dialect), {"sql": sql})


def test_a_statement_of_unknown_dialect_must_read_only_in_every_dialect(tmp_path: Path) -> None:
    engine = engine_allowing(tmp_path, "sql", "read_only_sql", None)
    assert not allowed(engine, {"sql": "SELECT '\\'; DROP TABLE t; --'"})
    assert not allowed(engine, {"sql": ["SELECT 1"]})  # a list is no statement


# --- read_only_command -----------------------------------------------------------------------


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print(1)\n")
    (tmp_path / "outside").mkdir()
    (root / "escape").symlink_to(tmp_path / "outside", target_is_directory=True)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return root


def shell_engine(workspace: Path) -> PolicyEngine:
    sites = {"sh": ServerSite((workspace,), "shell")}
    return engine_allowing(workspace, "command", "read_only_command", ".", sites)


COMMANDS_THAT_READ = [
    "ls -la src",
    "ls -la src | grep py",
    "grep -rn 'TODO' src && wc -l src/app.py",
    "cat src/app.py 2>/dev/null",
    "find . -name '*.py' -type f",
    "git log --oneline -5",
    "git diff HEAD~1 -- src",
    "cat < src/app.py",
    "cat <<EOF\nplain text\nEOF\n",
    ["ls", "-la", "src"],
]
COMMANDS_THAT_DO_MORE = [
    "cat src/app.py; rm -rf src",  # a `;` chain
    "ls && curl https://example.com",
    "cat $(echo /etc/passwd)",  # a substitution in an argument
    "cat `printf /etc/shadow`",
    "ls src > ../out.txt",  # a redirection outside
    "cat src/app.py > src/copy.py",  # any write, inside too
    "cat src/app.py >> /tmp/log",
    "cat /etc/passwd",
    "cat ../outside/x",
    "cat escape/x",  # a link out of the workspace
    "cat ~/.ssh/id_rsa",
    "cat {src,../../etc}/passwd",  # brace expansion climbs out
    "cat .*/x",
    "echo ${HOME}",
    "cat <<EOF\n$(id)\nEOF\n",  # an unquoted here-document expands
    "diff <(ls) src",
    "find . -exec rm {} +",
    "find . -delete",
    "sort -o src/app.py src/app.py",
    "rg --pre cat TODO",
    "git -c core.pager=sh log",
    "git log --output=/tmp/x",
    "git push origin main",
    "PAGER=evil git log",
    "(ls)",
    "for f in *; do cat $f; done",
    "python -c 'print(1)'",
    "grep -f/etc/passwd src",
    "grep --file=/etc/passwd src",
    ["cat", "$(id)"],
    ["ls", ";", "rm", "x"],
    "ls 'unterminated",
    "",
]


@pytest.mark.parametrize("command", COMMANDS_THAT_READ)
def test_a_read_only_command_inside_the_workspace_is_a_read(
    workspace: Path, command: str | list[str]
) -> None:
    assert allowed(shell_engine(workspace), {"command": command}, tool="sh.run")


@pytest.mark.parametrize("command", COMMANDS_THAT_DO_MORE)
def test_a_command_that_writes_runs_more_or_reaches_outside_is_not_a_read(
    workspace: Path, command: str | list[str]
) -> None:
    assert not allowed(shell_engine(workspace), {"command": command}, tool="sh.run")


def test_a_command_runs_in_the_folder_the_call_names(workspace: Path) -> None:
    engine = shell_engine(workspace)
    assert allowed(engine, {"command": "cat app.py", "directory": "src"}, tool="sh.run")
    outside = {"command": "cat secret.txt", "directory": "../outside"}
    assert not allowed(engine, outside, tool="sh.run")


def test_a_server_of_unknown_kind_cannot_place_a_relative_word(workspace: Path) -> None:
    sites = {"other": ServerSite((workspace,), None)}
    engine = engine_allowing(workspace, "command", "read_only_command", ".", sites)
    assert not allowed(engine, {"command": "ls src"}, tool="other.run")


# --- reaches, carries_data -------------------------------------------------------------------

PUBLIC_URLS = [
    "https://docs.python.org/3/library/asyncio.html",
    "https://github.com/modelcontextprotocol/servers",
    "http://8.8.8.8/",
    "https://example.com./",
]
INSIDE_URLS = [
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://%31%36%39.%32%35%34.%31%36%39.%32%35%34/",  # percent-encoded
    "http://2852039166/",  # decimal
    "http://0xa9fea9fe/",  # hex
    "http://0251.0376.0251.0376/",  # octal
    "http://127.1:8080/",
    "http://[::ffff:169.254.169.254]/",  # IPv6-mapped
    "http://[::ffff:a9fe:a9fe]/",
    "http://[64:ff9b::a9fe:a9fe]/",  # NAT64
    "http://[2002:a9fe:a9fe::]/",  # 6to4
    "http://example.com@169.254.169.254/",  # userinfo
    "http://169.254.169.254\\@example.com/",  # a backslash read two ways
    # fullwidth digits
    "http://\uff11\uff16\uff19.\uff12\uff15\uff14.\uff11\uff16\uff19.\uff12\uff15\uff14/",
    "http://169.254.169.254.nip.io/",  # a DNS name that is an IP literal
    "http://a9fea9fe.nip.io/",
    "http://10-0-0-1.internal.example.com/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "http://localhost:3000/",
    "http://router/",
    "http://192.168.1.1/",
    "http://[fe80::1%25eth0]/",
    "http://0/",
    "file:///etc/passwd",
    "gopher://127.0.0.1:6379/_FLUSHALL",
    "http:/example.com",
]


@pytest.mark.parametrize("url", PUBLIC_URLS)
def test_a_public_url_reaches_public(tmp_path: Path, url: str) -> None:
    engine = engine_allowing(tmp_path, "url", "reaches", "public")
    assert allowed(engine, {"url": url})
    assert not allowed(engine_allowing(tmp_path, "url", "reaches", "inside"), {"url": url})


@pytest.mark.parametrize("url", INSIDE_URLS)
def test_a_url_to_this_machine_its_network_or_its_cloud_reaches_inside_however_spelt(
    tmp_path: Path, url: str
) -> None:
    assert allowed(engine_allowing(tmp_path, "url", "reaches", "inside"), {"url": url})
    assert not allowed(engine_allowing(tmp_path, "url", "reaches", "public"), {"url": url})


def test_every_url_of_a_list_must_be_public_and_one_inside_is_enough(tmp_path: Path) -> None:
    urls = {"url": ["https://example.com/", "http://127.0.0.1/"]}
    assert not allowed(engine_allowing(tmp_path, "url", "reaches", "public"), urls)
    assert allowed(engine_allowing(tmp_path, "url", "reaches", "inside"), urls)


def test_a_url_carrying_data_in_its_query_is_told_from_a_plain_page(tmp_path: Path) -> None:
    engine = engine_allowing(tmp_path, "url", "carries_data", True)
    assert allowed(engine, {"url": "https://evil.example/c?d=c2VjcmV0LXRva2VuLWhlcmU"})
    assert allowed(engine, {"url": "https://evil.example/c2VjcmV0LXRva2VuLWhlcmU0MTIz/x"})
    assert allowed(engine, {"url": "https://evil.example/page#c2VjcmV0LXRva2VuLWhlcmU0MTIz"})
    assert not allowed(engine, {"url": "https://docs.python.org/3/library/re.html#re.sub"})
    assert not allowed(engine, {"url": "https://www.google.com/search?q=sqlglot+dialects"})
    assert not allowed(engine, {"url": "https://docs.python.org/3/library/asyncio.html"})


def test_an_operator_with_a_value_it_cannot_take_is_refused_when_the_policy_is_read() -> None:
    with pytest.raises(ValidationError, match="reaches needs one of"):
        PolicyCondition.model_validate({"param": "url", "op": "reaches", "value": "outside"})
    with pytest.raises(ValidationError, match="read_only_command needs the folder"):
        PolicyCondition.model_validate({"param": "command", "op": "read_only_command"})
