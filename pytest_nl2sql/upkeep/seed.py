"""Draft cases from a datasource's schema (spec: "Drafts"; ``pytest-nl2sql eval seed``).

``seed(name, registry)`` reads the introspected schema -- tables, columns, foreign keys, row
counts, sample values -- and drafts questions of seven kinds: counts, top-N groups (ties kept
with RANK, so no LIMIT cuts a tie), aggregates across foreign-key joins, distinct values, date
ranges, filters on sampled values, and plain aggregates. Every candidate SQL is run through the
datasource's read-only adapter, and only those that run, return at least one row with a value
and are not cut at the row limit are kept. Sums and averages of non-integer columns are rounded
to two places, so the drafted gold does not depend on summation order. The choice is
deterministic for a given ``seed``.

Questions are written in words: ``BillingCountry`` and ``billing_country`` both read "billing
country", and nouns are pluralised ("How many invoices are there for each billing country?").
Sample values appear in double quotes, exactly as the database holds them.
"""

from __future__ import annotations

import itertools
import os
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from pytest_nl2sql.config import Config
from pytest_nl2sql.datasources import Adapter, DatasourceRegistry, QueryError, TableInfo, introspect
from pytest_nl2sql.datasources.introspect import ColumnInfo
from pytest_nl2sql.errors import LockTimeout
from pytest_nl2sql.suitefile.model import EvalCase, Origin, Outcome, Status
from pytest_nl2sql.upkeep.drafts import DraftTargetRefused, write_draft_suite

__all__ = ["KINDS", "noun_plural", "noun_singular", "run_seed", "seed", "words", "write_drafts"]

#: The kinds of question drafted, each also a tag on its drafts (after ``seeded``).
KINDS = ("count", "top-n", "join", "distinct", "date-range", "filter", "aggregate")

_ACRONYMS = {"id": "ID", "sla": "SLA", "os": "operating system", "url": "URL", "ip": "IP", "sku": "SKU", "api": "API"}
_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Words that SQL engines reserve; identifiers spelled like them are quoted.
_RESERVED = frozenset(
    """all and any as asc between by case cast check collate column constraint create cross
    current_date current_time current_timestamp default delete desc distinct drop else end
    except exists false fetch for foreign from full grant group having in index inner insert
    intersect into is join key left like limit natural not null offset on or order outer
    primary references right select set table then to true union unique update user using
    values when where window with""".split()
)
_PLAIN_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: Verbs that take no object ("the event occurred"), with their base form for "when did ...".
_INTRANSITIVE = {
    "occurred": "occur",
    "happened": "happen",
    "started": "start",
    "ended": "end",
    "began": "begin",
    "arrived": "arrive",
    "converted": "convert",
}
_PARTICIPLES = frozenset({"seen", "begun", "done", "sent", "paid", "made", "held", "sold", "bought", "given", "run"})
MAX_GROUPS = 30  # a column with more distinct values is not treated as a category


def article(phrase: str) -> str:
    """``a``/``an`` for a phrase, by its first sound (``an invoice``, ``an SLA``, ``a team``)."""
    first = phrase.split(" ", 1)[0]
    if first.isupper() and len(first) > 1:
        return "an" if first[0] in "AEFHILMNORSX" else "a"
    return "an" if first[:1].lower() in "aeiou" else "a"


# -- words ---------------------------------------------------------------------------------


def words(name: str) -> str:
    """An identifier as lower-case words: ``BillingCountry``/``billing_country`` -> ``billing country``."""
    parts = [p.lower() for p in _WORD.findall(name)]
    return " ".join(_ACRONYMS.get(p, p) for p in parts) or name


def _is_plural(word: str) -> bool:
    low = word.lower()
    return low.endswith("s") and not low.endswith(("ss", "us", "is")) and len(low) > 2


