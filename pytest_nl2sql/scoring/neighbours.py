"""Neighbour databases: small seeded databases of a datasource's schema, for test-suite accuracy.

Execution accuracy on one database passes a wrong query that happens to give the right rows
on that data. A *neighbour* keeps the real database's schema -- its ``CREATE`` statements as
they are, so types, primary keys, NOT NULL, UNIQUE, CHECK and foreign keys hold -- and fills
every table with a few rows whose values come from the column's own values plus boundary and
perturbed ones: NULL (where allowed; in a foreign-key column only where the real data has
one), the smallest and largest value, a value one off, an
empty text, repeats (ties and duplicates), and now and then an empty table. An answer passes
the test suite only when it gives the gold's rows on the real database and on every
neighbour (``TestSuite.check``).

Generation is seeded and reproducible (``random.Random`` per seed and neighbour), and each
neighbour is cached on disk as ``<cache>/<schema digest>-<seed>-<i>.sqlite``: the digest is
of the schema and of the sampled values, so a changed database gets new neighbours.
SQLite only for now (PostgreSQL: not yet).

Distilled neighbours (Zhong et al. 2020 keep the generated databases that kill the most
mutants of the gold queries): ``neighbours(..., kills=f, pool=P)`` builds ``k * P`` candidates
and keeps the ``k`` that together kill the most (``keep_best``, greedy); ``f(path)`` is the
set of mutants (any hashable ids) that the candidate at ``path`` tells apart from their gold.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

__all__ = [
    "Neighbourhood",
    "TableSpec",
    "disagreement",
    "distil",
    "from_project",
    "keep_best",
    "neighbours",
    "read_schema",
    "run_query",
    "sqlite_file",
]

#: Distinct values sampled per column of the real database.
SAMPLE_VALUES = 40
#: Rows per table of a neighbour (at most).
MAX_ROWS = 24
#: The share of neighbours' tables left empty.
EMPTY_TABLE_RATE = 0.08
#: How long one query may run on a neighbour.
QUERY_SECONDS = 5.0
#: Bumped whenever generation changes, so cached neighbours of an older generator are not reused.
GENERATOR_VERSION = 2


@attrs.frozen
class ColumnSpec:
    name: str
    decl: str
    notnull: bool
    pk: int  # position in the primary key, 0 if not part of it
    values: tuple  # a sample of the column's distinct values in the real database
    has_null: bool = True  # whether the real column holds a NULL


@attrs.frozen
class TableSpec:
    name: str
    sql: str
    columns: tuple[ColumnSpec, ...]
    # (column, parent table, parent column) for each foreign key column
    foreign: tuple[tuple[str, str, str], ...]
    unique: tuple[tuple[str, ...], ...]


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


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
            cols.append(ColumnSpec(cname, decl or "", bool(notnull), pk, sample, bool(has_null)))
        foreign = tuple(
            (r[3], r[2], r[4] or "") for r in con.execute(f"PRAGMA foreign_key_list({_q(name)})")
        )
        unique = []
        for idx in con.execute(f"PRAGMA index_list({_q(name)})"):
            if idx[2]:  # unique
                unique.append(tuple(r[2] for r in con.execute(f"PRAGMA index_info({_q(idx[1])})")))
        tables[name] = TableSpec(name, sql, tuple(cols), foreign, tuple(unique))
    return _fk_order(tables), extra


def _fk_order(tables: dict[str, TableSpec]) -> list[TableSpec]:
    done: list[TableSpec] = []
    seen: set[str] = set()

    def visit(name: str, path: frozenset[str]) -> None:
        if name in seen or name not in tables or name in path:
            return
        for _c, parent, _pc in tables[name].foreign:
            if parent.lower() != name.lower():
                visit(_canon(tables, parent), path | {name})
        seen.add(name)
        done.append(tables[name])

    for name in tables:
        visit(name, frozenset())
    return done


def _canon(tables: dict[str, TableSpec], name: str) -> str:
    for t in tables:
        if t.lower() == name.lower():
            return t
    return name


def digest(tables: Sequence[TableSpec], extra: Sequence[str]) -> str:
    h = hashlib.sha256(f"generator {GENERATOR_VERSION}".encode())
    for t in tables:
        h.update(t.sql.encode())
        for c in t.columns:
            h.update(repr((c.name, c.values, c.has_null)).encode())
    for s in extra:
        h.update(s.encode())
    return h.hexdigest()[:16]


def _affinity(decl: str) -> str:
    d = decl.upper()
    if "INT" in d:
        return "int"
    if any(w in d for w in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if any(w in d for w in ("REAL", "FLOA", "DOUB")):
        return "real"
    if any(w in d for w in ("NUM", "DEC")):
        return "real"
    return "any"


def _perturbed(col: ColumnSpec, rnd: random.Random) -> list[Any]:
    """Boundary and perturbed values for one column, beside its own."""
    vals = list(col.values)
    out: list[Any] = []
    nums = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
    texts = [v for v in vals if isinstance(v, str)]
    kind = _affinity(col.decl)
    if nums:
        lo, hi = min(nums), max(nums)
        out += [lo, hi]
        if all(isinstance(v, int) for v in nums):
            out += [lo - 1, hi + 1, 0, rnd.choice(nums) + 1]
        else:
            out += [lo - 0.5, hi + 0.5, 0.0, round(rnd.choice(nums) * 1.01, 2)]
    elif kind == "int":
        out += [0, 1, -1, 2]
    elif kind == "real":
        out += [0.0, 1.5, -2.25]
    if texts:
        s = rnd.choice(texts)
        out += [min(texts), max(texts), "", s.upper() if s.upper() != s else s.lower(), s + " "]
    elif kind == "text":
        out += ["", "a", "Z"]
    return out


def _pool(col: ColumnSpec, rnd: random.Random) -> list[Any]:
    pool = list(col.values) or []
    pool += _perturbed(col, rnd)
    if not pool:
        pool = [0, 1, "x"]
    return pool


def _fill(con: sqlite3.Connection, tables: Sequence[TableSpec], rnd: random.Random) -> None:
    keys: dict[tuple[str, str], list[Any]] = {}  # (table, column) -> values written, for children
    for t in tables:
        n = 0 if rnd.random() < EMPTY_TABLE_RATE else rnd.randint(1, MAX_ROWS)
        fk = {c.lower(): (p, pc) for c, p, pc in t.foreign}
        pools = {c.name: _pool(c, rnd) for c in t.columns}
        pk_cols = [c for c in t.columns if c.pk]
        names = ", ".join(_q(c.name) for c in t.columns)
        marks = ", ".join("?" for _ in t.columns)
        insert = f"INSERT OR IGNORE INTO {_q(t.name)} ({names}) VALUES ({marks})"
        written: list[tuple] = []
        tries = 0
        while len(written) < n and tries < n * 4:
            tries += 1
            row = []
            for c in t.columns:
                ref = fk.get(c.name.lower())
                if ref is not None:
                    parent, pcol = ref
                    parents = keys.get((parent.lower(), pcol.lower())) or keys.get((parent.lower(), "")) or []
                    # a NULL key only where the real data has one: a schema that merely allows it
                    # (as most of Spider's do) would make orphan rows no real query meets
                    nullable = not c.notnull and c.has_null
                    if parents and (not nullable or rnd.random() > 0.1):
                        row.append(rnd.choice(parents))
                    elif nullable or not parents:
                        row.append(None)
                    continue
                if not c.notnull and not c.pk and rnd.random() < 0.12:
                    row.append(None)
                elif len(pk_cols) == 1 and c.pk and _affinity(c.decl) == "int":
                    base = [v for v in pools[c.name] if isinstance(v, int)] or [1]
                    row.append(rnd.choice(base) if rnd.random() < 0.7 else rnd.randint(1, 10_000))
                elif written and rnd.random() < 0.15:  # a repeat: ties and duplicates
                    row.append(rnd.choice(written)[len(row)])
                else:
                    row.append(rnd.choice(pools[c.name]))
            before = con.total_changes
            try:
                con.execute(insert, row)
            except sqlite3.DatabaseError:  # a CHECK or a foreign key the row breaks: leave it out
                continue
            if con.total_changes > before:
                written.append(tuple(row))
        for i, c in enumerate(t.columns):
            vals = [r[i] for r in written if r[i] is not None]
            keys[(t.name.lower(), c.name.lower())] = vals
            if c.pk and len(pk_cols) == 1:
                keys[(t.name.lower(), "")] = vals  # a foreign key naming no column means the primary key


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
    database: Path, k: int, seed: int, cache_dir: Path, *, kills: Callable[[Path], set] | None = None, pool: int = 4
) -> list[Path]:
    """``k`` neighbour databases of the SQLite file ``database``, built once and cached. With
    ``kills``, the ``k`` of ``k * pool`` candidates that kill the most mutants (``keep_best``)."""
    if kills is not None and pool > 1:
        return keep_best(neighbours(database, k * pool, seed, cache_dir), kills, k)
    con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        tables, extra = read_schema(con)
    finally:
        con.close()
    cache_dir.mkdir(parents=True, exist_ok=True)
    key = digest(tables, extra)
    out = []
    for i in range(k):
        path = cache_dir / f"{key}-{seed}-{i}.sqlite"
        if not path.exists():
            _build(path, tables, extra, seed, i)
        out.append(path)
    return out


def _read_only(action: int, *_args: Any) -> int:
    if action in (sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE):
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


@contextlib.contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    try:
        con.set_authorizer(_read_only)
        yield con
    finally:
        con.close()


def run_query(path: Path, sql: str, limit: int = 100_000) -> tuple[tuple[str, ...], list[tuple]]:
    """Run one SELECT on a neighbour (read-only, no writes or ATTACH, bounded in time and rows)."""
    with _connect(path) as con:
        deadline = time.monotonic() + QUERY_SECONDS
        con.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        cur = con.execute(sql)
        cols = tuple(d[0] for d in cur.description or ())
        rows = cur.fetchmany(limit + 1)
        if len(rows) > limit:
            raise sqlite3.OperationalError(f"more than {limit} rows")
        return cols, rows


@attrs.define
class Neighbourhood:
    """The neighbours of each datasource, built on first use (``resolve`` maps a datasource
    name to its SQLite file, or None when it has none)."""

    k: int
    resolve: Callable[[str], Path | None]
    cache_dir: Path
    seed: int = 0
    #: datasource -> the gold SQL of its cases: when given, each datasource keeps the ``k`` of
    #: ``k * pool`` candidates that kill the most mutants of those queries (``distil``)
    golds: Callable[[str], Sequence[str]] | None = None
    pool: int = 3
    _built: dict[str, list[Path] | None] = attrs.field(factory=dict)
    build_seconds: dict[str, float] = attrs.field(factory=dict)

    def of(self, datasource: str) -> list[Path] | None:
        if datasource not in self._built:
            db = self.resolve(datasource)
            if db is None:
                self._built[datasource] = None
            else:
                start = time.perf_counter()
                golds = list(self.golds(datasource)) if self.golds is not None else []
                if golds and self.pool > 1:
                    self._built[datasource] = distil(db, self.k, self.seed, self.cache_dir, golds, pool=self.pool)
                else:
                    self._built[datasource] = neighbours(db, self.k, self.seed, self.cache_dir)
                self.build_seconds[datasource] = time.perf_counter() - start
        return self._built[datasource]


def _rows_json(rows: Sequence[tuple], n: int = 10) -> list[list]:
    from pytest_nl2sql.suitefile.values import normalize_row

    return [list(normalize_row(r)) for r in rows[:n]]


def disagreement(hood: Neighbourhood, datasource: str, gold_sql: str, answer_sql: str, rule: Any) -> dict | None:
    """The first neighbour on which the answer's SQL and the gold SQL give different results
    (with both results), or None when they agree on every neighbour. A neighbour on which the
    gold SQL itself fails is passed over; one on which only the answer's SQL fails disagrees."""
    from pytest_nl2sql.scoring.matching import match_rows

    paths = hood.of(datasource)
    if not paths:
        return None
    for i, path in enumerate(paths):
        try:
            gcols, grows = run_query(path, gold_sql)
        except sqlite3.Error:
            continue
        try:
            pcols, prows = run_query(path, answer_sql)
        except sqlite3.Error as exc:
            return {"neighbour": i, "database": str(path), "reason": f"the answer's SQL fails there: {exc}",
                    "gold_rows": _rows_json(grows), "answer_rows": None}
        result = match_rows(gcols, grows, pcols, prows, rule)
        if not result.matched:
            return {"neighbour": i, "database": str(path), "reason": result.reason,
                    "gold_columns": list(gcols), "gold_rows": _rows_json(grows),
                    "answer_columns": list(pcols), "answer_rows": _rows_json(prows)}
    return None


