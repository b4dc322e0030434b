"""Drawing a neighbour database's rows: the schema model and the value pools, for every backend.

A column's pool is its own sampled values plus boundary and perturbed ones (``_perturbed``);
``fill`` draws each table's rows, parents first, keys from the rows its parents kept, NULLs
where allowed, repeats for ties and duplicates, and now and then an empty table. The backend
writes each row (``insert``) and says whether it was kept: SQLite in ``neighbours``,
PostgreSQL in ``pgneighbours``. One ``random.Random`` per (seed, neighbour) makes it
reproducible.

A column some role may not read never lends its real values to a neighbour: ``hide`` replaces
its sample by synthetic values of its kind (``synthetic``) before anything is drawn, so a
query that reaches a neighbour can find nothing there that the real database keeps from a role.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import hashlib
import os
import random
from collections.abc import Callable, Sequence
from typing import Any

import attrs

__all__ = ["ALL_RULES", "ColumnSpec", "TableSpec", "digest", "fill", "fk_order", "hide", "quote_ident", "rules", "synthetic", "together_groups"]

#: Distinct values sampled per column of the real database.
SAMPLE_VALUES = 40
#: Rows per table of a neighbour (at most).
MAX_ROWS = 24
#: The share of neighbours' tables left empty.
EMPTY_TABLE_RATE = 0.08
#: Bumped whenever generation changes, so cached neighbours of an older generator are not reused.
GENERATOR_VERSION = 5  # 5: a unique column never runs out of values
#: The real data's invariants a neighbour keeps (docs/scoring.md): ``nulls`` -- a NULL only in a
#: column whose real data has one; ``parents`` -- no child rows when a parent its real rows
#: always point at is empty; ``unique`` -- a column unique in the real data and identifier- or
#: name-like stays unique (ignoring case and surrounding spaces); ``together`` -- text columns
#: that determine each other in the real rows (a name and its code) are drawn together from
#: one real row; ``children`` -- where every real parent row has a child through a foreign key,
#: every parent row of a neighbour gets one too. The environment variable ``PYTEST_NL2SQL_NEIGHBOUR_RULES`` (comma-separated,
#: or ``none``) narrows them, to measure each rule's effect (docs/benchmarks.md).
ALL_RULES = ("nulls", "parents", "unique", "together", "children")


def rules() -> frozenset[str]:
    text = os.environ.get("PYTEST_NL2SQL_NEIGHBOUR_RULES")
    if text is None:
        return frozenset(ALL_RULES)
    return frozenset(r.strip() for r in text.split(",") if r.strip() in ALL_RULES)


@attrs.frozen
class ColumnSpec:
    name: str
    decl: str
    notnull: bool
    pk: int  # position in the primary key, 0 if not part of it
    values: tuple  # a sample of the column's distinct values in the real database
    has_null: bool = True  # whether the real column holds a NULL
    #: unique in the real data (no value twice among its non-NULL values, at least two rows)
    unique_real: bool = False
    #: int, real, text, time, bool or other (drawn from its own values only); "" = from ``decl``
    #: by SQLite's affinity rules
    category: str = ""

    @property
    def kind(self) -> str:
        return self.category or _affinity(self.decl)


@attrs.frozen
class TableSpec:
    name: str
    sql: str
    columns: tuple[ColumnSpec, ...]
    # (column, parent table, parent column) for each foreign key column
    foreign: tuple[tuple[str, str, str], ...]
    unique: tuple[tuple[str, ...], ...]
    #: a sample of the real table's rows (values in column order), for columns drawn together
    samples: tuple[tuple, ...] = ()
    #: the foreign-key columns through which every real parent row has a child of this table
    covering: tuple[str, ...] = ()


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def fk_order(tables: dict[str, TableSpec]) -> list[TableSpec]:
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
    h = hashlib.sha256(f"generator {GENERATOR_VERSION} {sorted(rules())}".encode())
    for t in tables:
        h.update(t.sql.encode())
        h.update(repr((t.samples, t.covering)).encode())
        for c in t.columns:
            h.update(repr((c.name, c.values, c.has_null, c.unique_real)).encode())
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


def synthetic(col: ColumnSpec) -> tuple:
    """Made-up values of ``col``'s kind, none taken from the real database."""
    kind = col.kind
    if kind == "int":
        return tuple(range(1, 9))
    if kind == "real":
        return (0.5, 1.5, 2.25, 10.0, 99.75)
    if kind == "bool":
        return (True, False)
    if kind == "time":
        return tuple(datetime.date(2000, 1, day) for day in range(1, 9))
    if kind in ("text", "any"):
        return tuple(f"value {i}" for i in range(1, 9))
    return ()  # a type we cannot make up (json, arrays, ...): NULLs where allowed, else no row


