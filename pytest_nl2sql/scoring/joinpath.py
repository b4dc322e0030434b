"""Gold findings where the difference is a reading of the question, not a mistake of the engine:
which of two foreign keys to the same parent to follow (``fk_choice``), which of two columns
holds the value it names (``value_column_choice``), whether two conditions the question
gives as two ("... and also cars that ...") must hold on one row (``one_row_or_two``), and
whether "the most diverse languages" counts rows or distinct values (``distinct_asked``).

A child table often points at one parent twice: ``Students.current_address_id`` and
``permanent_address_id`` both at ``Addresses``, ``Friend.student_id`` and ``friend_id`` both at
``Highschooler``. "The address with the most students" does not say which; the real data may
give the same rows either way, and a neighbour that draws the two keys apart then tells the
gold's reading from the answer's -- a choice the question leaves open, not a mistake of the
engine. ``fk_choice`` calls it so only when all of these hold:

* the answer reads one key of such a pair (``a``) and never the other, the gold reads the other
  (``b``) and never ``a``;
* the answer with ``a`` replaced by ``b`` gives the gold's rows on the neighbour (so the choice
  of key is the whole difference);
* the question names neither key: no word that tells the two column names apart (``current``,
  ``permanent``; the words both share and the table's own name do not count) is in it;
* on the real database the gold gives rows that say something (not none, not one row of NULLs
  or zeros): an answer that only agrees with an empty gold there is judged as before.

A question that names the key ("the current address") keeps the flag; so does an answer that
follows one key where the gold follows both (``SourceAirport OR DestAirport``).

"The average edispl for all volvos": the real data holds 'volvo' as a maker's name and as a
model's name, and the question says neither "maker" nor "model". A gold that picks
``car_names.Model = 'volvo'`` and an answer that picks ``car_makers.Maker = 'volvo'`` agree on
the real data; a neighbour that draws the two apart judges the question's reading, not the
engine. ``value_column_choice`` calls it so only when the gold and the answer pick the same text
the question names, in different columns, each picking only in its own; the real data holds
the text in both columns; the question names neither column (as above); and the real gold says
something.

"The years in which there were cars that weighed less than 4000 and also cars that weighed more
than 3000": an answer ``SELECT year ... WHERE weight < 4000 INTERSECT SELECT year ... WHERE
weight > 3000`` reads two sets of cars, a gold ``WHERE weight BETWEEN 3000 AND 4000`` one car
meeting both. ``one_row_or_two`` calls it a gold finding only when the question says "also" or
"both", the answer intersects two selections of one table that differ only in their
conditions, and the answer with its two conditions put on one row (``AND``) gives the gold's
rows on the neighbour -- so that reading is the whole difference.

"Which continent has the most diverse languages?": an answer that counts ``COUNT(DISTINCT
language)`` where the gold counts rows reads "diverse" as the question says. ``distinct_asked``
calls it a gold finding only when the gold counts no distinct values, the question says
"different", "distinct", "diverse", "unique" or "various" or names the column counted, and the
answer with each ``COUNT(DISTINCT x)`` made ``COUNT(*)`` gives the gold's rows on the
neighbour. The other way round -- the gold counts distinct values, the answer rows ("different
names" without ``DISTINCT``) -- stays a flag.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from sqlglot import exp

from pytest_nl2sql.scoring.presuppose import Execute, _count, _picks

__all__ = ["distinct_asked", "fk_choice", "fk_pairs", "one_row_or_two", "value_column_choice"]

#: (child table, key a, key b, parent table), names in lowercase.
Pair = tuple[str, str, str, str]


def fk_pairs(database: Any) -> list[Pair]:
    """The pairs of foreign-key columns of one table that point at the same parent, read from a
    SQLite neighbour file (other neighbours: none)."""
    if not isinstance(database, Path):
        return []
    try:
        con = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    except sqlite3.Error:
        return []
    try:
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        out: list[Pair] = []
        for t in tables:
            keys: dict[str, list[str]] = {}
            for row in con.execute(f"PRAGMA foreign_key_list(\"{t.replace(chr(34), chr(34) * 2)}\")"):
                keys.setdefault(str(row[2]).lower(), []).append(str(row[3]).lower())
            for parent, cols in keys.items():
                cols = sorted(set(cols))
                out += [(t.lower(), a, b, parent) for a in cols for b in cols if a != b]
        return out
    except sqlite3.Error:
        return []
    finally:
        con.close()


def _words(name: str) -> set[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return {_stem(w) for w in re.split(r"[\W_]+", spaced.lower()) if w}


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _reads(tree: exp.Expression, table: str, column: str) -> list[exp.Column]:
    """The column references of ``tree`` that may be ``table.column``."""
    aliases = {}
    tables = set()
    for t in tree.find_all(exp.Table):
        tables.add(t.name.lower())
        aliases[(t.alias_or_name or t.name).lower()] = t.name.lower()
    found = []
    for c in tree.find_all(exp.Column):
        if c.name.lower() != column:
            continue
        qualifier = c.table.lower()
        if (qualifier and aliases.get(qualifier, qualifier) == table) or (not qualifier and table in tables):
            found.append(c)
    return found


def _says_something(rows: Iterable[tuple]) -> bool:
    rows = list(rows)
    return bool(rows) and not all(v is None or v == 0 for r in rows for v in r)


def fk_choice(
    question: str, gold_tree: exp.Expression | None, answer_tree: exp.Expression | None, pairs: Sequence[Pair],
    here: Callable[[str], tuple], gold: tuple, real_gold: tuple | None, same: Callable[[tuple, tuple], bool],
    dialect: str = "sqlite",
) -> str | None:
    """Why the difference is the question's open choice between two foreign keys (module
    docstring), or None. ``gold`` is the gold's result on the neighbour, ``real_gold`` on the
    real database; ``here`` runs a query on the neighbour."""
    if not pairs or gold_tree is None or answer_tree is None or real_gold is None or not _says_something(real_gold[1]):
        return None
    asked = {_stem(w) for w in re.findall(r"\w+", question.lower())}
    for table, a, b, parent in pairs:
        if not _reads(answer_tree, table, a) or _reads(answer_tree, table, b):
            continue
        if not _reads(gold_tree, table, b) or _reads(gold_tree, table, a):
            continue
        own = _words(table) | {"id"}
        wa, wb = _words(a) - own, _words(b) - own
        if (wa ^ wb) & asked:
            continue  # the question names one of them
        swapped = answer_tree.copy()
        for c in _reads(swapped, table, a):
            c.set("this", exp.to_identifier(b, quoted=c.this.quoted if isinstance(c.this, exp.Identifier) else False))
        try:
            if not same(gold, here(swapped.sql(dialect=dialect))):
                continue
        except Exception:  # noqa: BLE001 -- the swapped answer does not run: not explained
            continue
        return (f"the gold follows {table}.{b} to {parent}, the answer {table}.{a}, and the question does not say "
                "which: an ambiguous join path, the only difference here")
    return None


def value_column_choice(
    question: str, gold_tree: exp.Expression | None, answer_tree: exp.Expression | None, real: Execute | None,
    real_gold: tuple | None, dialect: str = "sqlite",
) -> str | None:
    """Why the difference is the question's open choice of the column that holds a value it
    names (module docstring), or None. ``real`` runs a query on the real database."""
    if gold_tree is None or answer_tree is None or real is None or real_gold is None or not _says_something(real_gold[1]):
        return None
    asked = [_stem(w) for w in re.findall(r"\w+", question.lower())]
    gold_picks = [p for _, p in _picks(gold_tree)]
    answer_picks = [p for _, p in _picks(answer_tree)]
    for gtables, gcol, text in gold_picks:
        folded = text.casefold()
        named = [_stem(w) for w in re.findall(r"\w+", folded)]
        if not named or not any(asked[i:i + len(named)] == named for i in range(len(asked))):
            continue
        for atables, acol, atext in answer_picks:
            if atext.casefold() != folded or acol.lower() == gcol.lower():
                continue
            if any(c.lower() == acol.lower() and t.casefold() == folded for _, c, t in gold_picks):
                continue
            if any(c.lower() == gcol.lower() and t.casefold() == folded for _, c, t in answer_picks):
                continue
            if (_words(gcol) ^ _words(acol)) & set(asked):
                continue  # the question names one of the columns
            if (_count(real, gtables, gcol, text, dialect) or 0) <= 0 or (_count(real, atables, acol, text, dialect) or 0) <= 0:
                continue
            return (f"the real data holds {text!r}, which the question names, in {gcol} and in {acol}: the gold reads "
                    f"{gcol}, the answer {acol}, and the question does not say which")
    return None


def one_row_or_two(
    question: str, answer_tree: exp.Expression | None, here: Callable[[str], tuple], gold: tuple,
    same: Callable[[tuple, tuple], bool], dialect: str = "sqlite",
) -> str | None:
    """Why the difference is whether two conditions the question gives apart must hold on one
    row (module docstring), or None. ``gold`` is the gold's result on the neighbour."""
    if not isinstance(answer_tree, exp.Intersect) or not {"also", "both"} & set(re.findall(r"\w+", question.lower())):
        return None
    left, right = answer_tree.this, answer_tree.expression
    if not (isinstance(left, exp.Select) and isinstance(right, exp.Select)):
        return None
    lw, rw = left.args.get("where"), right.args.get("where")
    if lw is None or rw is None:
        return None
    bare_left, bare_right = left.copy(), right.copy()
    bare_left.set("where", None)
    bare_right.set("where", None)
    if bare_left.sql() != bare_right.sql() or len(list(left.find_all(exp.Table))) != 1:
        return None
    both = bare_left.where(exp.and_(lw.this.copy(), rw.this.copy()))
    try:
        if not same(gold, here(both.sql(dialect=dialect))):
            return None
    except Exception:  # noqa: BLE001 -- not told
        return None
    return ("the question gives two conditions apart ('also'), and the answer lets different rows meet each; "
            "the gold asks one row to meet both, and that is the whole difference here")