def noun_plural(phrase: str) -> str:
    """Pluralise a phrase's noun (``invoice line`` -> ``invoice lines``, ``category`` ->
    ``categories``, ``second on page`` -> ``seconds on page``)."""
    for prep in (" of ", " on ", " per ", " in "):
        if prep in phrase:
            noun, _, rest = phrase.partition(prep)
            return f"{noun_plural(noun)}{prep}{rest}"
    head, _, last = phrase.rpartition(" ")
    low = last.lower()
    if last.isupper():
        out = last + "s"
    elif _is_plural(last):
        out = last
    elif low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        out = last[:-1] + "ies"
    elif low.endswith(("s", "x", "z", "ch", "sh")):
        out = last + "es"
    else:
        out = last + "s"
    return f"{head} {out}" if head else out


def noun_singular(phrase: str) -> str:
    """Singularise a phrase's last word (``ticket events`` -> ``ticket event``, ``slas`` -> ``SLA``)."""
    head, _, last = phrase.rpartition(" ")
    low = last.lower()
    if low.endswith("ies") and len(low) > 4:
        out = last[:-3] + "y"
    elif low.endswith(("sses", "xes", "ches", "shes", "uses")):
        out = last[:-2]
    elif _is_plural(last):
        out = last[:-1]
    else:
        out = last
    out = _ACRONYMS.get(out.lower(), out)
    return f"{head} {out}" if head else out


def _snake(phrase: str) -> str:
    out = re.sub(r"[^a-z0-9]+", "_", phrase.lower()).strip("_")
    return out if out and not out[0].isdigit() else f"c_{out}"


# -- the schema, classified ---------------------------------------------------------------


def _kind_of(column: ColumnInfo) -> str:
    t = column.type.upper()
    if "BOOL" in t:
        return "bool"
    if "DATE" in t or "TIME" in t:
        return "date"
    if "INT" in t:
        return "int"
    if any(k in t for k in ("NUMERIC", "DECIMAL", "REAL", "FLOAT", "DOUBLE", "NUMBER", "MONEY")):
        return "float"
    if any(k in t for k in ("CHAR", "TEXT", "CLOB", "STRING")):
        return "text"
    return "other"


def _is_key_name(name: str) -> bool:
    low = name.lower()
    return low == "id" or low.endswith("_id") or name.endswith("Id") or name.endswith("ID")


@attrs.frozen
class _Candidate:
    kind: str
    question: str
    sql: str
    tables: tuple[str, ...]
    columns: tuple[str, ...]
    order_matters: bool = False
    tags: tuple[str, ...] = ()


