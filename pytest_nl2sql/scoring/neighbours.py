"""Neighbour databases: small seeded databases of a datasource's schema, for test-suite accuracy.

Execution accuracy on one database passes a wrong query that happens to give the right rows
on that data. A *neighbour* keeps the real database's schema -- its ``CREATE`` statements as
they are, so types, primary keys, NOT NULL, UNIQUE, CHECK and foreign keys hold -- and fills
every table with a few rows whose values come from the column's own values plus boundary and
perturbed ones: NULL (where allowed; in a foreign-key column only where the real data has
one), the smallest and largest value, a value one off, an
empty text, repeats (ties and duplicates), and now and then an empty table. An answer passes
the test suite only when it gives the gold's rows on the real database and on every
neighbour (``disagreement``).

Generation is seeded and reproducible (``random.Random`` per seed and neighbour; the draws are
``neighbourgen.fill``'s). A SQLite datasource's neighbours are files cached on disk as
``<cache>/<schema digest>-<seed>-<i>.sqlite``: the digest is of the schema and of the sampled
values, so a changed database gets new neighbours. A PostgreSQL datasource's are databases on
the scratch server that ``test_suite.scratch_url`` names (``pgneighbours``); other backends
have none, and ``Neighbourhood.why_not`` says so.

Distilled neighbours (Zhong et al. 2020 keep the generated databases that kill the most
mutants of the gold queries): ``distil`` and ``neighbours(..., kills=f, pool=P)`` build ``k * P`` candidates
and keep the ``k`` that together kill the most (``keep_best``, greedy); ``f(path)`` is the
set of mutants (any hashable ids) that the candidate at ``path`` tells apart from their gold.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import sqlite3
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from pytest_nl2sql.datasources.adapter import QueryError
from pytest_nl2sql.datasources.authorizer import query_authorizer
from pytest_nl2sql.scoring.neighbourgen import (
    GENERATOR_VERSION,
    SAMPLE_VALUES,
    ColumnSpec,
    TableSpec,
    digest,
    fill,
    fk_order,
    hide,
)
from pytest_nl2sql.scoring.neighbourgen import quote_ident as _q
from pytest_nl2sql.scoring.pgneighbours import NeighbourSetupError, PgNeighbour, PgSource

__all__ = [
    "QUERY_FAILED",
    "Neighbour",
    "Neighbourhood",
    "NeighboursUnavailable",
    "Source",
    "TableSpec",
    "build",
    "disagreement",
    "distil",
    "from_project",
    "keep_best",
    "neighbours",
    "read_schema",
    "run_query",
    "sqlite_file",
]

#: A column counts as unique in the real data only over at least this many values (in a handful
#: of rows, distinct names are chance, and repeats there find real GROUP BY-name mistakes).
UNIQUE_MIN_ROWS = 10
#: Real rows sampled per table, for the columns a neighbour draws together.
SAMPLE_ROWS = 100
#: How long one query may run on a SQLite neighbour.
QUERY_SECONDS = 5.0
#: The gold's result on a neighbour is kept for the next item (``Neighbourhood.gold_result``)
#: up to this many rows.
GOLD_CACHE_ROWS = 10_000


def read_schema(con: sqlite3.Connection) -> tuple[list[TableSpec], list[str]]:
    """The tables (in foreign-key order: parents first) and the other schema statements."""
    rows = con.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
    ).fetchall()
    tables: dict[str, TableSpec] = {}
    extra: list[str] = []
    for kind, name, sql in rows:
        if kind != "table":
            extra.append(sql)
            continue
        if sql.upper().startswith("CREATE VIRTUAL"):
            continue
        cols = []
        for _cid, cname, decl, notnull, _default, pk in con.execute(f"PRAGMA table_info({_q(name)})"):
            sample = tuple(
                r[0]
                for r in con.execute(
                    f"SELECT DISTINCT {_q(cname)} FROM {_q(name)} WHERE {_q(cname)} IS NOT NULL LIMIT {SAMPLE_VALUES}"
                )
            )
            has_null = con.execute(
                f"SELECT EXISTS (SELECT 1 FROM {_q(name)} WHERE {_q(cname)} IS NULL)"
            ).fetchone()[0]
            n_values, n_distinct = con.execute(
                f"SELECT COUNT({_q(cname)}), COUNT(DISTINCT {_q(cname)}) FROM {_q(name)}"
            ).fetchone()
            unique_real = n_values >= UNIQUE_MIN_ROWS and n_values == n_distinct
            cols.append(ColumnSpec(cname, decl or "", bool(notnull), pk, sample, bool(has_null), unique_real))
        foreign = tuple(
            (r[3], r[2], r[4] or "") for r in con.execute(f"PRAGMA foreign_key_list({_q(name)})")
        )
        unique = []
        for idx in con.execute(f"PRAGMA index_list({_q(name)})"):
            if idx[2]:  # unique
                unique.append(tuple(r[2] for r in con.execute(f"PRAGMA index_info({_q(idx[1])})")))
        samples = tuple(tuple(r) for r in con.execute(f"SELECT * FROM {_q(name)} LIMIT {SAMPLE_ROWS}"))
        covering = tuple(c for c, parent, pcol in foreign if _covers(con, name, c, parent, pcol))
        tables[name] = TableSpec(name, sql, tuple(cols), foreign, tuple(unique), samples, covering)
    return fk_order(tables), extra


def _covers(con: sqlite3.Connection, child: str, col: str, parent: str, pcol: str) -> bool:
    """Every row of the (non-empty) real parent table has a child through ``col``."""
    try:
        if not pcol:
            pk = [r[1] for r in con.execute(f"PRAGMA table_info({_q(parent)})") if r[5]]
            if len(pk) != 1:
                return False
            pcol = pk[0]
        row = con.execute(
            f"SELECT EXISTS (SELECT 1 FROM {_q(parent)}), EXISTS (SELECT 1 FROM {_q(parent)} AS p WHERE NOT EXISTS "
            f"(SELECT 1 FROM {_q(child)} AS c WHERE c.{_q(col)} = p.{_q(pcol)}))"
        ).fetchone()
    except sqlite3.Error:
        return False
    return bool(row[0]) and not row[1]


def _fill(con: sqlite3.Connection, tables: Sequence[TableSpec], rnd: random.Random) -> None:
    inserts = {
        t.name: f"INSERT OR IGNORE INTO {_q(t.name)} ({', '.join(_q(c.name) for c in t.columns)}) "
        f"VALUES ({', '.join('?' for _ in t.columns)})"
        for t in tables
    }

    def insert(t: TableSpec, row: list) -> bool:
        before = con.total_changes
        try:
            con.execute(inserts[t.name], row)
        except sqlite3.DatabaseError:  # a CHECK or a foreign key the row breaks: leave it out
            return False
        return con.total_changes > before

    fill(tables, rnd, insert)


def _build(path: Path, tables: Sequence[TableSpec], extra: Sequence[str], seed: int, index: int) -> None:
    rnd = random.Random(f"{seed}:{index}")
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        con = sqlite3.connect(tmp)
        try:
            con.execute("PRAGMA foreign_keys = ON")
            for t in tables:
                con.execute(t.sql)
            _fill(con, tables, rnd)
            for s in extra:
                with contextlib.suppress(sqlite3.DatabaseError):
                    con.execute(s)
            con.commit()
        finally:
            con.close()
        os.replace(tmp, path)  # workers building the same neighbour write the same bytes
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


def keep_best(candidates: Sequence[Path], kills: Callable[[Path], set], k: int) -> list[Path]:
    """The ``k`` candidates that together kill the most mutants: each pick adds the most not yet
    killed (ties: the earlier candidate); once nothing more is killed, the rest in order."""
    left = list(candidates)
    killed = {p: set(kills(p)) for p in left}
    chosen: list[Path] = []
    done: set = set()
    while left and len(chosen) < k:
        best = max(left, key=lambda p: (len(killed[p] - done), -left.index(p)))
        chosen.append(best)
        done |= killed[best]
        left.remove(best)
    return chosen


def neighbours(
    database: Path, k: int, seed: int, cache_dir: Path, *, kills: Callable[[Path], set] | None = None, pool: int = 4,
    hidden: Callable[[str, str], bool] | None = None,
) -> list[Path]:
    """``k`` neighbour databases of the SQLite file ``database``, built once and cached. With
    ``kills``, the ``k`` of ``k * pool`` candidates that kill the most mutants (``keep_best``);
    columns ``hidden(table, column)`` names get synthetic values (``neighbourgen.hide``)."""
    if kills is not None and pool > 1:
        return keep_best(neighbours(database, k * pool, seed, cache_dir, hidden=hidden), kills, k)
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        tables, extra = read_schema(con)
    finally:
        con.close()
    tables = hide(tables, hidden)
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = digest(tables, extra)
    out = []
    for i in range(k):
        path = cache_dir / f"{key}-{seed}-{i}.sqlite"
        if not path.exists():
            _build(path, tables, extra, seed, i)
        out.append(path)
    return out


@contextlib.contextmanager
def _connect(path: Path, datasource: str = "", policy: Any = None) -> Iterator[sqlite3.Connection]:
    """A read-only connection under the real database's authorizer: reads and allow-listed
    functions only, and with ``policy`` only the role's columns."""
    if not path.is_file():  # sqlite3 would create it: a neighbour that is not there is an error
        raise sqlite3.OperationalError(f"unable to open database file {path}")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    try:
        con.set_authorizer(query_authorizer(datasource, policy, {}, {}))
        yield con
    finally:
        con.close()