def sqlite_file(url: str) -> Path | None:
    """The database file of a SQLite URL, else None (neighbours are built for SQLite only)."""
    from sqlalchemy.engine import make_url

    try:
        parsed = make_url(url)
    except Exception:  # noqa: BLE001 -- not a URL we can read: no neighbours
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    path = Path(parsed.database)
    return path if path.is_file() else None


def distil(
    database: Path, k: int, seed: int, cache_dir: Path, golds: Sequence[str], *, pool: int = 3, per_query: int = 8
) -> list[Path]:
    """The ``k`` of ``k * pool`` neighbours of ``database`` that together kill the most mutants
    of the ``golds`` (up to ``per_query`` each), as the test-suite paper distils its databases. The choice is remembered in ``cache_dir``, keyed on
    the schema digest, the seed, ``k``, ``pool`` and the gold queries."""
    import json

    from pytest_nl2sql.scoring.mutants import kill_rates, mutants

    candidates = neighbours(database, k * pool, seed, cache_dir)
    h = hashlib.sha256(json.dumps([GENERATOR_VERSION, candidates[0].name if candidates else "", k, pool, per_query, sorted(golds)]).encode())
    memo = cache_dir / f"distilled-{h.hexdigest()[:16]}.json"
    try:
        names = json.loads(memo.read_text())
        chosen = [cache_dir / n for n in names]
        if len(chosen) == min(k, len(candidates)) and all(p.is_file() for p in chosen):
            return chosen
    except (OSError, ValueError, TypeError):
        pass
    # kills are counted on the small candidates alone (the real database, often far larger,
    # is not queried): the k that together tell the most mutants from their gold are kept
    found_by_gold = []
    for gold in golds:
        try:
            found_by_gold.append(mutants(gold, "sqlite", limit=per_query))
        except Exception:  # noqa: BLE001 -- a gold that does not parse has no mutants
            found_by_gold.append([])
    per: dict[Path, set] = {c: set() for c in candidates}
    for c in candidates:
        runner = lambda sql, c=c: run_query(c, sql)  # noqa: E731
        for g, (gold, found) in enumerate(zip(golds, found_by_gold, strict=True)):
            if not found:
                continue
            try:
                report = kill_rates(gold, found, runner, ())
            except Exception:  # noqa: BLE001 -- the gold fails on this candidate: it kills nothing
                continue
            per[c] |= {(g, i) for i in report.killed_real}
    chosen = keep_best(candidates, lambda c: per[c], k)
    with contextlib.suppress(OSError):
        memo.write_text(json.dumps([p.name for p in chosen]))
    return chosen


def from_project(
    project: Any, k: int, cache_dir: Path, seed: int = 0, golds: Callable[[str], Sequence[str]] | None = None
) -> Neighbourhood:
    """The neighbourhood of a loaded nl2sql.yaml's SQLite datasources; with ``golds``
    (datasource -> its cases' gold SQL), distilled neighbours (``distil``)."""
    configs = {name.lower(): cfg for name, cfg in (getattr(project, "datasources", None) or {}).items()}

    def resolve(name: str) -> Path | None:
        cfg = configs.get(name.lower())
        return sqlite_file(cfg.url) if cfg is not None else None

    return Neighbourhood(k=k, resolve=resolve, cache_dir=cache_dir, seed=seed, golds=golds)