class _Seeder:
    def __init__(self, adapter: Adapter, rng: random.Random) -> None:
        self.adapter = adapter
        self.rng = rng
        self.schema = introspect(adapter)
        self.tables = [t for t in self.schema.tables.values() if t.kind == "table" and t.columns]
        self._distinct: dict[tuple[str, str], tuple[int, int] | None] = {}
        self._span: dict[tuple[str, str], tuple[int, int] | None] = {}

    # -- SQL text
    def q(self, name: str) -> str:
        plain = _PLAIN_IDENT.match(name) and name.lower() not in _RESERVED
        if plain and not (self.adapter.dialect == "postgresql" and name != name.lower()):
            return name
        return '"' + name.replace('"', '""') + '"'

    def round2(self, expr: str) -> str:
        """``expr`` rounded to two places (PostgreSQL rounds only NUMERIC to a given scale)."""
        if self.adapter.dialect == "postgresql":
            return f"ROUND(CAST({expr} AS NUMERIC), 2)"
        return f"ROUND({expr}, 2)"

    def year(self, column: str) -> str:
        if self.adapter.dialect == "sqlite":
            return f"CAST(strftime('%Y', {column}) AS INTEGER)"
        return f"CAST(EXTRACT(YEAR FROM {column}) AS INTEGER)"

    def _scalar(self, sql: str) -> Any:
        try:
            result = self.adapter.execute(sql)
        except QueryError:
            return None
        return result.rows[0] if result.rows else None

    # -- what the data looks like (asked lazily, cached)
    def distinct_count(self, table: TableInfo, column: ColumnInfo) -> tuple[int, int] | None:
        """(distinct values, non-null values) of a column."""
        key = (table.name, column.name)
        if key not in self._distinct:
            c = self.q(column.name)
            row = self._scalar(f"SELECT COUNT(DISTINCT {c}), COUNT({c}) FROM {self.q(table.name)}")
            self._distinct[key] = (row[0], row[1]) if row else None
        return self._distinct[key]

    def year_span(self, table: TableInfo, column: ColumnInfo) -> tuple[int, int] | None:
        key = (table.name, column.name)
        if key not in self._span:
            c = self.q(column.name)
            row = self._scalar(f"SELECT MIN({c}), MAX({c}) FROM {self.q(table.name)}")
            span = None
            if row and all(isinstance(v, str) and re.match(r"\d{4}", v) for v in row):
                span = (int(row[0][:4]), int(row[1][:4]))
            self._span[key] = span
        return self._span[key]

    def fk_columns(self, table: TableInfo) -> set[str]:
        return {c for fk in table.foreign_keys for c in fk.columns}

    def categories(self, table: TableInfo) -> list[ColumnInfo]:
        fks = self.fk_columns(table)
        out = []
        for column in table.columns:
            if _kind_of(column) != "text" or column.primary_key or column.name in fks:
                continue
            counts = self.distinct_count(table, column)
            # a category groups rows: few values, each shared by two rows or more on average
            if counts is not None and 2 <= counts[0] <= MAX_GROUPS and counts[0] * 2 <= counts[1]:
                out.append(column)
        return out

    def measures(self, table: TableInfo) -> list[ColumnInfo]:
        fks = self.fk_columns(table)
        return [
            c
            for c in table.columns
            if _kind_of(c) in ("int", "float") and not c.primary_key and c.name not in fks and not _is_key_name(c.name)
        ]

    def dates(self, table: TableInfo) -> list[ColumnInfo]:
        return [c for c in table.columns if _kind_of(c) == "date"]

    def label(self, table: TableInfo) -> list[ColumnInfo]:
        texts = [c for c in table.columns if _kind_of(c) == "text"]
        exact = [c for c in texts if c.name.lower() in ("name", "title")]
        if exact:
            return exact[:1]
        named = [c for c in texts if "name" in c.name.lower() and not c.primary_key]
        if named:
            return named[:2]
        pk = table.primary_key
        if len(pk) == 1 and _kind_of(table.column(pk[0])) == "text":
            return [table.column(pk[0])]
        return []

    def values(self, column: ColumnInfo) -> list[str]:
        return [
            v
            for v in column.samples
            if isinstance(v, str) and v.strip() == v and 0 < len(v) <= 60 and '"' not in v and "\n" not in v
        ]

    def shuffled(self, items: list[Any]) -> list[Any]:
        items = list(items)
        self.rng.shuffle(items)
        return items


# -- the nouns of one table ------------------------------------------------------------------


@attrs.frozen
class _Names:
    plural: str
    singular: str
    count_alias: str

    @classmethod
    def of(cls, table: TableInfo) -> _Names:
        w = words(table.name)
        singular = noun_singular(w) if _is_plural(w.rpartition(" ")[2]) else w
        return cls(plural=noun_plural(singular), singular=singular, count_alias=_snake(singular) + "_count")


def _col(table: TableInfo, *columns: ColumnInfo | str) -> tuple[str, ...]:
    return tuple(f"{table.name}.{c if isinstance(c, str) else c.name}" for c in columns)


def _counted(table: TableInfo) -> tuple[str, ...]:
    return _col(table, *table.primary_key[:1])


def _rounded(seeder: _Seeder, fn: str, expr: str, column: ColumnInfo) -> str:
    if fn == "AVG" or _kind_of(column) == "float":
        return seeder.round2(f"{fn}({expr})")
    return f"{fn}({expr})"


# -- the generators, one per kind -----------------------------------------------------------


def _gen_count(s: _Seeder) -> Iterator[_Candidate]:
    for table in s.shuffled(s.tables):
        n, t = _Names.of(table), s.q(table.name)
        yield _Candidate(
            "count", f"How many {n.plural} are there?", f"SELECT COUNT(*) AS {n.count_alias} FROM {t}",
            (table.name,), _counted(table),
        )
        for column in s.shuffled(s.categories(table)):
            c = s.q(column.name)
            yield _Candidate(
                "count",
                f"How many {n.plural} are there for each {words(column.name)}?",
                f"SELECT {c}, COUNT(*) AS {n.count_alias}\nFROM {t}\nGROUP BY {c}\nORDER BY {n.count_alias} DESC, {c}",
                (table.name,), _col(table, column) + _counted(table), tags=("aggregation",),
            )