def hide(tables: Sequence[TableSpec], hidden: Callable[[str, str], bool] | None) -> list[TableSpec]:
    """``tables`` with every column ``hidden(table, column)`` names drawn from synthetic values."""
    if hidden is None:
        return list(tables)
    out = []
    for t in tables:
        mask = [hidden(t.name, c.name) for c in t.columns]
        cols = tuple(attrs.evolve(c, values=synthetic(c)) if m else c for c, m in zip(t.columns, mask, strict=True))
        # the real rows drawn together must not carry a hidden column's values either: NULL
        # there takes the column out of every together group (together_groups needs values)
        samples = tuple(tuple(None if m else v for v, m in zip(r, mask, strict=False)) for r in t.samples)
        out.append(attrs.evolve(t, columns=cols, samples=samples))
    return out


def _perturbed(col: ColumnSpec, rnd: random.Random) -> list[Any]:
    """Boundary and perturbed values for one column, beside its own."""
    vals = list(col.values)
    out: list[Any] = []
    nums = [v for v in vals if isinstance(v, (int, float)) and not isinstance(v, bool)]
    decimals = [v for v in vals if isinstance(v, decimal.Decimal) and v.is_finite()]
    texts = [v for v in vals if isinstance(v, str)]
    kind = col.kind
    if kind == "other":  # a type with no order we know (json, arrays, ...): its own values only
        return out
    if nums:
        lo, hi = min(nums), max(nums)
        out += [lo, hi]
        if all(isinstance(v, int) for v in nums):
            out += [lo - 1, hi + 1, 0, rnd.choice(nums) + 1]
        else:
            out += [lo - 0.5, hi + 0.5, 0.0, round(rnd.choice(nums) * 1.01, 2)]
    elif decimals:
        lo, hi = min(decimals), max(decimals)
        step = decimal.Decimal(1) if all(v == v.to_integral_value() for v in decimals) else decimal.Decimal("0.01")
        out += [lo, hi, lo - step, hi + step, decimal.Decimal(0), rnd.choice(decimals) + step]
    elif kind == "int":
        out += [0, 1, -1, 2]
    elif kind == "real":
        out += [0.0, 1.5, -2.25]
    elif kind == "bool":
        out += [True, False]
    if kind == "time":
        out += _moved_times(vals, rnd)
    if texts:
        s = rnd.choice(texts)
        out += [min(texts), max(texts), "", s.upper() if s.upper() != s else s.lower(), s + " "]
    elif kind == "text":
        out += ["", "a", "Z"]
    return out


def _moved_times(vals: list[Any], rnd: random.Random) -> list[Any]:
    """Dates and times one step before the earliest, after the latest, and beside one of them
    (a day, a second): the boundaries of a date range."""
    times = [v for v in vals if isinstance(v, (datetime.date, datetime.time)) and not isinstance(v, bool)]
    if not times:
        return []
    out: list[Any] = []
    first = min(times, key=_sort_key)
    for v in (first, max(times, key=_sort_key), rnd.choice(times)):
        if not isinstance(v, datetime.date):  # a time of day: its own values only
            continue
        step = datetime.timedelta(days=1)
        if isinstance(v, datetime.datetime) and v is first:
            step = datetime.timedelta(seconds=1)
        for moved in (lambda: v - step, lambda: v + step):  # noqa: B023 -- called at once
            with contextlib.suppress(OverflowError):
                out.append(moved())
    return out


