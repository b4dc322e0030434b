"""Mutation kill rate of Spider's gold queries: on the real database, and with the neighbours.

For each dev item, ``pytest_nl2sql.scoring.mutants.mutants`` derives the gold's mutants (the
join-column ones from the database's primary and foreign keys) and ``kill_rates`` runs them
on the real database and on the K neighbour databases ``--nl2sql-test-suite K`` used (the
same cache, so the same databases). The match rule is the suite's: order matters exactly when
the gold has a top-level ORDER BY.

``distilled_kills`` does what the test-suite paper does: per database, build ``K * pool``
candidate neighbours, keep the ``K`` that kill the most of all its gold queries' mutants
(``neighbours.keep_best``), and count the mutants killed with those.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

from pytest_nl2sql.scoring.matching import MatchRule
from pytest_nl2sql.scoring.mutants import KillReport, kill_rates, mutants
from pytest_nl2sql.scoring.neighbours import keep_best, neighbours, run_query

from .convert import SpiderItem, db_path, top_level_order_by

__all__ = ["distilled_kills", "kill_reports", "sqlite_keys"]


def sqlite_keys(path: Path) -> dict[str, list[tuple[str, str, bool]]]:
    """``{table: [(key column, type, is a primary key)]}`` of a SQLite file (the mutants' schema)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        out: dict[str, list[tuple[str, str, bool]]] = {}
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for t in tables:
            q = '"' + t.replace('"', '""') + '"'
            fk = {r[3].lower() for r in con.execute(f"PRAGMA foreign_key_list({q})")}
            # a column another table's foreign key points at is a key too
            out[t.lower()] = [(r[1], r[2] or "", bool(r[5])) for r in con.execute(f"PRAGMA table_info({q})") if r[5] or r[1].lower() in fk]
        for t in tables:
            q = '"' + t.replace('"', '""') + '"'
            for r in con.execute(f"PRAGMA foreign_key_list({q})"):
                parent, col = r[2].lower(), r[4]
                if col and parent in out and all(c.lower() != col.lower() for c, _, _ in out[parent]):
                    types = {c[1].lower(): c[2] for c in con.execute(f'PRAGMA table_info("{r[2]}")')}
                    out[parent].append((col, types.get(col.lower(), ""), False))
        return out
    finally:
        con.close()


def _real(path: Path, sql: str, limit: int = 100_000, seconds: float = 10.0) -> tuple:
    """One SELECT on the real database, read-only: (columns, rows, truncated at ``limit``)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        deadline = time.monotonic() + seconds
        con.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
        cur = con.execute(sql)
        rows = cur.fetchmany(limit + 1)
        return tuple(d[0] for d in cur.description or ()), rows[:limit], len(rows) > limit
    finally:
        con.close()


def _one(item: SpiderItem, spider_dir: Path, k: int, cache: Path) -> KillReport | None:
    db = db_path(spider_dir, item.db_id)
    found = mutants(item.gold, "sqlite", keys=sqlite_keys(db))
    near = [partial(run_query, p) for p in neighbours(db, k, 0, cache)] if k else []
    try:
        return kill_rates(item.gold, found, partial(_real, db), near, MatchRule(order_matters=top_level_order_by(item.gold)))
    except sqlite3.Error:  # the gold itself fails: no rate
        return None


def kill_reports(items: Sequence[SpiderItem], spider_dir: Path, k: int, cache: Path, workers: int = 2) -> list[KillReport | None]:
    """One report per item (None when its gold does not run), in the items' order."""
    for db_id in sorted({it.db_id for it in items}):  # build the neighbours once, before the workers
        if k:
            neighbours(db_path(spider_dir, db_id), k, 0, cache)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(partial(_one, spider_dir=spider_dir, k=k, cache=cache), items, chunksize=16))


def _distil_db(db_id: str, items: Sequence[SpiderItem], spider_dir: Path, k: int, cache: Path, pool: int) -> tuple[int, int, int]:
    """(mutants counted, killed on the real database, killed with the K best of K * pool)."""
    db = db_path(spider_dir, db_id)
    keys = sqlite_keys(db)
    candidates = neighbours(db, k * pool, 0, cache)
    real = partial(_real, db)
    per: dict[Path, set] = {c: set() for c in candidates}
    counted = killed_real = 0
    work = []
    for it in items:
        found = mutants(it.gold, "sqlite", keys=keys)
        rule = MatchRule(order_matters=top_level_order_by(it.gold))
        try:
            base = kill_rates(it.gold, found, real, (), rule)
        except sqlite3.Error:
            continue
        counted += base.counted
        killed_real += len(base.killed_real)
        alive = [m for i, m in enumerate(found) if i not in base.killed_real and i not in base.broken]
        work.append((it, alive, rule))
    for c in candidates:
        near = partial(run_query, c)
        for it, alive, rule in work:
            if alive:
                r = kill_rates(it.gold, alive, real, [near], rule)
                per[c] |= {(it.case_id, alive[i].sql) for i in r.killed_any}
    chosen = keep_best(candidates, lambda c: per[c], k)
    return counted, killed_real, killed_real + len(set().union(*(per[c] for c in chosen)))


def distilled_kills(items: Sequence[SpiderItem], spider_dir: Path, k: int, cache: Path, pool: int = 4, workers: int = 2) -> tuple[int, int, int]:
    """Summed over the databases: (mutants counted, killed on the real database, killed with the
    K distilled neighbours of each database)."""
    by_db: dict[str, list[SpiderItem]] = {}
    for it in items:
        by_db.setdefault(it.db_id, []).append(it)
    with ProcessPoolExecutor(max_workers=workers) as pool_:
        futures = [pool_.submit(_distil_db, db, its, spider_dir, k, cache, pool) for db, its in sorted(by_db.items())]
        parts = [f.result() for f in futures]
    return tuple(sum(p[i] for p in parts) for i in range(3))  # type: ignore[return-value]