#: A neighbour: a SQLite file, or a database on a PostgreSQL scratch server (``pgneighbours``).
Neighbour = Path | PgNeighbour
#: What ``run_query`` raises when a query fails on a neighbour.
QUERY_FAILED = (sqlite3.Error, QueryError)


def run_query(
    neighbour: Neighbour, sql: str, limit: int = 100_000, *, datasource: str = "", policy: Any = None
) -> tuple[tuple[str, ...], list[tuple]]:
    """Run one SELECT on a neighbour (read-only, bounded in time and rows); raises one of
    ``QUERY_FAILED`` when it fails. SQLite: the real database's authorizer (reads and
    allow-listed functions; with ``policy``, the role's columns only); PostgreSQL: the statement
    guard, a READ ONLY transaction, as the neighbour's reader role (``PgNeighbour.run``)."""
    if isinstance(neighbour, PgNeighbour):
        return neighbour.run(sql, limit)
    with _connect(neighbour, datasource, policy) as con:
        deadline = time.monotonic() + QUERY_SECONDS
        con.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        cur = con.execute(sql)
        cols = tuple(d[0] for d in cur.description or ())
        rows = cur.fetchmany(limit + 1)
        if len(rows) > limit:
            raise sqlite3.OperationalError(f"more than {limit} rows")
        return cols, rows


