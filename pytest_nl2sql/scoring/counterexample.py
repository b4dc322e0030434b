"""What a test-suite flag shows: the smallest rows on which gold and answer still differ, and
whether the difference comes from the gold's own fragility.

``shrink`` runs delta debugging (Zeller's ddmin) over a neighbour's rows, within a time bound:
it removes rows as long as the gold and the answer still give different results (foreign keys
stay satisfied, and the gold's ``ORDER BY ... LIMIT`` must not cut inside a tie on what is
left, nor several rows share the extreme of its bare-column ``MIN`` / ``MAX``). A SQLite
neighbour is copied into memory first (``_SqliteRows``); a PostgreSQL neighbour is shrunk
inside one transaction on the neighbour database itself that is always rolled back
(``_PgRows``): each trial deletes rows under a savepoint as the scratch login, then runs the
gold and the answer in a read-only sub-transaction as the neighbour's reader role, and rolls
back to the savepoint. ``gold_fragility`` says when the gold itself is the weak side: a set
operation or a GROUP BY over non-key columns, or a NULL-sensitive aggregate the answer does
not share, on rows that hold NULLs. docs/scoring.md states both, docs/security.md why the
PostgreSQL trials lend the answer's SQL no privilege.
"""

from __future__ import annotations

import contextlib
import math
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from pytest_nl2sql.scoring.pgneighbours import _ident
from pytest_nl2sql.scoring.presuppose import tie_at_extreme
from pytest_nl2sql.scoring.ties import tie_at_limit

__all__ = ["SHRINK_SECONDS", "gold_fragility", "shrink"]

#: The time bound of one shrinking (the rows found so far are shown when it is reached).
SHRINK_SECONDS = 2.0
#: One query on the copy may run this long.
_QUERY_SECONDS = 1.0

_READS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}


