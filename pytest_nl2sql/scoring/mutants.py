"""Mutants of a gold SQL, and how many of them execution tells apart from the gold.

A gold query is a strong check only when a slightly wrong query gives other rows. ``mutants``
derives such slightly wrong queries from a gold SQL with sqlglot, one change each:

==================  ==================================================================
kind                change
==================  ==================================================================
``comparison``      a comparison operator swapped: ``=`` <-> ``!=``, ``<`` -> ``<=`` / ``>``,
                    ``<=`` -> ``<`` / ``>=``, ``>`` -> ``>=`` / ``<``, ``>=`` -> ``>`` / ``<=``
``distinct``        ``DISTINCT`` dropped, or added to a SELECT that may return several rows
``where``           one conjunct of a WHERE (or HAVING) dropped at a time (the only one:
                    the WHERE goes)
``limit``           ``LIMIT n`` changed to ``n + 1`` and ``n - 1``
``aggregate``       ``SUM`` <-> ``AVG``, ``MIN`` <-> ``MAX``, ``COUNT(x)`` <-> ``COUNT(DISTINCT x)``
``join-column``     one side of a join's ``a.x = b.y`` replaced by another key column (primary
                    or foreign key) of the same table and type, when the schema has one
==================  ==================================================================

The order is deterministic -- the kinds taken in turn (round robin, in the order above), each
kind's changes in the query's walk order -- and the count is bounded (``MAX_MUTANTS``). A
mutant whose SQL text equals the gold's or another mutant's is left out. The work is bounded
too: a mutant is made (a copy of the query) only when the round robin takes it, at most
``MAX_TRIES`` are made, and a long query gets fewer mutants (``MAX_COPIED_NODES`` nodes copied
in all, at least 4 mutants): a WHERE of 300 conjuncts makes ~26 mutants, not 600 copies.

``kill_rates`` runs the gold and every mutant on the real database and on neighbour
databases (``neighbours.py``): a mutant is *killed* on a database when it runs there and
its rows differ from the gold's under the case's match rule (``matching.match_rows``). A
mutant that fails to run (an SQL error) is never counted as killed; a mutant that fails on
the real database is not a query at all and is left out of the rates (counted as
``broken``). A database on which the gold itself fails is passed over.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import attrs
import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import SqlglotError

__all__ = [
    "KINDS",
    "MAX_MUTANTS",
    "WEAK_KILL_RATE",
    "KillReport",
    "Mutant",
    "keys_from_schema",
    "kill_rates",
    "mutants",
]

#: At most this many mutants per gold SQL.
MAX_MUTANTS = 40
#: At most this many mutants are made (copies of the query) per gold SQL, duplicates included.
MAX_TRIES = 4 * MAX_MUTANTS
#: ... and the copies hold at most this many nodes in all (a long query gets fewer mutants, at least 4).
MAX_COPIED_NODES = 40_000
#: A case whose mutants are killed on the real database at a lower rate is weak (``weak-gold``).
WEAK_KILL_RATE = 0.5
KINDS = ("comparison", "distinct", "where", "limit", "aggregate", "join-column")

_SWAPS: dict[type, tuple[type, ...]] = {
    exp.EQ: (exp.NEQ,),
    exp.NEQ: (exp.EQ,),
    exp.LT: (exp.LTE, exp.GT),
    exp.LTE: (exp.LT, exp.GTE),
    exp.GT: (exp.GTE, exp.LT),
    exp.GTE: (exp.GT, exp.LTE),
}
_SYMBOL = {exp.EQ: "=", exp.NEQ: "!=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_AGG_SWAPS: dict[type, type] = {exp.Sum: exp.Avg, exp.Avg: exp.Sum, exp.Min: exp.Max, exp.Max: exp.Min}

#: ``{table (lower case): [(key column, declared type[, is a primary key]), ...]}``
Keys = Mapping[str, Sequence[tuple[str, str]]]


@attrs.frozen
class Mutant:
    kind: str
    change: str  # what was changed, for a reader
    sql: str


# an edit: given the node at the site (in a copy of the tree), change the copy; return the change's text
_Edit = Callable[[exp.Expression], str | None]


def _sites(tree: exp.Expression, keys: Keys | None) -> dict[str, list[tuple[int, _Edit]]]:
    """Per kind, (index of the node in ``tree.walk()`` order, edit) for each change."""
    out: dict[str, list[tuple[int, _Edit]]] = {k: [] for k in KINDS}
    aliases = _aliases(tree)
    for i, node in enumerate(tree.walk()):
        cls = type(node)
        if cls in _SWAPS:
            for new in _SWAPS[cls]:
                out["comparison"].append((i, _swap_comparison(new)))
            if keys and isinstance(node, exp.EQ) and node.find_ancestor(exp.Join) is not None:
                for side in ("this", "expression"):
                    col = node.args.get(side)
                    if isinstance(col, exp.Column) and col.table:
                        table = aliases.get(col.table.lower(), col.table.lower())
                        own = {c.lower(): t for c, t, *_pk in keys.get(table, ())}
                        if col.name.lower() in own:
                            for other, typ, *_pk in keys.get(table, ()):
                                if other.lower() != col.name.lower() and _affinity(typ) == _affinity(own[col.name.lower()]):
                                    out["join-column"].append((i, _swap_join(side, other)))
        if isinstance(node, exp.Select):
            if node.args.get("distinct"):
                out["distinct"].append((i, _set_distinct(False)))
            elif not _one_row(node) and not _grouped_output(node):
                out["distinct"].append((i, _set_distinct(True)))
        if isinstance(node, (exp.Where, exp.Having)):
            conjuncts = list(node.this.flatten()) if isinstance(node.this, exp.And) else [node.this]
            for j in range(len(conjuncts)):
                out["where"].append((i, _drop_conjunct(j)))
        if isinstance(node, exp.Limit) and isinstance(node.expression, exp.Literal) and node.expression.is_int:
            n = int(node.expression.this)
            for m in (n + 1, n - 1):
                if m >= 0:
                    out["limit"].append((i, _set_limit(m)))
        if cls in _AGG_SWAPS:
            out["aggregate"].append((i, _swap_aggregate(_AGG_SWAPS[cls])))
        if (
            isinstance(node, exp.Count)
            and not isinstance(node.this, exp.Star)
            and node.this is not None
            and not _counts_a_key(node, keys, aliases)
        ):
            out["aggregate"].append((i, _toggle_count_distinct))
    return out


def mutants(sql: str, dialect: str = "sqlite", *, keys: Keys | None = None, limit: int = MAX_MUTANTS) -> list[Mutant]:
    """The mutants of ``sql`` (module docstring), at most ``limit``; [] when sqlglot cannot read it."""
    return _mutants(sql, dialect, keys, limit)


def _mutants(sql: str, dialect: str, keys: Keys | None, limit: int, *, fast: bool = True) -> list[Mutant]:
    """``mutants``; ``fast=False`` makes each mutant from a whole copy of the query (the reference
    the fast way is tested against: the same mutants, in the same order)."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return []
    if tree is None:
        return []
    # each kind's mutants are made only when the round robin takes them: a WHERE of 300
    # conjuncts costs ``limit`` mutants, not 300 (and at most MAX_TRIES in all)
    sites = _sites(tree, keys)
    nodes = list(tree.walk())
    fast_sql = _FastSQL(tree, nodes, dialect) if fast else None
    if fast_sql is not None and list(map(type, tree.walk())) != list(map(type, nodes)):
        # the generator rewrote the query while writing it (a dialect's transform): the slow way, on a fresh parse
        tree, fast_sql = sqlglot.parse_one(sql, read=dialect), None
        nodes = list(tree.walk())
    gold_text = fast_sql.gold if fast_sql is not None else tree.sql(dialect=dialect)

    def made(kind: str, sites: list[tuple[int, _Edit]]) -> Iterator[Mutant]:
        for index, edit in sites:
            if fast_sql is not None:
                copy, node = fast_sql.path_copy(nodes[index], whole=not getattr(edit, "own_args", False))  # only the path to the node is new
            else:
                copy = tree.copy()
                node = next(itertools.islice(copy.walk(), index, None))
            try:
                change = edit(node)
                text = (fast_sql.sql(copy) if fast_sql is not None else copy.sql(dialect=dialect)) if change else None
            except (SqlglotError, ValueError, AttributeError):
                continue
            if text:
                yield Mutant(kind, change or "", text)

    queues = [made(k, sites.get(k, [])) for k in KINDS]
    out: list[Mutant] = []
    seen = {gold_text}
    tries = 0
    size = len(nodes)
    limit = min(limit, max(4, MAX_COPIED_NODES // max(1, size)))  # a huge query: fewer mutants
    while queues and len(out) < limit and tries < MAX_TRIES:
        for q in list(queues):
            for m in q:
                tries += 1
                if m.sql not in seen:
                    seen.add(m.sql)
                    out.append(m)
                    break
                if tries >= MAX_TRIES:
                    break
            else:
                queues.remove(q)
            if len(out) >= limit or tries >= MAX_TRIES:
                break
    return out


class _FastSQL:
    """A mutant's SQL without copying the query or writing it out again: each mutant shares the
    gold tree's nodes except on the path from the root to the changed node, and the SQL of a
    shared node is the text written for the gold (kept by node identity; the gold tree stays
    alive, so identities are not reused).

    An edit changes the arguments of new nodes only: the node at its site is new, and so is its
    whole subtree unless the edit is marked ``_own_args`` (it sets the site node's own
    arguments). A shared node may be re-parented by an edit, so the path to a node is read from
    the parents as they were first."""

    _generators: dict[str, type] = {}

    def __init__(self, tree: exp.Expression, nodes: list[exp.Expression], dialect: str) -> None:
        self.tree = tree
        self.dialect = Dialect.get_or_raise(dialect)
        self.texts: dict[int, str] = {}
        self.up = {id(n): (n.parent, n.arg_key, n.index) for n in nodes}
        self.gold = self.sql(tree, record=True)

    def sql(self, tree: exp.Expression, *, record: bool = False) -> str:
        base = self.dialect.generator_class
        cls = _FastSQL._generators.get(base.__qualname__)
        if cls is None:
            cls = type("KeptTextGenerator", (base,), {"sql": _kept_sql, "_base_sql": base.sql})
        try:
            generator = cls(dialect=self.dialect)
        except TypeError:  # sqlglotc's compiled generator cannot be subclassed here: the mutant
            cls, generator = base, base(dialect=self.dialect)  # is written whole (the same text)
        _FastSQL._generators[base.__qualname__] = cls
        if cls is not base:
            generator.kept, generator.record = self.texts, record
        return generator.generate(tree, copy=False)

    def path_copy(self, node: exp.Expression, *, whole: bool) -> tuple[exp.Expression, exp.Expression]:
        """(the root of a tree that is the gold's with new nodes from the root to ``node``, the new
        ``node``); ``whole``: the node's subtree is copied too (an edit that changes its descendants)."""
        path = [node]
        while (parent := self.up[id(path[-1])][0]) is not None:
            path.append(parent)
        path.reverse()
        copies = [_shallow(n) for n in path[:-1]] + [node.copy() if whole else _shallow(node)]
        for parent, child, original in zip(copies, copies[1:], path[1:], strict=False):
            _, key, index = self.up[id(original)]
            if index is None:
                parent.args[key] = child
            else:
                parent.args[key] = [*parent.args[key]]
                parent.args[key][index] = child
            child.parent, child.arg_key, child.index = parent, key, index
        return copies[0], copies[-1]


def _shallow(node: exp.Expression) -> exp.Expression:
    """A new node of ``node``'s class and arguments (the same children: they are not re-parented)."""
    new = node.__class__()
    new.args = dict(node.args)
    new.comments, new._type, new._meta = node.comments, node._type, node._meta
    return new


def _kept_sql(self: Any, expression: Any, key: str | None = None, comment: bool = True) -> str:
    """``Generator.sql``, giving a gold node's kept text (``_FastSQL``)."""
    if key is None and comment:
        text = self.kept.get(id(expression))
        if text is None:
            text = self._base_sql(expression)
            if self.record and isinstance(expression, exp.Expression):
                self.kept[id(expression)] = text
        return text
    return self._base_sql(expression, key, comment)


# -- the edits ------------------------------------------------------------------------------

def _own_args(make: Callable[..., _Edit]) -> Callable[..., _Edit]:
    """Marks the edits that change only the arguments of the node at their site (a new node in
    the fast way): its children may be re-parented, never changed. Any other edit is given a
    copy of the site's whole subtree."""

    def wrapped(*args: Any) -> _Edit:
        edit = make(*args)
        edit.own_args = True  # type: ignore[attr-defined]
        return edit

    return wrapped


@_own_args
def _swap_comparison(new: type) -> _Edit:
    def edit(node: exp.Expression) -> str:
        node.replace(new(this=node.this, expression=node.expression))
        return f"{_SYMBOL[type(node)]} -> {_SYMBOL[new]} in {node.sql()}"

    return edit


def _swap_join(side: str, other: str) -> _Edit:
    def edit(node: exp.Expression) -> str:
        col = node.args[side]
        before = col.sql()
        col.set("this", exp.to_identifier(other))
        return f"join on {col.sql()} instead of {before}"

    return edit


@_own_args
def _set_distinct(on: bool) -> _Edit:
    def edit(node: exp.Expression) -> str:
        node.set("distinct", exp.Distinct() if on else None)
        return "DISTINCT added" if on else "DISTINCT dropped"

    return edit


@_own_args
def _drop_conjunct(j: int) -> _Edit:
    def edit(node: exp.Expression) -> str:
        conjuncts = list(node.this.flatten()) if isinstance(node.this, exp.And) else [node.this]
        dropped = conjuncts.pop(j)
        label = "WHERE" if isinstance(node, exp.Where) else "HAVING"
        if conjuncts:
            node.set("this", exp.and_(*conjuncts, copy=False))  # the node is in a copy already
        else:
            node.pop()
        return f"{label} {dropped.sql()} dropped"

    return edit


@_own_args
def _set_limit(m: int) -> _Edit:
    def edit(node: exp.Expression) -> str:
        before = node.expression.this
        node.set("expression", exp.Literal.number(m))
        return f"LIMIT {before} -> {m}"

    return edit


@_own_args
def _swap_aggregate(new: type) -> _Edit:
    def edit(node: exp.Expression) -> str:
        before = type(node).__name__.upper()
        node.replace(new(this=node.this))
        return f"{before} -> {new.__name__.upper()}"

    return edit


def _toggle_count_distinct(node: exp.Expression) -> str | None:
    arg = node.this
    if isinstance(arg, exp.Distinct):
        inner = arg.expressions
        if len(inner) != 1:
            return None
        node.set("this", inner[0].copy())
        return "COUNT(DISTINCT x) -> COUNT(x)"
    node.set("this", exp.Distinct(expressions=[arg.copy()]))
    return "COUNT(x) -> COUNT(DISTINCT x)"


def _one_row(select: exp.Select) -> bool:
    """A SELECT of aggregates without GROUP BY returns one row: DISTINCT cannot change it."""
    if select.args.get("group") or not any(select.find_all(exp.AggFunc)):
        return False
    return all(c.find_ancestor(exp.AggFunc) is not None for e in select.expressions for c in e.find_all(exp.Column))


def _grouped_output(select: exp.Select) -> bool:
    """Every GROUP BY term is an output column: the rows are distinct already."""
    group = select.args.get("group")
    if not group or not group.expressions:
        return False
    outputs = {e.sql().lower() for e in select.expressions} | {e.unalias().sql().lower() for e in select.expressions}
    outputs |= {e.alias_or_name.lower() for e in select.expressions}
    return all(g.sql().lower() in outputs for g in group.expressions)


def _counts_a_key(count: exp.Count, keys: Keys | None, aliases: Mapping[str, str]) -> bool:
    """``COUNT(pk)`` over one table, no join: DISTINCT cannot change it (an equivalent mutant)."""
    arg = count.this
    arg = arg.expressions[0] if isinstance(arg, exp.Distinct) and len(arg.expressions) == 1 else arg
    select = count.find_ancestor(exp.Select)
    if not keys or not isinstance(arg, exp.Column) or select is None or select.args.get("joins"):
        return False
    source = select.args.get("from_") or select.args.get("from")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table):
        return False
    name = table.name.lower()
    pks = [c for c, _t, *pk in keys.get(name, ()) if pk and pk[0]]
    return len(pks) == 1 and pks[0].lower() == arg.name.lower()


def _aliases(tree: exp.Expression) -> dict[str, str]:
    out = {}
    for t in tree.find_all(exp.Table):
        if t.name:
            out[(t.alias or t.name).lower()] = t.name.lower()
    return out


def _affinity(decl: str) -> str:
    d = (decl or "").upper()
    if "INT" in d:
        return "int"
    if any(w in d for w in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if any(w in d for w in ("REAL", "FLOA", "DOUB", "NUM", "DEC")):
        return "real"
    return d or "any"


def keys_from_schema(schema: Any) -> dict[str, list[tuple[str, str, bool]]]:
    """The key columns (primary and foreign) of each table of a ``datasources.SchemaInfo``:
    ``{table: [(column, type, is a primary key), ...]}``."""
    out: dict[str, list[tuple[str, str, bool]]] = {}
    for name, table in schema.tables.items():
        fk_cols = {c.lower() for fk in table.foreign_keys for c in fk.columns}
        out[name.lower()] = [
            (c.name, c.type, c.primary_key) for c in table.columns if c.primary_key or c.name.lower() in fk_cols
        ]
    return out


# -- kill rates -----------------------------------------------------------------------------

#: Runs one SELECT on one database: (columns, rows) or (columns, rows, truncated), or raises
#: on an SQL error. A truncated result never matches (so a mutant cut at a row limit is killed).
Runner = Callable[[str], tuple]


@attrs.frozen
class KillReport:
    """Of one gold SQL's mutants: which execution tells apart, on the real database alone and
    with the neighbours too."""

    mutants: tuple[Mutant, ...]
    killed_real: frozenset[int]  # indices into mutants
    killed_any: frozenset[int]  # on the real database or on a neighbour
    broken: frozenset[int]  # fail on the real database: left out of the rates
    neighbours: int = 0  # neighbours on which the gold ran

    @property
    def counted(self) -> int:
        return len(self.mutants) - len(self.broken)

    @property
    def rate_real(self) -> float | None:
        return len(self.killed_real) / self.counted if self.counted else None

    @property
    def rate_any(self) -> float | None:
        return len(self.killed_any) / self.counted if self.counted else None

    def survivors(self, *, with_neighbours: bool = False) -> list[Mutant]:
        """The mutants not told apart (shortest SQL first)."""
        killed = self.killed_any if with_neighbours else self.killed_real
        left = [m for i, m in enumerate(self.mutants) if i not in killed and i not in self.broken]
        return sorted(left, key=lambda m: (len(m.sql), m.sql))


def _differs(gold: tuple, run: Runner, sql: str, rule: Any) -> bool | None:
    """True: the mutant's rows differ; False: equal; None: it failed to run."""
    from pytest_nl2sql.scoring.matching import match_rows

    try:
        out = run(sql)
    except Exception:  # noqa: BLE001 -- any SQL error: not killed
        return None
    truncated = len(out) > 2 and bool(out[2])
    return not match_rows(gold[0], list(gold[1]), out[0], list(out[1]), rule, truncated=truncated).matched


def kill_rates(
    gold_sql: str,
    found: Iterable[Mutant],
    real: Runner,
    neighbours: Sequence[Runner] = (),
    rule: Any = None,
) -> KillReport:
    """Run the gold and each mutant on ``real`` and on each of ``neighbours`` (module docstring).
    Raises what ``real`` raises when the gold itself fails on the real database."""
    ms = tuple(found)
    gold_real = real(gold_sql)
    gold_near = []
    for run in neighbours:
        try:
            gold_near.append((run, run(gold_sql)))
        except Exception:  # noqa: BLE001 -- the gold fails there: pass the neighbour over
            continue
    killed_real, killed_any, broken = set(), set(), set()
    for i, m in enumerate(ms):
        d = _differs(gold_real, real, m.sql, rule)
        if d is None:
            broken.add(i)
            continue
        if d:
            killed_real.add(i)
            killed_any.add(i)
            continue
        for run, gold in gold_near:
            if _differs(gold, run, m.sql, rule):
                killed_any.add(i)
                break
    return KillReport(ms, frozenset(killed_real), frozenset(killed_any), frozenset(broken), len(gold_near))