class NeighboursUnavailable(Exception):
    """A datasource's neighbours could not be built; the message says why."""


#: Where a datasource's neighbours come from: its SQLite file, or a PostgreSQL source.
Source = Path | PgSource


def build(
    source: Source, k: int, seed: int, cache_dir: Path, hidden: Callable[[str, str], bool] | None = None
) -> list[Neighbour]:
    """``k`` neighbours of ``source`` (SQLite: files in ``cache_dir``; PostgreSQL: databases
    on its scratch server), built once and then found again; ``hidden`` columns synthetic."""
    if isinstance(source, PgSource):
        return list(source.build(k, seed, hidden=hidden))
    return list(neighbours(source, k, seed, cache_dir, hidden=hidden))


@attrs.define
class Neighbourhood:
    """The neighbours of each datasource, built on first use. ``resolve`` maps a datasource
    name to its ``Source``, or None when it has none (``why`` then says why, for the record)."""

    k: int
    resolve: Callable[[str], Source | None]
    cache_dir: Path
    seed: int = 0
    #: datasource -> the gold SQL of its cases: when given, each datasource keeps the ``k`` of
    #: ``k * pool`` candidates that kill the most mutants of those queries (``distil``)
    golds: Callable[[str], Sequence[str]] | None = None
    pool: int = 3
    why: Callable[[str], str] | None = None
    #: datasource -> ``hidden(table, column)``: the columns some role may not read (synthetic)
    hidden: Callable[[str], Callable[[str, str], bool]] | None = None
    #: ``admit(datasource, role, sql)`` -> (why not, the role's policy): the guard and validator
    admit: Callable[[str, str, str], tuple[str | None, Any]] | None = None
    _built: dict[str, list[Neighbour] | None] = attrs.field(factory=dict)
    _failed: dict[str, str] = attrs.field(factory=dict)
    _gold: dict[tuple[str, str], tuple | None] = attrs.field(factory=dict)
    build_seconds: dict[str, float] = attrs.field(factory=dict)
    _lock: threading.Lock = attrs.field(factory=threading.Lock)

    def of(self, datasource: str) -> list[Neighbour] | None:
        """The neighbours of ``datasource`` (None: it has none). A build that failed raises
        ``NeighboursUnavailable`` with its reason, once per item, without trying again."""
        with self._lock:  # items scored on several threads build a datasource's neighbours once
            if datasource in self._failed:
                raise NeighboursUnavailable(self._failed[datasource])
            if datasource not in self._built:
                source = self.resolve(datasource)
                if source is None:
                    self._built[datasource] = None
                    return None
                start = time.perf_counter()
                golds = list(self.golds(datasource)) if self.golds is not None else []
                hidden = self.hidden(datasource) if self.hidden is not None else None
                try:
                    if golds and self.pool > 1:
                        built = distil(source, self.k, self.seed, self.cache_dir, golds, pool=self.pool, hidden=hidden)
                    else:
                        built = build(source, self.k, self.seed, self.cache_dir, hidden)
                except Exception as exc:  # noqa: BLE001 -- said once per item, never retried
                    reason = str(exc) if isinstance(exc, NeighbourSetupError) else f"{type(exc).__name__}: {exc}"
                    self._failed[datasource] = f"the neighbours of {datasource!r} could not be built: {reason}"
                    raise NeighboursUnavailable(self._failed[datasource]) from exc
                self._built[datasource] = built
                self.build_seconds[datasource] = time.perf_counter() - start
            return self._built[datasource]

    def gold_result(self, neighbour: Neighbour, sql: str, datasource: str = "") -> tuple | None:
        """The columns and rows of the gold ``sql`` on ``neighbour`` (None: it fails there), run
        once: every role of a case, and every item of a paraphrase group, asks for the same. A
        neighbour that cannot be opened raises ``NeighboursUnavailable``, and ``datasource`` is
        then unavailable for every later item (said once, never "checked, passed")."""
        key = (str(neighbour), sql)
        if key not in self._gold:
            try:
                result: tuple | None = run_query(neighbour, sql, datasource=datasource)
            except QUERY_FAILED as exc:
                if _unopenable(exc):
                    reason = f"the neighbour database {_label(neighbour)} of {datasource!r} cannot be opened: {exc}"
                    with self._lock:
                        self._failed[datasource] = reason
                    raise NeighboursUnavailable(reason) from None
                result = None
            if result is not None and len(result[1]) > GOLD_CACHE_ROWS:
                return result  # a large one is not kept
            self._gold[key] = result
        return self._gold[key]

    def real(self, datasource: str) -> Callable[[str], tuple] | None:
        """Runs a query on the datasource's real SQLite file (read-only, results kept), for the
        presuppositions a neighbour may break (``presuppose``); None for other backends."""
        source = self.resolve(datasource)
        if not isinstance(source, Path):
            return None

        def run(sql: str) -> tuple:
            key = (str(source), sql)
            if key not in self._gold:
                self._gold[key] = run_query(source, sql, datasource=datasource)
            return self._gold[key]

        return run

    def why_not(self, datasource: str) -> str:
        """Why ``datasource`` has no neighbours, in words for the record."""
        if self.why is not None:
            return self.why(datasource)
        return f"datasource {datasource!r} has no neighbour databases"