def _top_n(s: _Seeder, table: TableInfo, column: ColumnInfo, value_sql: str, alias: str, n: int) -> str:
    c, t = s.q(column.name), s.q(table.name)
    return (
        f"SELECT {c}, {alias}\nFROM (\n"
        f"  SELECT {c}, {value_sql} AS {alias}, RANK() OVER (ORDER BY {value_sql} DESC) AS value_rank\n"
        f"  FROM {t}\n  WHERE {c} IS NOT NULL\n  GROUP BY {c}\n) AS ranked\n"
        f"WHERE value_rank <= {n}\nORDER BY {alias} DESC, {c}"
    )


def _gen_top_n(s: _Seeder) -> Iterator[_Candidate]:
    for table in s.shuffled(s.tables):
        names = _Names.of(table)
        for column in s.shuffled(s.categories(table)):
            groups = noun_plural(words(column.name))
            n = 3 if (s.distinct_count(table, column) or (0, 0))[0] <= 6 else 5
            yield _Candidate(
                "top-n",
                f"Which {n} {groups} have the most {names.plural} (ties included)?",
                _top_n(s, table, column, "COUNT(*)", names.count_alias, n),
                (table.name,), _col(table, column) + _counted(table), order_matters=True, tags=("aggregation",),
            )
            for measure in s.shuffled(s.measures(table))[:1]:
                alias = "total_" + _snake(words(measure.name))
                yield _Candidate(
                    "top-n",
                    f"Which {n} {groups} have the highest {words(measure.name)} summed over their "
                    f"{names.plural} (ties included)?",
                    _top_n(s, table, column, _rounded(s, "SUM", s.q(measure.name), measure), alias, n),
                    (table.name,), _col(table, column, measure), order_matters=True, tags=("aggregation",),
                )


def _gen_join(s: _Seeder) -> Iterator[_Candidate]:
    pairs = []
    for child in s.tables:
        for fk in child.foreign_keys:
            if len(fk.columns) == 1 and fk.ref_table != child.name and fk.ref_table in s.schema.tables:
                pairs.append((child, fk, s.schema.tables[fk.ref_table]))
    for child, fk, parent in s.shuffled(pairs):
        labels = s.label(parent)
        if not labels:
            continue
        cn, pn = _Names.of(child), _Names.of(parent)
        fk_words = words(re.sub(r"_?(?:id|Id|ID)$", "", fk.columns[0]))
        if fk_words.lower() in (pn.singular.lower(), words(parent.name).lower()):
            each = f"each {pn.singular}"
        else:
            each = f"each {fk_words} ({article(pn.singular)} {pn.singular})"
        keys = [*parent.primary_key] or [labels[0].name]
        group = ", ".join(f"p.{s.q(k)}" for k in dict.fromkeys([*keys, *(c.name for c in labels)]))
        join = (
            f"FROM {s.q(parent.name)} AS p\n"
            f"LEFT JOIN {s.q(child.name)} AS c ON c.{s.q(fk.columns[0])} = p.{s.q(fk.ref_columns[0])}"
        )
        counted = f"c.{s.q(child.primary_key[0])}" if len(child.primary_key) == 1 else f"c.{s.q(fk.columns[0])}"
        cols = _col(parent, *dict.fromkeys([*keys, *(c.name for c in labels)])) + _col(child, fk.columns[0])
        yield _Candidate(
            "join",
            f"How many {cn.plural} are there for {each}?",
            f"SELECT {group}, COUNT({counted}) AS {cn.count_alias}\n{join}\nGROUP BY {group}\n"
            f"ORDER BY {cn.count_alias} DESC, {group}",
            (parent.name, child.name), cols, tags=("aggregation",),
        )
        for measure in s.shuffled(s.measures(child))[:1]:
            alias = "total_" + _snake(words(measure.name))
            total = _rounded(s, "SUM", f"c.{s.q(measure.name)}", measure)
            yield _Candidate(
                "join",
                f"What do the {noun_plural(words(measure.name))} of the {cn.plural} add up to for {each}?",
                f"SELECT {group}, {total} AS {alias}\n{join}\nGROUP BY {group}\nORDER BY {group}",
                (parent.name, child.name), cols + _col(child, measure), tags=("aggregation",),
            )