def _read_only(action: int, *_args: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READS else sqlite3.SQLITE_DENY


def _parse(sql: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(sql, read="sqlite")
    except SqlglotError:
        return None


class _Stop(Exception):
    """The copy cannot go on (the time bound, a lock another shrinker holds, a lost server)."""


Item = tuple[str, Any]  # (table, the row's rowid or ctid)


class _SqliteRows:
    """A SQLite neighbour copied into memory; trials delete rows under a savepoint."""

    dialect = "sqlite"

    def __init__(self, database: Path) -> None:
        src = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        try:
            self.con = sqlite3.connect(":memory:")
            src.backup(self.con)
        finally:
            src.close()
        self.con.isolation_level = None  # savepoints only
        self.tables = [r[0] for r in self.con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")]
        self.items: list[Item] = []
        for t in self.tables:
            try:
                self.items += [(t, r[0]) for r in self.con.execute(f'SELECT rowid FROM "{_esc(t)}"')]
            except sqlite3.Error:
                continue  # WITHOUT ROWID: its rows stay
        self.errors: tuple[type[BaseException], ...] = (sqlite3.Error,)
        self.broken = _fk_violations(self.con)

    def run(self, sql: str, limit: int = 100_000) -> tuple[tuple[str, ...], list[tuple]]:
        stop = time.monotonic() + _QUERY_SECONDS
        self.con.set_authorizer(_read_only)
        self.con.set_progress_handler(lambda: 1 if time.monotonic() > stop else 0, 10_000)
        try:
            cur = self.con.execute(sql)
            cols = tuple(d[0] for d in cur.description or ())
            return cols, cur.fetchmany(limit + 1) if limit else cur.fetchall()
        finally:
            self.con.set_authorizer(None)
            self.con.set_progress_handler(None, 0)

    @contextlib.contextmanager
    def keeping(self, keep: Sequence[Item]) -> Iterator[bool]:
        """Only the rows ``keep`` while the block runs: True when foreign keys still hold."""
        self.con.execute("SAVEPOINT shrink")
        try:
            kept = _by_table(self.tables, keep)
            try:
                for t in self.tables:
                    ids = ",".join(map(str, kept[t]))
                    self.con.execute(f'DELETE FROM "{_esc(t)}"' + (f" WHERE rowid NOT IN ({ids})" if ids else ""))
                valid = _fk_violations(self.con) <= self.broken  # else: a parent row its children still need
            except sqlite3.Error:
                valid = False
            yield valid
        finally:
            self.con.execute("ROLLBACK TO shrink")
            self.con.execute("RELEASE shrink")

    def dump(self, items: Sequence[Item]) -> list[dict]:
        out = []
        for t in self.tables:
            ids = [rid for tt, rid in items if tt == t]
            if ids:
                cur = self.con.execute(f'SELECT * FROM "{_esc(t)}" WHERE rowid IN ({",".join(map(str, ids))})')
                out.append({"table": t, "columns": [d[0] for d in cur.description], "rows": [list(r) for r in cur.fetchall()]})
        return out

    def close(self) -> None:
        self.con.close()


class _PgRows:
    """A PostgreSQL neighbour, shrunk in one transaction on the neighbour database that is never
    committed. Each trial: ``SAVEPOINT``, the rows left out deleted (by ``ctid``, children
    first) as the scratch login that owns the tables, then ``SET LOCAL transaction_read_only``
    and ``SET LOCAL ROLE`` to the neighbour's reader role -- a read-only sub-transaction that
    PostgreSQL refuses to turn writable again -- and the gold and the answer, each only after
    the statement guard admits it; ``ROLLBACK TO SAVEPOINT`` restores the rows, the login and
    the write mode. Shrinkers of one neighbour take turns (a transaction-level advisory lock),
    so no trial waits on another's row locks; queries on the neighbour from other sessions see
    its committed rows throughout."""

    dialect = "postgres"

    def __init__(self, neighbour: Any, deadline: float) -> None:
        import psycopg

        from pytest_nl2sql.scoring.pgneighbours import _USER_SCHEMA, _conninfo, reader_role

        self.deadline = deadline
        left = max(1, math.ceil(deadline - time.monotonic()))
        self.con = psycopg.connect(**_conninfo(neighbour.url), connect_timeout=left)
        self.errors = (psycopg.Error, _Refused)
        self.reader = reader_role(neighbour.dbname)
        try:
            self._exec("SET TRANSACTION READ WRITE")  # the database's default is read-only
            self._exec(f"SET LOCAL statement_timeout = {int(_QUERY_SECONDS * 1000)}")
            self._exec(f"SET LOCAL lock_timeout = {int(_QUERY_SECONDS * 1000)}")
            # without its turn within the bound, only the whole neighbour is tried (no deletes)
            while True:
                self.turn = bool(self._exec("SELECT pg_try_advisory_xact_lock(%s, %s)", turn_key(neighbour.dbname))[0][0])
                if self.turn or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            tables = self._exec(f"""
                SELECT c.oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE c.relkind = 'r' AND {_USER_SCHEMA} ORDER BY 2, 3""")
            parents: dict[int, set[int]] = {oid: set() for oid, _, _ in tables}
            for child, parent in self._exec("SELECT conrelid, confrelid FROM pg_constraint WHERE contype = 'f'"):
                if child in parents and parent in parents and child != parent:
                    parents[child].add(parent)
            names = {oid: (nsp, rel) for oid, nsp, rel in tables}
            self.tables = [_pg_name(*names[o]) for o in _parents_first(parents)]
            self.qualified = {_pg_name(nsp, rel): (nsp, rel) for nsp, rel in names.values()}
            self.items = []
            for t in self.tables:
                self.items += [(t, r[0]) for r in self._exec(f"SELECT ctid::text FROM {_ident(*self.qualified[t])}")]
        except BaseException:
            self.close()
            raise

    def _on(self, table: str, template: str) -> Any:
        """``template`` with table ``table`` for its ``{}`` (a quoted identifier, '%' and all)."""
        from psycopg import sql

        return sql.SQL(template).format(sql.Identifier(*self.qualified[table]))

    def _exec(self, sql: Any, params: Sequence[Any] | None = None) -> list[tuple]:
        cur = self.con.execute(sql, params)
        return list(cur.fetchall()) if cur.description else []

    def run(self, sql: str, limit: int = 100_000) -> tuple[tuple[str, ...], list[tuple]]:
        from pytest_nl2sql.datasources.guard import StatementRefused, check_statement
        from pytest_nl2sql.suitefile.values import normalize_row

        try:
            check_statement(sql, "postgresql")  # the answer's SQL has passed it: so does every probe
        except StatementRefused as exc:
            raise _Refused(exc.reason) from None
        import psycopg

        self._exec("SAVEPOINT nl2sql_query")
        try:
            cur = self.con.cursor()
            cur.execute(sql)  # no parameters: the text goes as it is, '%' included
            cols = tuple(str(d[0]) for d in cur.description or ())
            rows = cur.fetchmany(limit + 1) if limit else cur.fetchall()
        except psycopg.Error:
            self._exec("ROLLBACK TO SAVEPOINT nl2sql_query")
            raise
        self._exec("RELEASE SAVEPOINT nl2sql_query")
        return cols, [normalize_row(r) for r in rows]

    @contextlib.contextmanager
    def keeping(self, keep: Sequence[Item]) -> Iterator[bool]:
        import psycopg

        whole = len(keep) == len(self.items)
        if not whole and (not self.turn or time.monotonic() > self.deadline):
            raise _Stop("another shrinker holds this neighbour" if not self.turn else "time bound")
        self._exec("SAVEPOINT nl2sql_shrink")
        try:
            kept = _by_table(self.tables, keep)
            valid = True
            try:
                for t in [] if whole else reversed(self.tables):  # children first
                    self._exec(self._on(t, "DELETE FROM {} WHERE NOT (ctid = ANY (%s::text[]::tid[]))"), (kept[t],))
                for t in [] if whole else self.tables:  # a cascade or SET NULL changed rows that were to stay
                    (n,) = self._exec(self._on(t, "SELECT count(*) FROM {} WHERE ctid = ANY (%s::text[]::tid[])"), (kept[t],))[0]
                    if n != len(kept[t]):
                        valid = False
                        break
            except psycopg.errors.IntegrityError:  # a parent row its children still need
                valid = False
                self._exec("ROLLBACK TO SAVEPOINT nl2sql_shrink")
            except psycopg.Error as exc:  # a lock or statement timeout, no privilege: stop here
                raise _Stop(str(exc)) from None
            if valid:
                self._exec("SET LOCAL transaction_read_only = on")
                self._exec(f"SET LOCAL ROLE {_ident(self.reader)}")
            yield valid
        finally:
            with contextlib.suppress(psycopg.Error):
                self._exec("ROLLBACK TO SAVEPOINT nl2sql_shrink")
                self._exec("RELEASE SAVEPOINT nl2sql_shrink")

    def dump(self, items: Sequence[Item]) -> list[dict]:
        import psycopg

        from pytest_nl2sql.suitefile.values import normalize_row

        out = []
        for t in self.tables:
            ids = [rid for tt, rid in items if tt == t]
            if not ids:
                continue
            cur = self.con.execute(self._on(t, "SELECT * FROM {} WHERE ctid = ANY (%s::text[]::tid[]) ORDER BY ctid"), (ids,))
            columns = [str(d[0]) for d in cur.description or ()]
            try:
                rows = [list(normalize_row(r)) for r in cur.fetchall()]
            except psycopg.DataError:  # a value Python cannot hold (an infinite date): as its text
                from psycopg import sql

                texts = sql.SQL(", ").join(sql.SQL("{}::text").format(sql.Identifier(c)) for c in columns)
                cur = self.con.execute(sql.SQL("SELECT {} FROM {} WHERE ctid = ANY (%s::text[]::tid[]) ORDER BY ctid").format(
                    texts, sql.Identifier(*self.qualified[t])), (ids,))
                rows = [list(r) for r in cur.fetchall()]
            out.append({"table": t, "columns": columns, "rows": rows})
        return out

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.con.rollback()  # nothing a trial did outlives the shrinking
        with contextlib.suppress(Exception):
            self.con.close()


def turn_key(dbname: str) -> tuple[int, int]:
    """The advisory lock (two int4 keys) shrinkers of neighbour ``dbname`` take turns by."""
    return zlib.crc32(dbname.encode()) - 2**31, 23


class _Refused(Exception):
    """The statement guard refuses a query on a PostgreSQL neighbour: it does not run."""


def _pg_name(nsp: str, rel: str) -> str:
    return rel if nsp == "public" else f"{nsp}.{rel}"


def _parents_first(parents: dict[int, set[int]]) -> list[int]:
    """Tables ordered so that every parent comes before its children (cycles: as found)."""
    out: list[int] = []
    seen: set[int] = set()

    def visit(t: int, path: frozenset[int]) -> None:
        if t in seen or t in path:
            return
        for p in sorted(parents[t]):
            visit(p, path | {t})
        seen.add(t)
        out.append(t)

    for t in parents:
        visit(t, frozenset())
    return out


def _by_table(tables: Sequence[str], keep: Sequence[Item]) -> dict[str, list]:
    kept: dict[str, list] = {t: [] for t in tables}
    for t, rid in keep:
        kept[t].append(rid)
    return kept


def shrink(
    database: Any,
    gold_sql: str,
    answer_sql: str,
    differ: Callable[[Any, Any], bool],
    seconds: float = SHRINK_SECONDS,
    *,
    settle: bool = False,
) -> dict | None:
    """The fewest rows of the neighbour ``database`` (a SQLite file, or a ``PgNeighbour``) found
    within ``seconds`` on which ``differ(gold result, answer result)`` still holds (a result is
    ``(columns, rows)``, or the exception when the query fails). None when the neighbour cannot
    be opened, or when no rows are a valid counterexample. With ``settle``, a neighbour whose
    whole rows are no valid counterexample (a tie at the gold's LIMIT) is tried again without
    each one of its rows. When the time bound (or a PostgreSQL lock held past it) stops the
    shrinking, the fewest rows found so far come back with ``complete`` false."""
    deadline = time.monotonic() + seconds
    try:
        copy: Any = _SqliteRows(database) if isinstance(database, Path) else _PgRows(database, deadline)
    except (sqlite3.Error, _Stop):
        return None
    except Exception as exc:  # noqa: BLE001 -- e.g. the scratch server gone: no counterexample
        if type(exc).__module__.startswith("psycopg"):
            return None
        raise
    try:
        return _ddmin(copy, gold_sql, answer_sql, differ, deadline, settle)
    finally:
        copy.close()


def _ddmin(copy: Any, gold_sql: str, answer_sql: str, differ: Callable[[Any, Any], bool], deadline: float,
           settle: bool) -> dict | None:
    items: list[Item] = list(copy.items)
    gold_tree = _parse(gold_sql)
    dialect = copy.dialect

    def outcome(keep: Sequence[Item]) -> tuple[Any, Any] | None:
        """Both results on the rows ``keep``, or None when those rows are no valid counterexample."""
        with copy.keeping(keep) as valid:
            if not valid:
                return None
            try:
                gold = copy.run(gold_sql)
            except copy.errors:
                return None
            if tie_at_limit(gold_tree, dialect, lambda s, n: copy.run(s, n), identical=True) is not None:
                return None
            if tie_at_extreme(gold_tree, dialect, copy.run):
                return None
            try:
                answer: Any = copy.run(answer_sql)
            except copy.errors as exc:
                answer = exc
            return (gold, answer) if differ(gold, answer) else None

    def still_tied(keep: Sequence[Item]) -> bool:
        """On the rows ``keep`` (foreign keys holding), the gold's LIMIT still cuts a tie."""
        with copy.keeping(keep) as valid:
            return valid and tie_at_limit(gold_tree, dialect, lambda s, n: copy.run(s, n), identical=True) is not None

    whole = len(items)
    complete = True
    try:
        best = outcome(items)
    except _Stop:
        return None
    try:
        if best is None and settle:
            # the whole neighbour does not judge (a tie at the gold's LIMIT): the same rows less one
            # may settle the tie and still tell gold and answer apart -- a neighbour of its own
            x, left_out = 0, True
            while best is None and time.monotonic() <= deadline:
                if x >= len(items):  # another pass: a parent row may go once its children went
                    if not left_out:
                        break
                    x, left_out = 0, False
                    continue
                rest = items[:x] + items[x + 1:]
                best = outcome(rest)
                if best is not None:
                    items = rest
                elif still_tied(rest):  # a row the tie does not need: left out, the tie gets smaller
                    items, left_out = rest, True
                else:
                    x += 1
        if best is None:
            return None
        n = 2
        while len(items) >= 2:
            if time.monotonic() > deadline:
                complete = False
                break
            size = math.ceil(len(items) / n)
            chunks = [items[i:i + size] for i in range(0, len(items), size)]
            reduced = False
            for k in range(len(chunks)):
                rest = [x for j, c in enumerate(chunks) if j != k for x in c]
                found = outcome(rest)
                if found is not None:
                    items, best, n, reduced = rest, found, max(n - 1, 2), True
                    break
                if time.monotonic() > deadline:
                    break
            if not reduced and n > 2:
                for c in chunks:
                    found = outcome(c)
                    if found is not None:
                        items, best, n, reduced = c, found, 2, True
                        break
            if not reduced:
                if n >= len(items):
                    break
                n = min(len(items), n * 2)
        if len(items) == 1 and time.monotonic() <= deadline:
            found = outcome([])
            if found is not None:
                items, best = [], found
    except _Stop:
        if best is None:
            return None
        complete = False
    gold, answer = best
    return {
        "rows": copy.dump(items),
        "row_count": len(items),
        "shrunk_from": whole,
        "complete": complete,
        "gold_columns": list(gold[0]),
        "gold_rows": [list(r) for r in gold[1][:20]],
        "answer_columns": None if isinstance(answer, Exception) else list(answer[0]),
        "answer_rows": None if isinstance(answer, Exception) else [list(r) for r in answer[1][:20]],
        "answer_error": (str(answer).strip().splitlines() or [type(answer).__name__])[0] if isinstance(answer, Exception) else None,
    }


def _fk_violations(con: sqlite3.Connection) -> int:
    try:
        return len(con.execute("PRAGMA foreign_key_check").fetchall())
    except sqlite3.Error:  # a foreign key naming a table the schema lacks: not checked
        return 0


def _esc(name: str) -> str:
    return name.replace('"', '""')


def _idlike(name: str) -> bool:
    n = name.lower()
    return n == "id" or n.endswith("id") or n.endswith("_key") or n.endswith("code") or n == "rowid"


def _group_names(tree: exp.Expression) -> set[str]:
    out = set()
    for g in tree.find_all(exp.Group):
        for e in g.expressions:
            if isinstance(e, exp.Column):
                out.add(e.name.lower())
    return out


def _set_ops(tree: exp.Expression) -> set[type]:
    return {type(n) for n in tree.find_all(exp.Except, exp.Intersect)}


def _null_sensitive(tree: exp.Expression) -> dict[str, set[str]]:
    """NULL-sensitive constructs -> the columns they read: COUNT(column), NOT IN (subquery)."""
    found: dict[str, set[str]] = {}
    for c in tree.find_all(exp.Count):
        arg = c.this
        if arg is not None and not isinstance(arg, (exp.Star, exp.Distinct)):
            found.setdefault("COUNT(column)", set()).update(x.name.lower() for x in arg.find_all(exp.Column))
    for n in tree.find_all(exp.Not):
        if isinstance(n.this, exp.In) and n.this.args.get("query") is not None:
            q = n.this.args["query"]
            cols = {x.name.lower() for x in q.find_all(exp.Column)} | {x.name.lower() for x in n.this.this.find_all(exp.Column)}
            found.setdefault("NOT IN (subquery)", set()).update(cols)
    return found


def _null_columns(counterexample: dict) -> set[str]:
    out = set()
    for t in counterexample["rows"]:
        for r in t["rows"]:
            out |= {str(c).lower() for c, v in zip(t["columns"], r, strict=False) if v is None}
    return out


def gold_fragility(gold_sql: str, answer_sql: str, counterexample: dict | None) -> str | None:
    """Why the difference may come from the gold's own weakness, or None: the gold uses a set
    operation or groups by a non-key column where the answer does not, or a NULL-sensitive
    construct the answer lacks, on a counterexample that holds a NULL."""
    gold, answer = _parse(gold_sql), _parse(answer_sql)
    if gold is None or answer is None:
        return None
    ops = _set_ops(gold) - _set_ops(answer)
    if ops:
        names = sorted(o.__name__.upper() for o in ops)
        selected = [e.alias_or_name for s in gold.find_all(exp.Select) for e in s.expressions]
        if any(n and not _idlike(n) for n in selected):
            return f"the gold compares rows by {' / '.join(names)} over non-key columns: equal names of different rows merge"
    gold_by, answer_by = _group_names(gold), _group_names(answer)
    by = {g for g in gold_by if not _idlike(g)} - answer_by
    if gold_by and not any(_idlike(g) for g in gold_by) and any(_idlike(g) for g in answer_by):
        by = {g for g in gold_by if not _idlike(g)}  # the answer groups by a key, the gold by names only
    if by:
        return f"the gold groups by the non-key column{'s' if len(by) > 1 else ''} {', '.join(sorted(by))}: different rows with one name merge"
    ours = _null_sensitive(answer)
    sens = {k: v for k, v in _null_sensitive(gold).items() if k not in ours}
    nulls = _null_columns(counterexample) if counterexample else set()
    hit = sorted(k for k, cols in sens.items() if cols & nulls)
    if hit:
        return f"the gold's {' and '.join(hit)} reads a NULL of this neighbour that the answer does not"
    return None
