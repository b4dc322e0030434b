"""What a test-suite flag shows: the smallest rows on which gold and answer still differ, and
whether the difference comes from the gold's own fragility.

``shrink`` copies a SQLite neighbour into memory and runs delta debugging (Zeller's ddmin) over
its rows, within a time bound: it removes rows as long as the gold and the answer still give
different results (foreign keys stay satisfied, and the gold's ``ORDER BY ... LIMIT`` must not
cut inside a tie on what is left, nor several rows share the extreme of its bare-column
``MIN`` / ``MAX``). ``gold_fragility`` says when the gold itself is the weak
side: a set operation or a GROUP BY over non-key columns, or a NULL-sensitive aggregate the
answer does not share, on rows that hold NULLs. docs/scoring.md states both.
"""

from __future__ import annotations

import math
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from pytest_nl2sql.scoring.presuppose import tie_at_extreme
from pytest_nl2sql.scoring.ties import tie_at_limit

__all__ = ["SHRINK_SECONDS", "gold_fragility", "shrink"]

#: The time bound of one shrinking (the rows found so far are shown when it is reached).
SHRINK_SECONDS = 2.0
#: One query on the in-memory copy may run this long.
_QUERY_SECONDS = 1.0

_READS = {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION}


def _read_only(action: int, *_args: Any) -> int:
    return sqlite3.SQLITE_OK if action in _READS else sqlite3.SQLITE_DENY


def _parse(sql: str) -> exp.Expression | None:
    try:
        return sqlglot.parse_one(sql, read="sqlite")
    except SqlglotError:
        return None


def shrink(
    database: Path,
    gold_sql: str,
    answer_sql: str,
    differ: Callable[[Any, Any], bool],
    seconds: float = SHRINK_SECONDS,
    *,
    settle: bool = False,
) -> dict | None:
    """The fewest rows of the SQLite neighbour ``database`` found within ``seconds`` on which
    ``differ(gold result, answer result)`` still holds (a result is ``(columns, rows)``, or the
    exception when the query fails). None when the neighbour cannot be copied, or when no rows
    are a valid counterexample. With ``settle``, a neighbour whose whole rows are no valid
    counterexample (a tie at the gold's LIMIT) is tried again without each one of its rows."""
    deadline = time.monotonic() + seconds
    try:
        src = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
        con = sqlite3.connect(":memory:")
        src.backup(con)
        src.close()
    except sqlite3.Error:
        return None
    con.isolation_level = None  # savepoints only
    tables = [
        r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    ]
    items: list[tuple[str, int]] = []
    for t in tables:
        try:
            items += [(t, r[0]) for r in con.execute(f'SELECT rowid FROM "{_esc(t)}"')]
        except sqlite3.Error:
            continue  # WITHOUT ROWID: its rows stay
    gold_tree = _parse(gold_sql)
    broken = _fk_violations(con)

    def run(sql: str, limit: int = 100_000) -> tuple[tuple[str, ...], list[tuple]]:
        stop = time.monotonic() + _QUERY_SECONDS
        con.set_authorizer(_read_only)
        con.set_progress_handler(lambda: 1 if time.monotonic() > stop else 0, 10_000)
        try:
            cur = con.execute(sql)
            cols = tuple(d[0] for d in cur.description or ())
            return cols, cur.fetchmany(limit + 1) if limit else cur.fetchall()
        finally:
            con.set_authorizer(None)
            con.set_progress_handler(None, 0)

    def outcome(keep: Sequence[tuple[str, int]]) -> tuple[Any, Any] | None:
        """Both results on the rows ``keep``, or None when those rows are no valid counterexample."""
        con.execute("SAVEPOINT shrink")
        try:
            kept: dict[str, list[int]] = {t: [] for t in tables}
            for t, rid in keep:
                kept[t].append(rid)
            try:
                for t in tables:
                    ids = ",".join(map(str, kept[t]))
                    where = f" WHERE rowid NOT IN ({ids})" if ids else ""
                    con.execute(f'DELETE FROM "{_esc(t)}"{where}')
                if _fk_violations(con) > broken:
                    return None  # a parent row its children still need
            except sqlite3.Error:
                return None
            try:
                gold = run(gold_sql)
            except sqlite3.Error:
                return None
            if tie_at_limit(gold_tree, "sqlite", lambda s, n: run(s, n), identical=True) is not None:
                return None
            if tie_at_extreme(gold_tree, "sqlite", run):
                return None
            try:
                answer: Any = run(answer_sql)
            except sqlite3.Error as exc:
                answer = exc
            return (gold, answer) if differ(gold, answer) else None
        finally:
            con.execute("ROLLBACK TO shrink")
            con.execute("RELEASE shrink")

    def still_tied(keep: Sequence[tuple[str, int]]) -> bool:
        """On the rows ``keep`` (foreign keys holding), the gold's LIMIT still cuts a tie."""
        con.execute("SAVEPOINT shrink")
        try:
            kept: dict[str, list[int]] = {t: [] for t in tables}
            for t, rid in keep:
                kept[t].append(rid)
            for t in tables:
                ids = ",".join(map(str, kept[t]))
                con.execute(f'DELETE FROM "{_esc(t)}"' + (f" WHERE rowid NOT IN ({ids})" if ids else ""))
            if _fk_violations(con) > broken:
                return False
            return tie_at_limit(gold_tree, "sqlite", lambda s, n: run(s, n), identical=True) is not None
        except sqlite3.Error:
            return False
        finally:
            con.execute("ROLLBACK TO shrink")
            con.execute("RELEASE shrink")

    whole = len(items)
    best = outcome(items)
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
        con.close()
        return None
    n = 2
    complete = True
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
    rows: list[dict] = []
    for t in tables:
        ids = [rid for tt, rid in items if tt == t]
        if not ids:
            continue
        cur = con.execute(f'SELECT * FROM "{_esc(t)}" WHERE rowid IN ({",".join(map(str, ids))})')
        rows.append({"table": t, "columns": [d[0] for d in cur.description], "rows": [list(r) for r in cur.fetchall()]})
    con.close()
    gold, answer = best
    return {
        "rows": rows,
        "row_count": len(items),
        "shrunk_from": whole,
        "complete": complete,
        "gold_columns": list(gold[0]),
        "gold_rows": [list(r) for r in gold[1][:20]],
        "answer_columns": None if isinstance(answer, Exception) else list(answer[0]),
        "answer_rows": None if isinstance(answer, Exception) else [list(r) for r in answer[1][:20]],
        "answer_error": str(answer) if isinstance(answer, Exception) else None,
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