def _rows_json(rows: Sequence[tuple], n: int = 10) -> list[list]:
    from pytest_nl2sql.suitefile.values import json_value

    return [[json_value(v) for v in r] for r in rows[:n]]


def disagreement(
    hood: Neighbourhood, datasource: str, gold_sql: str, answer_sql: str, rule: Any, role: str | None = None,
    question: str = "",
) -> dict | None:
    """The first neighbour on which the answer's SQL and the gold SQL give different results
    (with both results and a shrunk ``counterexample``), or None when they agree on every
    neighbour that judges. With ``role``, the answer's SQL must first pass the guard and the
    validator for it (``Neighbourhood.admit``) and runs under the role's columns. A neighbour on
    which the gold SQL itself fails, or on which the gold's own ``ORDER BY ... LIMIT`` cuts
    inside a tie, does not judge (``ambiguous``); one on which only the answer's SQL fails
    disagrees. A difference that comes from the gold's fragility (``counterexample.gold_fragility``)
    is kept as a ``gold_finding`` and returned only when no neighbour gives a plain disagreement.
    ``question`` (the case's) lets a gold that leaves out a value the question names, or a reading
    the question leaves open, be a gold finding (``_gold_side``); a neighbour that breaks a
    presupposition the question makes does not judge (``presuppose.presupposition``, listed under
    ``presupposed``)."""
    from pytest_nl2sql.scoring.matching import match_rows

    found = hood.of(datasource)
    if not found:
        return None
    policy = None
    if role is not None and hood.admit is not None:
        why, policy = hood.admit(datasource, role, answer_sql)
        if why is not None:
            return {"neighbour": 0, "database": "", "reason": f"the answer's SQL is not run on the neighbours: {why}",
                    "gold_rows": [], "answer_rows": None}
    trees: list[Any] = []  # parsed (sqlglot imported) once a neighbour disagrees: most items agree
    ambiguous: list[int] = []
    presupposed: list[str] = []
    finding: dict | None = None
    for i, neighbour in enumerate(found):
        gold = hood.gold_result(neighbour, gold_sql, datasource)
        if gold is None:
            continue
        gcols, grows = gold
        diff = _differ(neighbour, gold, answer_sql, rule, datasource, policy)
        if diff is None:
            continue
        from pytest_nl2sql.scoring.presuppose import presupposition
        from pytest_nl2sql.scoring.ties import tie_at_limit
        trees = trees or [_gold_tree(gold_sql), _gold_tree(answer_sql)]
        tree, answer_tree = trees
        dialect = "postgres" if isinstance(neighbour, PgNeighbour) else "sqlite"
        answer = diff.pop("_result")
        settled = None
        if tie_at_limit(tree, dialect, lambda sql, n, nb=neighbour: run_query(nb, sql, n or 100_000), identical=True) is not None:
            # the tie leaves the gold open here; the same rows less one may settle it and still judge
            settled = _counterexample(neighbour, gold_sql, answer_sql, rule, settle=True)
            if settled is None or settled["shrunk_from"] - settled["row_count"] < 1:
                ambiguous.append(i)
                continue
        why_not = presupposition(
            tree, answer_tree, gold, answer, lambda g, a: match_rows(g[0], g[1], a[0], a[1], rule).matched, dialect,
            here=lambda sql, nb=neighbour: run_query(nb, sql, datasource=datasource), real=hood.real(datasource),
        )
        if why_not is not None:
            ambiguous.append(i)
            presupposed.append(f"neighbour {i + 1}: {why_not}")
            continue
        record = {"neighbour": i, "database": str(neighbour), "seed": hood.seed, **diff,
                  "gold_columns": list(gcols), "gold_rows": _rows_json(grows)}
        if settled is not None:  # judged on the rows that settle the tie: both results there
            record.update(reason=f"the gold's LIMIT cuts a tie there; on {settled['row_count']} of its rows, which settle it, "
                                 "the results differ",
                          gold_rows=settled["gold_rows"], answer_columns=settled["answer_columns"],
                          answer_rows=settled["answer_rows"])
        record["counterexample"] = settled or _counterexample(neighbour, gold_sql, answer_sql, rule)
        why = _gold_side(hood, datasource, neighbour, gold_sql, answer_sql, question, gold, record["counterexample"],
                         lambda g, a: match_rows(g[0], g[1], a[0], a[1], rule).matched, dialect)
        if why is None:
            if ambiguous:
                record["ambiguous"] = ambiguous
            if presupposed:
                record["presupposed"] = presupposed
            return record
        if finding is None:
            finding = {**record, "gold_finding": why}
    if finding is not None and ambiguous:
        finding["ambiguous"] = ambiguous
    if finding is not None and presupposed:
        finding["presupposed"] = presupposed
    return finding