def _sort_key(v: Any) -> Any:
    if isinstance(v, datetime.datetime) and v.tzinfo is not None:
        return v.astimezone(datetime.UTC).replace(tzinfo=None)
    if isinstance(v, datetime.time):
        return (v.hour, v.minute, v.second, v.microsecond)
    return v


def _pool(col: ColumnSpec, rnd: random.Random) -> list[Any]:
    pool = list(col.values) or []
    pool += _perturbed(col, rnd)
    if not pool:
        pool = [0, 1, "x"]
    return pool


_NAME_LIKE = ("id", "code", "name", "title", "key", "abbrev", "login", "email")


def _keeps_unique(c: ColumnSpec) -> bool:
    """A column unique in the real data whose name says it is an identifier or a name (other
    columns may repeat in a neighbour: a measure such as a population may tie, and ties and
    duplicates are what ORDER BY ... LIMIT and DISTINCT mistakes need)."""
    if not c.unique_real:
        return False
    n = c.name.lower()
    return any(n.endswith(w) or n.startswith(w) for w in _NAME_LIKE)


def _fresh_value(pool: Sequence[Any], used: set, rnd: random.Random) -> Any:
    """A value not yet in ``used`` when the column's own values have run out (a unique name
    column of a table with more rows than the sample has names): a real one with a number
    added, or the next integer; otherwise the pool's first (and the row is left out)."""
    texts = [v for v in pool if isinstance(v, str) and v.strip()]
    ints = [v for v in pool if isinstance(v, int) and not isinstance(v, bool)]
    for k in range(2, 1000):
        if texts:
            v: Any = f"{rnd.choice(texts)} {k}"
        elif ints:
            v = max(ints) + k
        else:
            break
        if _ukey(v) not in used:
            return v
    return pool[0]


def _ukey(v: Any) -> Any:
    return v.strip().casefold() if isinstance(v, str) else v


