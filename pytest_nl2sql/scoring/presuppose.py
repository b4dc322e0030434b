"""Does a neighbour break what the question takes for granted on the real data?

A question says "the student who has a cat", "Kyle's friends", "the lowest version number and
its template": it presupposes one such student, one Kyle, some template. The real database
keeps that presupposition; a neighbour may not (two Kyles, an empty table), and then the gold
and a right answer can differ only by how each reads a question that has no single answer
there. Such a neighbour does not judge the answer (docs/scoring.md, "Who judges"):

* *a tie at the gold's MIN / MAX*: the gold reads other columns beside ``MIN(x)`` or ``MAX(x)``
  without ``GROUP BY`` (SQLite takes them from one row with the extreme value) and several rows
  share that value -- the same ambiguity as a tie at ``ORDER BY ... LIMIT`` (``ties``);
* *nothing to aggregate*: one side gives one row of NULLs (an aggregate over no rows) where
  the other gives no row;
* *one of several*: the answer keeps one row by its own ``LIMIT`` (the real data has one) and
  that row is one of the gold's rows here;
* *a name picked twice*: the gold picks rows by a text (``name = 'Kyle'``) that one real row
  holds, and several rows of the neighbour hold it;
* *a key that is not one here*: the answer picks rows by ``column = (SELECT ...)`` over a
  column unique in the real data ("the charge type" of the dearest charge), and the column
  repeats in the neighbour.

And one gold finding (``question_value_left_out``): the answer picks rows by a text the
question names and the real data holds, which the gold never uses ("the youngest dog", a gold
with no ``pettype = 'dog'``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from sqlglot import exp

__all__ = ["picked_texts", "presupposition", "question_value_left_out", "tie_at_extreme"]

#: ``execute(sql)`` -> (columns, rows); raises on a failed query.
Execute = Callable[[str], tuple[Sequence[str], Sequence[tuple]]]


def tie_at_extreme(tree: exp.Expression | None, dialect: str, execute: Execute) -> bool:
    """Whether ``tree`` reads bare columns beside its one ``MIN(x)`` / ``MAX(x)`` without
    ``GROUP BY`` and, on the data ``execute`` runs on, two rows share the extreme ``x``."""
    if not isinstance(tree, exp.Select) or tree.args.get("group") or tree.args.get("limit"):
        return False
    extremes = [e for e in tree.expressions if isinstance(e.unalias(), (exp.Min, exp.Max))]
    bare = [e for e in tree.expressions if not e.unalias().find(exp.AggFunc)]
    if len(extremes) != 1 or not bare:
        return False
    agg = extremes[0].unalias()
    target = agg.this
    if target is None or target.find(exp.AggFunc):
        return False
    probe = tree.copy()
    probe.set("expressions", [target.copy()])
    probe.set("order", None)
    probe = probe.where(exp.Not(this=exp.Is(this=target.copy(), expression=exp.Null())), copy=False)
    probe = probe.order_by(exp.Ordered(this=target.copy(), desc=isinstance(agg, exp.Max)), copy=False).limit(2, copy=False)
    try:
        _, rows = execute(probe.sql(dialect=dialect))
    except Exception:
        return False
    return len(rows) == 2 and tuple(rows[0]) == tuple(rows[1])


def picked_texts(tree: exp.Expression | None) -> list[tuple[list[str], str, str]]:
    """``(tables it may be in, column, text)`` for each ``column = 'text'`` in the gold."""
    if tree is None:
        return []
    return [found for _eq, found in _picks(tree)]


def _picks(tree: exp.Expression) -> list[tuple[exp.EQ, tuple[list[str], str, str]]]:
    """Each ``column = 'text'`` condition of ``tree``, with what ``picked_texts`` says of it."""
    aliases = _aliases(tree)
    found = []
    for eq in tree.find_all(exp.EQ):
        col, lit = eq.this, eq.expression
        if isinstance(lit, exp.Column) and isinstance(col, exp.Literal):
            col, lit = lit, col
        if _quoted_text(col):  # SQLite reads "Kyle" as the text 'Kyle' when no column has that name
            col, lit = lit, col
        if isinstance(lit, exp.Column) and _quoted_text(lit):
            lit = exp.Literal.string(lit.name)
        if isinstance(col, exp.Column) and isinstance(lit, exp.Literal) and lit.is_string:
            tables = [aliases[col.table.lower()]] if col.table and col.table.lower() in aliases else sorted(set(aliases.values()))
            found.append((eq, (tables, col.name, lit.this)))
    return found


def _aliases(tree: exp.Expression) -> dict[str, str]:
    aliases: dict[str, str] = {}
    for t in tree.find_all(exp.Table):
        aliases[(t.alias_or_name or t.name).lower()] = t.name
        aliases[t.name.lower()] = t.name
    return aliases


def _quoted_text(e: exp.Expression) -> bool:
    return isinstance(e, exp.Column) and not e.table and isinstance(e.this, exp.Identifier) and e.this.quoted


def _count(execute: Execute, tables: Sequence[str], column: str, text: str, dialect: str) -> int | None:
    for t in tables:
        sql = exp.select(exp.Count(this=exp.Star())).from_(exp.to_table(t, quoted=True)).where(
            exp.EQ(this=exp.column(column, quoted=True), expression=exp.Literal.string(text))
        ).sql(dialect=dialect)
        try:
            return int(execute(sql)[1][0][0])
        except Exception:  # noqa: BLE001 -- the column is not in this table: try the next
            continue
    return None


def _picked_by_subquery(tree: exp.Expression | None) -> list[tuple[list[str], str]]:
    """``(tables it may be in, column)`` for each ``column = (SELECT ...)`` in ``tree``."""
    if tree is None:
        return []
    aliases = _aliases(tree)
    found = []
    for eq in tree.find_all(exp.EQ):
        col, sub = eq.this, eq.expression
        if isinstance(col, exp.Subquery):
            col, sub = sub, col
        if isinstance(col, exp.Column) and isinstance(sub, exp.Subquery):
            found.append(([aliases[col.table.lower()]] if col.table and col.table.lower() in aliases
                          else sorted(set(aliases.values())), col.name))
    return found


def _repeats(execute: Execute, tables: Sequence[str], column: str, dialect: str) -> int | None:
    """How many values of ``column`` repeat (its count less its distinct count); None: unknown.
    A table of fewer than two values says nothing (None)."""
    for t in tables:
        c = exp.column(column, quoted=True)
        sql = exp.select(exp.Count(this=c.copy()), exp.Count(this=exp.Distinct(expressions=[c.copy()]))).from_(
            exp.to_table(t, quoted=True)).sql(dialect=dialect)
        try:
            n, distinct = execute(sql)[1][0]
        except Exception:  # noqa: BLE001 -- the column is not in this table: try the next
            continue
        return None if n < 2 else int(n) - int(distinct)
    return None


def _nothing(one: Sequence[tuple], other: Sequence[tuple]) -> bool:
    return len(one) == 1 and all(v is None for v in one[0]) and not other


def _limit(tree: exp.Expression | None) -> bool:
    return tree is not None and isinstance(tree.args.get("limit"), exp.Limit)


def presupposition(
    gold_tree: exp.Expression | None,
    answer_tree: exp.Expression | None,
    gold: tuple[Sequence[str], Sequence[tuple]],
    answer: tuple[Sequence[str], Sequence[tuple]] | None,
    same: Callable[[tuple, tuple], bool],
    dialect: str = "sqlite",
    here: Execute | None = None,
    real: Execute | None = None,
) -> str | None:
    """Why the neighbour breaks a presupposition the real data keeps (so it does not judge),
    or None. ``gold`` and ``answer`` are both results there (``answer`` None: it failed);
    ``same(gold result, answer result)`` is the match rule; ``here`` and ``real`` run a query on
    the neighbour and on the real database (for picked texts; without them, not checked)."""
    gcols, grows = gold
    if here is not None and tie_at_extreme(gold_tree, dialect, here):
        return "several rows share the gold's MIN / MAX, and the gold takes its other columns from one of them"
    if answer is None:
        return None
    acols, arows = answer
    if _nothing(grows, arows) or _nothing(arows, grows):
        return "one side aggregates over no rows here (one row of NULLs), where the other gives none"
    if (_limit(answer_tree) and not _limit(gold_tree) and len(arows) == 1 < len(grows)
            and any(same((gcols, [g]), (acols, arows)) for g in grows)):
        return f"the answer's LIMIT keeps one of the gold's {len(grows)} rows here, where the real data has one"
    if here is not None and real is not None:
        for tables, column, text in picked_texts(gold_tree):
            n_real = _count(real, tables, column, text, dialect)
            if n_real is not None and n_real <= 1:
                n_here = _count(here, tables, column, text, dialect)
                if n_here is not None and n_here > 1:
                    return f"the gold picks {column} = {text!r}, which one real row holds and {n_here} rows hold here"
        for tables, column in _picked_by_subquery(answer_tree):
            if _repeats(real, tables, column, dialect) == 0 and (_repeats(here, tables, column, dialect) or 0) > 0:
                return f"the answer picks rows by {column} = (a subquery), a column unique in the real data that repeats here"
    return None


def question_value_left_out(
    question: str, gold_tree: exp.Expression | None, answer_tree: exp.Expression | None,
    real: Execute | None, here: Execute, gold: tuple, same: Callable[[tuple, tuple], bool], dialect: str = "sqlite",
) -> str | None:
    """A gold finding: the answer picks rows by a text the question names (``pettype = 'dog'``
    for "the youngest dog") and the real data holds, the gold never uses it, and without that
    condition the answer gives the gold's rows on the neighbour (``here``; ``gold`` the gold's
    result there) -- the gold leaves out a condition the question states, and that condition
    is the whole difference, so it is the gold's to read."""
    if not question or real is None or gold_tree is None or answer_tree is None:
        return None
    gold_texts = {str(lit.this).casefold() for lit in gold_tree.find_all(exp.Literal) if lit.is_string}
    gold_texts |= {c.name.casefold() for c in gold_tree.find_all(exp.Column) if _quoted_text(c)}
    words = re.findall(r"\w+", question.casefold())
    for eq, (tables, column, text) in _picks(answer_tree):
        folded = text.casefold()
        if folded in gold_texts or not folded.strip():
            continue
        named = folded.split()
        if not any(words[i:i + len(named)] == named for i in range(len(words))):
            continue
        if (_count(real, tables, column, text, dialect) or 0) <= 0:
            continue
        without = answer_tree.copy()
        for node in without.find_all(exp.EQ):
            if node == eq:
                node.replace(exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(1)))
                break
        try:
            if not same(gold, here(without.sql(dialect=dialect))):
                continue
        except Exception:  # noqa: BLE001 -- the answer without it does not run: not explained
            continue
        return f"the gold never uses {text!r}, which the question names: the answer's {column} = {text!r} is the whole difference"
    return None