def _gold_side(
    hood: Neighbourhood, datasource: str, neighbour: Neighbour, gold_sql: str, answer_sql: str, question: str,
    gold: tuple, counterexample: dict | None, same: Callable[[tuple, tuple], bool], dialect: str,
) -> str | None:
    """Why the difference on ``neighbour`` is the gold's to read (a gold finding), or None: the
    gold's fragility, a value the question names that the gold leaves out, or a reading the
    question leaves open (``joinpath``)."""
    from pytest_nl2sql.scoring.counterexample import gold_fragility
    from pytest_nl2sql.scoring.joinpath import (
        distinct_asked,
        fk_choice,
        fk_pairs,
        one_row_or_two,
        value_column_choice,
    )
    from pytest_nl2sql.scoring.presuppose import question_value_left_out

    tree, answer_tree = _gold_tree(gold_sql), _gold_tree(answer_sql)
    real = hood.real(datasource)

    def here(sql: str) -> tuple:
        return run_query(neighbour, sql, datasource=datasource)

    return (
        gold_fragility(gold_sql, answer_sql, counterexample)
        or question_value_left_out(question, tree, answer_tree, real, here, gold, same, dialect)
        or fk_choice(question, tree, answer_tree, fk_pairs(neighbour), here, gold,
                     _real_result(hood, datasource, gold_sql), same, dialect)
        or value_column_choice(question, tree, answer_tree, real, _real_result(hood, datasource, gold_sql), dialect)
        or one_row_or_two(question, answer_tree, here, gold, same, dialect)
        or distinct_asked(question, tree, answer_tree, here, gold, same, dialect)
    )