def together_groups(t: TableSpec) -> list[list[int]]:
    """Groups of text columns that determine each other in the real rows (each value of one
    goes with one value of the other, both ways, over at least two distinct values)."""
    rows = t.samples
    if len(rows) < 2:
        return []
    textual = [
        i for i, c in enumerate(t.columns)
        if c.kind == "text" and len({r[i] for r in rows if r[i] is not None}) >= 2
    ]
    parent = {i: i for i in textual}

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    def determines(a: int, b: int) -> bool:
        seen: dict[Any, Any] = {}
        for r in rows:
            if r[a] is None:
                continue
            if seen.setdefault(r[a], r[b]) != r[b]:
                return False
        return True

    for x, a in enumerate(textual):
        for b in textual[x + 1:]:
            if find(a) != find(b) and determines(a, b) and determines(b, a):
                parent[find(b)] = find(a)
    groups: dict[int, list[int]] = {}
    for i in textual:
        groups.setdefault(find(i), []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def _parent_empty(t: TableSpec, fk: dict, keys: dict) -> bool:
    """A foreign key whose real values are never NULL points at a parent left with no rows."""
    for c in t.columns:
        ref = fk.get(c.name.lower())
        if ref is None or (not c.notnull and c.has_null):
            continue
        parent, pcol = ref[0].lower(), ref[1].lower()
        if parent == t.name.lower():
            continue
        filled = (parent, pcol) in keys or (parent, "") in keys
        if filled and not (keys.get((parent, pcol)) or keys.get((parent, ""))):
            return True
    return False


def fill(tables: Sequence[TableSpec], rnd: random.Random, insert: Callable[[TableSpec, list], bool]) -> None:
    """Draw each table's rows (parents first) and hand them to ``insert``, which writes one
    row and says whether it was kept (a row breaking a constraint is not). The same draws
    serve every backend: SQLite here, PostgreSQL in ``pgneighbours``."""
    on = rules()
    keys: dict[tuple[str, str], list[Any]] = {}  # (table, column) -> values written, for children
    for t in tables:
        n = 0 if rnd.random() < EMPTY_TABLE_RATE else rnd.randint(1, MAX_ROWS)
        fk = {c.lower(): (p, pc) for c, p, pc in t.foreign}
        pools = {c.name: _pool(c, rnd) for c in t.columns}
        pk_cols = [c for c in t.columns if c.pk]
        unique = [i for i, c in enumerate(t.columns) if "unique" in on and _keeps_unique(c)]
        used: dict[int, set] = {i: set() for i in unique}
        groups = together_groups(t) if "together" in on else []
        grouped = {i: g for g in groups for i in g}
        if "parents" in on and _parent_empty(t, fk, keys):
            n = 0  # a parent is empty: no row of this table would point anywhere real
        # every parent row gets a child where the real data's do (no parent without children)
        pending: dict[str, list[Any]] = {}
        if "children" in on:
            for col in t.covering:
                ref = fk.get(col.lower())
                if ref is not None:
                    parents = list(dict.fromkeys(keys.get((ref[0].lower(), ref[1].lower())) or keys.get((ref[0].lower(), "")) or []))
                    rnd.shuffle(parents)
                    pending[col.lower()] = parents
            if pending:  # not left empty either
                n = min(max(n, max(len(v) for v in pending.values())), MAX_ROWS * 2)
        written: list[tuple] = []
        tries = 0
        while len(written) < n and tries < n * 4:
            tries += 1
            row: list[Any] = []
            chosen: dict[int, Any] = {}  # a group's columns, from one real (or written) row
            popped: list[tuple[str, Any]] = []  # parent keys still waiting for a child, used here
            for g in groups:
                src = rnd.choice(written) if written and rnd.random() < 0.15 else rnd.choice(t.samples)
                for i in g:
                    chosen[i] = src[i]
            for c in t.columns:
                i = len(row)
                ref = fk.get(c.name.lower())
                if ref is not None:
                    parent, pcol = ref
                    parents = keys.get((parent.lower(), pcol.lower())) or keys.get((parent.lower(), "")) or []
                    # a NULL key only where the real data has one: a schema that merely allows it
                    # (as most of Spider's do) would make orphan rows no real query meets
                    nullable = not c.notnull and c.has_null
                    if pending.get(c.name.lower()):
                        row.append(pending[c.name.lower()].pop())
                        popped.append((c.name.lower(), row[-1]))
                    elif parents and (not nullable or rnd.random() > 0.1):
                        row.append(rnd.choice(parents))
                    elif nullable or not parents:
                        row.append(None)
                    continue
                if i in grouped:
                    row.append(chosen[i])
                elif not c.notnull and not c.pk and (c.has_null or "nulls" not in on) and rnd.random() < 0.12:
                    row.append(None)
                elif len(pk_cols) == 1 and c.pk and c.kind == "int":
                    base = [v for v in pools[c.name] if isinstance(v, int) and not isinstance(v, bool)] or [1]
                    row.append(rnd.choice(base) if rnd.random() < 0.7 else rnd.randint(1, 10_000))
                elif written and i not in used and rnd.random() < 0.15:  # a repeat: ties and duplicates
                    row.append(rnd.choice(written)[i])
                elif i in used:
                    fresh = [v for v in pools[c.name] if _ukey(v) not in used[i]]
                    row.append(rnd.choice(fresh) if fresh else _fresh_value(pools[c.name], used[i], rnd))
                else:
                    row.append(rnd.choice(pools[c.name]))
            kept = not any(row[i] is not None and _ukey(row[i]) in used[i] for i in unique) and insert(t, row)
            if not kept:
                for col, key in popped:  # the parent still waits for a child
                    pending[col].append(key)
                continue
            if kept:
                written.append(tuple(row))
                for i in unique:
                    if row[i] is not None:
                        used[i].add(_ukey(row[i]))
        for i, c in enumerate(t.columns):
            vals = [r[i] for r in written if r[i] is not None]
            keys[(t.name.lower(), c.name.lower())] = vals
            if c.pk and len(pk_cols) == 1:
                keys[(t.name.lower(), "")] = vals  # a foreign key naming no column means the primary key
