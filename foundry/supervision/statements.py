"""Whether an SQL text is one statement that only reads, as the database will parse it.

The text is parsed by sqlglot in the dialect of the database that runs it (`sqlite`,
`postgres`, ...; without one, in each of the common dialects, and every reading must agree).
It reads only when it is exactly one query (SELECT, a set operation of queries, VALUES) with no
part that writes or acts: no INSERT, UPDATE, DELETE or MERGE in a CTE, no `SELECT ... INTO`,
no row locks (`FOR UPDATE`), and no function that reads the server's files, changes settings
or sessions, loads code or sleeps (`pg_read_file`, `set_config`, `load_extension`, ...). A
second statement however hidden (after a comment, inside what another dialect takes for a
string), PRAGMA, ATTACH, EXPLAIN ANALYZE (it runs the statement), SET, COPY, a transaction's
COMMIT, or a text that does not parse are not a read; the plan of a read (`EXPLAIN SELECT`)
is one.
"""

from __future__ import annotations

import functools
import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

DIALECTS = ("sqlite", "postgres", "mysql", "duckdb")  # a text of unknown dialect is read in each
MAX_STATEMENT_CHARS = 100_000  # a longer text is not judged a read

QUERIES = (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Values, exp.Subquery)
WRITING = (
    exp.Insert, exp.Update, exp.Delete, exp.Merge, exp.Create, exp.Drop, exp.Alter,
    exp.Into, exp.Lock, exp.Command, exp.Pragma, exp.Attach, exp.Detach, exp.Set,
    exp.Transaction, exp.Commit, exp.Rollback, exp.Copy, exp.Use, exp.TruncateTable,
)  # fmt: skip
# functions that read or write the server's files, act on other sessions, change settings,
# load code, take locks, move sequences or wait: a SELECT of them acts
ACTING_FUNCTIONS = frozenset(
    {
        "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer", "zipfile",
        "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_ls_logdir",
        "pg_ls_waldir", "pg_ls_tmpdir", "pg_file_write", "pg_file_rename", "pg_file_unlink",
        "lo_import", "lo_export", "lo_from_bytea", "lo_put", "lo_unlink", "lo_create",
        "pg_terminate_backend", "pg_cancel_backend", "pg_reload_conf", "pg_rotate_logfile",
        "pg_promote", "pg_switch_wal", "pg_create_restore_point", "pg_start_backup",
        "pg_stop_backup", "pg_backup_start", "pg_backup_stop", "set_config", "nextval",
        "setval", "pg_sleep", "pg_sleep_for", "pg_sleep_until", "query_to_xml",
        "query_to_xml_and_xmlschema", "table_to_xml", "cursor_to_xml", "pg_notify",
        "pg_advisory_lock", "pg_advisory_xact_lock", "pg_try_advisory_lock",
        "pg_advisory_lock_shared", "pg_logical_emit_message", "pg_replication_origin_create",
        "pg_create_logical_replication_slot", "pg_create_physical_replication_slot",
        "pg_drop_replication_slot", "txid_current", "pg_current_xact_id", "sleep",
        "benchmark", "load_file", "get_lock", "sys_exec", "sys_eval",
    }
)  # fmt: skip
ACTING_PREFIXES = ("dblink", "lo_", "pg_advisory", "pg_replication", "pg_logical")

# `EXPLAIN [QUERY PLAN] [VERBOSE]` before a statement: its plan, the statement not run
_PLAN_OF = re.compile(r"^\s*explain\s+(?:query\s+plan\s+|verbose\s+)?", re.IGNORECASE)

# sqlglot warns of each statement it keeps as an unparsed command: judged here, not news
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def reads_only(text: str, dialect: str | None = None) -> bool:
    """Whether `text` is one statement that only reads (see the module's description)."""
    if not isinstance(text, str) or len(text) > MAX_STATEMENT_CHARS:
        return False
    planned = _PLAN_OF.match(text)
    if planned is not None:  # the plan of a read is a read; EXPLAIN ANALYZE runs what follows
        text = text[planned.end() :]
    return all(_reads_only_in(text, name) for name in _dialects(dialect))


def several_statements(text: str, dialect: str | None = None) -> bool:
    """Whether `text` holds more than one statement in some reading (the dialect's, or any
    common one's without it): one hidden after the first is an attempt to get past a check."""
    if not isinstance(text, str) or len(text) > MAX_STATEMENT_CHARS:
        return False
    return any(_statement_count(text, name) > 1 for name in _dialects(dialect))


def _dialects(dialect: str | None) -> tuple[str, ...]:
    return (dialect,) if dialect else DIALECTS


@functools.lru_cache(maxsize=1024)
def _statement_count(text: str, dialect: str) -> int:
    statements = _statements(text, dialect)
    return 0 if statements is None else len(statements)


def _statements(text: str, dialect: str) -> list[exp.Expr] | None:
    """The statements of `text` (comments alone are none); None when it does not parse."""
    try:
        parsed = sqlglot.parse(text, read=dialect)
    except SqlglotError:
        return None
    except (ValueError, RecursionError):  # an unknown dialect, a text nested too deep
        return None
    return [s for s in parsed if s is not None and not isinstance(s, exp.Semicolon)]


@functools.lru_cache(maxsize=1024)
def _reads_only_in(text: str, dialect: str) -> bool:
    statements = _statements(text, dialect)
    if statements is None or len(statements) != 1 or not isinstance(statements[0], QUERIES):
        return False
    return not any(_acts(node) for node in statements[0].walk())


def _acts(node: exp.Expr) -> bool:
    if isinstance(node, WRITING):
        return True
    if not isinstance(node, exp.Func):
        return False
    name = (node.name if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
    return name in ACTING_FUNCTIONS or name.startswith(ACTING_PREFIXES)