def _real_result(hood: Neighbourhood, datasource: str, sql: str) -> tuple | None:
    """``sql``'s result on the datasource's real database (kept), or None."""
    real = hood.real(datasource)
    if real is None:
        return None
    try:
        return real(sql)
    except Exception:  # noqa: BLE001 -- not told: nothing follows from it
        return None


def _gold_tree(sql: str) -> Any:
    import sqlglot

    try:
        return sqlglot.parse_one(sql, read="sqlite")
    except Exception:
        return None


def _differ(
    neighbour: Neighbour, gold: tuple, answer_sql: str, rule: Any, datasource: str = "", policy: Any = None
) -> dict | None:
    """How the answer's result on ``neighbour`` differs from the gold's, or None."""
    from pytest_nl2sql.scoring.matching import match_rows

    gcols, grows = gold
    try:
        pcols, prows = run_query(neighbour, answer_sql, datasource=datasource, policy=policy)
    except QUERY_FAILED as exc:
        return {"reason": f"the answer's SQL fails there: {exc}", "answer_rows": None, "_result": None}
    result = match_rows(gcols, grows, pcols, prows, rule)
    if result.matched:
        return None
    return {"reason": result.reason, "answer_columns": list(pcols), "answer_rows": _rows_json(prows),
            "_result": (pcols, prows)}