#: Words of a question that ask for distinct values.
DISTINCT_WORDS = frozenset({"different", "distinct", "diverse", "unique", "various"})


def _distinct_counts(tree: exp.Expression) -> list[exp.Count]:
    return [c for c in tree.find_all(exp.Count) if isinstance(c.this, exp.Distinct)]


def distinct_asked(
    question: str, gold_tree: exp.Expression | None, answer_tree: exp.Expression | None, here: Callable[[str], tuple],
    gold: tuple, same: Callable[[tuple, tuple], bool], dialect: str = "sqlite",
) -> str | None:
    """Why the difference is the question's "distinct" the answer counts and the gold does not
    (module docstring), or None. ``gold`` is the gold's result on the neighbour."""
    if gold_tree is None or answer_tree is None or _distinct_counts(gold_tree):
        return None
    counts = _distinct_counts(answer_tree)
    if not counts:
        return None
    asked = {_stem(w) for w in re.findall(r"\w+", question.lower())}
    counted = {w for c in counts for col in c.find_all(exp.Column) for w in _words(col.name)} - {"id"}
    if not (asked & DISTINCT_WORDS or asked & counted):
        return None
    rows = answer_tree.copy()
    for c in _distinct_counts(rows):
        c.replace(exp.Count(this=exp.Star()))
    try:
        if not same(gold, here(rows.sql(dialect=dialect))):
            return None
    except Exception:  # noqa: BLE001 -- not told
        return None
    return ("the answer counts distinct values, as the question asks, where the gold counts rows; "
            "that is the whole difference here")