def _gen_distinct(s: _Seeder) -> Iterator[_Candidate]:
    for table in s.shuffled(s.tables):
        names, t = _Names.of(table), s.q(table.name)
        for column in s.shuffled(s.categories(table)):
            c, plural = s.q(column.name), noun_plural(words(column.name))
            yield _Candidate(
                "distinct",
                f"Which {plural} appear among the {names.plural}?",
                f"SELECT DISTINCT {c}\nFROM {t}\nWHERE {c} IS NOT NULL\nORDER BY {c}",
                (table.name,), _col(table, column),
            )
            yield _Candidate(
                "distinct",
                f"How many different {plural} do the {names.plural} have?",
                f"SELECT COUNT(DISTINCT {c}) AS {_snake(words(column.name))}_count FROM {t}",
                (table.name,), _col(table, column),
            )


def _date_phrase(column: ColumnInfo) -> tuple[str, bool] | None:
    """``created at`` -> (``created``, transitive?); None when the name is not a participle."""
    parts = words(column.name).split(" ")
    if len(parts) < 2 or parts[-1] not in ("at", "on"):
        return None
    verb = parts[-2]
    if not (verb.endswith("ed") or verb in _PARTICIPLES) and not (len(parts) > 2 and parts[-2] in ("up",)):
        return None
    return " ".join(parts[:-1]), verb not in _INTRANSITIVE


def _gen_date_range(s: _Seeder) -> Iterator[_Candidate]:
    for table in s.shuffled(s.tables):
        names, t = _Names.of(table), s.q(table.name)
        for column in s.shuffled(s.dates(table)):
            span = s.year_span(table, column)
            if span is None:
                continue
            c, snake = s.q(column.name), _snake(words(re.sub(r"_?(?:at|on|At|On)$", "", column.name)))
            phrase = _date_phrase(column)
            stem = words(re.sub(r"_?(?:at|on|At|On)$", "", column.name))
            if phrase is not None:
                verb, transitive = phrase
                if transitive:
                    first = f"When was the first {names.singular} {verb}, and when was the last?"
                else:
                    *lead, last = verb.split(" ")
                    base = " ".join([*lead, _INTRANSITIVE[last]])
                    first = f"When did the first {names.singular} {base}, and when did the last?"
                per_year = f"How many {names.plural} {'were ' if transitive else ''}{verb} in each year?"
            else:
                what = noun_plural(stem if stem.endswith(("date", "time")) else f"{stem} time")
                of = "" if names.singular.lower() in what.lower() else f" of the {names.plural}"
                first = f"What are the earliest and latest {what}{of}?"
                per_year = f"How many {names.plural} are there for each year of their {noun_singular(what)}?"
            yield _Candidate(
                "date-range", first,
                f"SELECT MIN({c}) AS first_{snake}, MAX({c}) AS last_{snake}\nFROM {t}",
                (table.name,), _col(table, column),
            )
            yield _Candidate(
                "date-range", per_year,
                f"SELECT {s.year(c)} AS year, COUNT(*) AS {names.count_alias}\nFROM {t}\n"
                f"WHERE {c} IS NOT NULL\nGROUP BY {s.year(c)}\nORDER BY year",
                (table.name,), _col(table, column) + _counted(table), order_matters=True, tags=("aggregation",),
            )
            year = s.rng.randint(*span)
            if phrase is not None:
                verb, transitive = phrase
                question = f"How many {names.plural} {'were ' if transitive else ''}{verb} in {year}?"
            else:
                noun = noun_singular(what)
                question = f"How many {names.plural} have {article(noun)} {noun} in {year}?"
            yield _Candidate(
                "date-range", question,
                f"SELECT COUNT(*) AS {names.count_alias}\nFROM {t}\n"
                f"WHERE {c} >= '{year}-01-01' AND {c} < '{year + 1}-01-01'",
                (table.name,), _col(table, column) + _counted(table), tags=("filter",),
            )