def _counterexample(neighbour: Neighbour, gold_sql: str, answer_sql: str, rule: Any, *, settle: bool = False) -> dict | None:
    """The neighbour's rows shrunk to the fewest on which gold and answer still differ (a SQLite
    file copied into memory; a PostgreSQL neighbour in a transaction that is rolled back)."""
    from pytest_nl2sql.scoring.counterexample import shrink
    from pytest_nl2sql.scoring.matching import match_rows
    from pytest_nl2sql.scoring.presuppose import presupposition

    dialect = "postgres" if isinstance(neighbour, PgNeighbour) else "sqlite"
    gold_tree, answer_tree = _gold_tree(gold_sql), _gold_tree(answer_sql)

    def same(g: Any, a: Any) -> bool:
        return match_rows(g[0], g[1], a[0], a[1], rule).matched

    def differ(gold: Any, answer: Any) -> bool:
        if isinstance(answer, Exception):
            return True
        # rows on which the question's presupposition fails are no counterexample either
        return not same(gold, answer) and presupposition(gold_tree, answer_tree, gold, answer, same, dialect) is None

    try:
        found = shrink(neighbour, gold_sql, answer_sql, differ, settle=settle)
    except Exception:  # a counterexample is a courtesy: never the reason an item breaks
        return None
    if found is None:
        return None
    for t in found["rows"]:
        t["rows"] = _rows_json([tuple(r) for r in t["rows"]], len(t["rows"]))
    for key in ("gold_rows", "answer_rows"):
        if found[key] is not None:
            found[key] = _rows_json([tuple(r) for r in found[key]], 20)
    return found


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL, else None (read without SQLAlchemy: config.urls)."""
    from pytest_nl2sql.config.urls import read_url

    try:
        parsed = read_url(url)
    except Exception:  # noqa: BLE001 -- not a URL we can read: no neighbours
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    path = Path(parsed.database)
    return path if path.is_file() else None


def _label(neighbour: Neighbour) -> str:
    return neighbour.dbname if isinstance(neighbour, PgNeighbour) else neighbour.name


def _unopenable(exc: BaseException) -> bool:
    """Whether a neighbour query failed because the neighbour itself cannot be opened."""
    if isinstance(exc, QueryError):
        return exc.kind == "unreachable"
    return isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc)


def distil(
    source: Source, k: int, seed: int, cache_dir: Path, golds: Sequence[str], *, pool: int = 3, per_query: int = 8,
    hidden: Callable[[str, str], bool] | None = None,
) -> list[Neighbour]:
    """The ``k`` of ``k * pool`` neighbours of ``source`` that together kill the most mutants
    of the ``golds`` (up to ``per_query`` each), as the test-suite paper distils its databases.
    The choice is remembered in ``cache_dir``, keyed on the schema digest, the seed, ``k``,
    ``pool`` and the gold queries."""
    import json

    dialect = source.dialect if isinstance(source, PgSource) else "sqlite"
    candidates = build(source, k * pool, seed, cache_dir, hidden)
    by_label = {_label(c): c for c in candidates}
    h = hashlib.sha256(json.dumps([GENERATOR_VERSION, _label(candidates[0]) if candidates else "", k, pool, per_query, sorted(golds)]).encode())
    memo = cache_dir / f"distilled-{h.hexdigest()[:16]}.json"
    try:
        names = json.loads(memo.read_text())
        chosen = [by_label[n] for n in names]
        if len(chosen) == min(k, len(candidates)):
            return chosen
    except (OSError, ValueError, TypeError, KeyError):
        pass
    # kills counted (sqlglot) on the small candidates alone, not the real database: the k that kill most are kept
    from pytest_nl2sql.scoring.mutants import kill_rates, mutants

    found_by_gold = []
    for gold in golds:
        try:
            found_by_gold.append(mutants(gold, dialect, limit=per_query))
        except Exception:  # noqa: BLE001 -- a gold that does not parse has no mutants
            found_by_gold.append([])
    per: dict[str, set] = {_label(c): set() for c in candidates}
    for c in candidates:
        runner = lambda sql, c=c: run_query(c, sql)  # noqa: E731
        for g, (gold, found) in enumerate(zip(golds, found_by_gold, strict=True)):
            if not found:
                continue
            try:
                report = kill_rates(gold, found, runner, ())
            except Exception:  # noqa: BLE001 -- the gold fails on this candidate: it kills nothing
                continue
            per[_label(c)] |= {(g, i) for i in report.killed_real}
    chosen = keep_best(candidates, lambda c: per[_label(c)], k)
    with contextlib.suppress(OSError):
        cache_dir.mkdir(parents=True, exist_ok=True)
        memo.write_text(json.dumps([_label(p) for p in chosen]))
    return chosen


def from_project(
    project: Any, k: int, cache_dir: Path, seed: int = 0, golds: Callable[[str], Sequence[str]] | None = None
) -> Neighbourhood:
    """The neighbourhood of a loaded nl2sql.yaml's datasources: SQLite files, and PostgreSQL
    databases when ``test_suite.scratch_url`` names a scratch server; with ``golds``
    (datasource -> its cases' gold SQL), distilled neighbours (``distil``)."""
    configs = {name.lower(): cfg for name, cfg in (getattr(project, "datasources", None) or {}).items()}
    scratch = getattr(project, "test_suite", None)

    def backend(cfg: Any) -> str:
        from pytest_nl2sql.config.urls import read_url

        try:
            return read_url(cfg.url).get_backend_name()
        except Exception:  # noqa: BLE001 -- not a URL: no backend
            return "?"

    def resolve(name: str) -> Source | None:
        cfg = configs.get(name.lower())
        if cfg is None:
            return None
        if backend(cfg) == "postgresql":
            if scratch is None or not scratch.scratch_url:
                return None
            return PgSource(cfg.name, cfg.url, scratch.scratch_url, scratch.allow_privileged_login,
                            cfg.allow_privileged_login, cfg.timeout_s)
        return sqlite_file(cfg.url)

    def why(name: str) -> str:
        cfg = configs.get(name.lower())
        if cfg is None:
            return f"no datasource {name!r} in nl2sql.yaml"
        kind = backend(cfg)
        if kind == "postgresql" and scratch is not None and scratch.unset_env:
            return (f"datasource {name!r} is on PostgreSQL and test_suite.scratch_url names the environment "
                    f"variable {scratch.unset_env}, which is not set")
        if kind == "postgresql":
            return (f"datasource {name!r} is on PostgreSQL and nl2sql.yaml names no scratch server to "
                    "build its neighbours on (set test_suite.scratch_url: docs/scoring.md)")
        if kind == "sqlite":
            return f"datasource {name!r} has no SQLite file to build neighbours from"
        return f"datasource {name!r} is on {kind}: neighbour databases are built for SQLite and PostgreSQL only"

    from pytest_nl2sql.scoring.neighbourrules import admission, hidden_columns

    # another seed draws other neighbours: to read flags beyond the default seed's (docs/benchmarks.md)
    seed = int(os.environ.get("PYTEST_NL2SQL_NEIGHBOUR_SEED") or seed)
    return Neighbourhood(
        k=k, resolve=resolve, cache_dir=cache_dir, seed=seed, golds=golds, why=why,
        hidden=lambda name: hidden_columns(project, name), admit=admission(project),
    )