def _lit(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _gen_filter(s: _Seeder) -> Iterator[_Candidate]:
    for table in s.shuffled(s.tables):
        names, t = _Names.of(table), s.q(table.name)
        for column in s.shuffled(s.categories(table)):
            values = s.values(column)
            if not values:
                continue
            value, c, w = s.rng.choice(values), s.q(column.name), words(column.name)
            yield _Candidate(
                "filter", f'How many {names.plural} have the {w} "{value}"?',
                f"SELECT COUNT(*) AS {names.count_alias}\nFROM {t}\nWHERE {c} = {_lit(value)}",
                (table.name,), _col(table, column) + _counted(table),
            )
            labels = [lab for lab in s.label(table) if lab.name != column.name]
            if labels and table.primary_key:
                shown = " and ".join(words(lab.name) for lab in labels)
                shown = noun_plural(shown) if len(labels) == 1 else shown
                select = ", ".join(s.q(k) for k in dict.fromkeys([*table.primary_key, *(lab.name for lab in labels)]))
                yield _Candidate(
                    "filter", f'List the {shown} of the {names.plural} whose {w} is "{value}".',
                    f"SELECT {select}\nFROM {t}\nWHERE {c} = {_lit(value)}\nORDER BY {', '.join(s.q(k) for k in table.primary_key)}",
                    (table.name,), _col(table, column, *table.primary_key, *labels),
                )
            for measure in s.shuffled(s.measures(table))[:1]:
                yield _Candidate(
                    "filter",
                    f'What is the average {words(measure.name)} of the {names.plural} whose {w} is "{value}"?',
                    f"SELECT {s.round2(f'AVG({s.q(measure.name)})')} AS average_{_snake(words(measure.name))}\n"
                    f"FROM {t}\nWHERE {c} = {_lit(value)}",
                    (table.name,), _col(table, column, measure), tags=("aggregation",),
                )
        for column in table.columns:
            w = words(column.name)
            if _kind_of(column) == "bool" and w.startswith("is "):
                yield _Candidate(
                    "filter", f"How many {names.plural} are {w[3:]}?",
                    f"SELECT COUNT(*) AS {names.count_alias}\nFROM {t}\nWHERE {s.q(column.name)}",
                    (table.name,), _col(table, column) + _counted(table),
                )


def _gen_aggregate(s: _Seeder) -> Iterator[_Candidate]:
    for table in s.shuffled(s.tables):
        names, t = _Names.of(table), s.q(table.name)
        for measure in s.shuffled(s.measures(table)):
            m, w, snake = s.q(measure.name), words(measure.name), _snake(words(measure.name))
            cols = _col(table, measure)
            yield _Candidate(
                "aggregate", f"What is the average {w} of the {names.plural}?",
                f"SELECT {s.round2(f'AVG({m})')} AS average_{snake}\nFROM {t}", (table.name,), cols, tags=("aggregation",),
            )
            yield _Candidate(
                "aggregate", f"What do the {noun_plural(w)} of all {names.plural} add up to?",
                f"SELECT {_rounded(s, 'SUM', m, measure)} AS total_{snake}\nFROM {t}", (table.name,), cols,
                tags=("aggregation",),
            )
            yield _Candidate(
                "aggregate", f"What are the smallest and the largest {w} among the {names.plural}?",
                f"SELECT MIN({m}) AS min_{snake}, MAX({m}) AS max_{snake}\nFROM {t}", (table.name,), cols,
                tags=("aggregation",),
            )


_GENERATORS: dict[str, Callable[[_Seeder], Iterator[_Candidate]]] = {
    "count": _gen_count,
    "top-n": _gen_top_n,
    "join": _gen_join,
    "distinct": _gen_distinct,
    "date-range": _gen_date_range,
    "filter": _gen_filter,
    "aggregate": _gen_aggregate,
}


def _round_robin(s: _Seeder) -> Iterator[_Candidate]:
    streams = [_GENERATORS[kind](s) for kind in KINDS]
    for batch in itertools.zip_longest(*streams):
        yield from (c for c in batch if c is not None)


def _usable(adapter: Adapter, sql: str) -> bool:
    try:
        result = adapter.execute(sql)
    except QueryError:
        return False
    return bool(result.rows) and not result.truncated and any(v is not None for row in result.rows for v in row)


def seed(
    datasource_name: str,
    registry: DatasourceRegistry,
    *,
    count: int = 50,
    seed: int = 0,
    role: str = "admin",
) -> list[EvalCase]:
    """Draft up to ``count`` cases about datasource ``datasource_name`` (fewer only if its
    schema offers fewer questions that run); each a draft with ``origin: seeded``, asked as
    ``role``. The same schema, data and ``seed`` give the same drafts."""
    if count < 0:
        raise ValueError(f"count must be >= 0 (got {count})")
    adapter = registry.get(datasource_name)
    name = adapter.name
    rng = random.Random(f"nl2sql-seed:{seed}:{name}")
    seeder = _Seeder(adapter, rng)
    prefix = "seed_" + re.sub(r"[^A-Za-z0-9_]+", "_", name)
    out: list[EvalCase] = []
    seen: set[str] = set()
    for cand in _round_robin(seeder):
        if len(out) >= count:
            break
        if cand.sql in seen or cand.question in seen:
            continue
        seen.update((cand.sql, cand.question))
        if not _usable(adapter, cand.sql):
            continue
        out.append(
            EvalCase(
                id=f"{prefix}_{len(out) + 1:03d}",
                question=cand.question,
                datasources=(name,),
                status=Status.DRAFT,
                origin=Origin.SEEDED,
                tags=tuple(dict.fromkeys(("seeded", cand.kind, *cand.tags))),
                outcome={role: Outcome.ALLOWED},
                tables=tuple(dict.fromkeys(cand.tables)),
                columns=tuple(dict.fromkeys(cand.columns)),
                order_matters=cand.order_matters,
                sql=cand.sql + "\n",
            )
        )
    return out


_draft_cases = seed  # ``run_seed`` has a parameter called ``seed``


def write_drafts(path: str | os.PathLike[str], cases: list[EvalCase], *, config: Config | None = None) -> None:
    """Write seeded drafts to ``path`` as a suite of their own (refusal rules: ``drafts.py``)."""
    sources = ", ".join(dict.fromkeys(ds for case in cases for ds in case.datasources)) or "a datasource"
    title = f"Drafts seeded from the schema of {sources} by `pytest-nl2sql eval seed` ({Path(path).name})."
    write_draft_suite(path, cases, title=title, config=config)


def run_seed(
    datasource_name: str,
    path: str | os.PathLike[str],
    config: Config,
    *,
    count: int = 50,
    seed: int = 0,
    echo: Callable[[str], None] = print,
) -> int:
    """The ``--nl2sql-seed`` / ``pytest-nl2sql eval seed`` entry point: seed drafts from one of the
    project's datasources into ``path``; print what was written (or why not); exit status."""
    if count < 1:  # writing no drafts would replace the file's drafts with none
        echo(f"nl2sql: --count must be at least 1 (got {count}); nothing was written")
        return 4
    with DatasourceRegistry.from_config(config) as registry:
        if datasource_name not in registry:
            echo(f"nl2sql: unknown datasource {datasource_name!r} (known: {', '.join(registry.names())})")
            return 1
        try:
            cases = _draft_cases(datasource_name, registry, count=count, seed=seed)
        except QueryError as exc:
            echo(f"nl2sql: cannot seed from {datasource_name!r}: {exc.message}")
            return 1
    try:
        write_drafts(path, cases, config=config)
    except (DraftTargetRefused, LockTimeout) as exc:
        echo(str(exc))
        return 1
    kinds = ", ".join(f"{k} {sum(1 for c in cases if c.tags[1] == k)}" for k in KINDS)
    echo(f"{path}: wrote {len(cases)} drafts from {datasource_name} ({kinds}); promote them as its header says")
    if len(cases) < count:
        echo(f"{path}: only {len(cases)} of the {count} drafts asked for: the schema offers no more questions that run")
    from pytest_nl2sql.upkeep.plans import plan_drafts

    plan_drafts(path, config, echo)  # the last line: how many drafts got a verified plan
    return 0

