"""The rule that decides whether an answer's rows equal the gold rows (``result_match``).

The default rule (docs/scoring.md defends it and states the value model):

* **Values** are put in one comparison form on both sides first (``values.canonical_value``):
  NULL, numbers, text (NFC), dates/times (as ISO text; aware -> UTC), bytes (hex text), bools
  (1 / 0). So ``Decimal('12.34')`` equals ``12.34`` and ``date(2009, 1, 1)`` equals
  ``'2009-01-01'`` whether or not the engine normalized its rows.
* **Numbers**: exact numbers (int, Decimal, bool) compare exactly. In a column that holds a
  float on either side, numbers must be within the tolerance,
  ``|a - b| <= max(abs_tol, rel_tol * max(|a|, |b|))``; the default (``rel_tol`` 1e-9,
  ``abs_tol`` 1e-12) absorbs floating-point noise only. NaN equals NaN.
* **Rows** are compared as a multiset (duplicates count) unless the case says
  ``order_matters: true``, then as a list. Rows equal value by value pair first; the rest are
  grouped by their exact parts (text, dates, NULL, exact numbers) and then by a maximum bipartite matching over the
  rows whose numbers are within the tolerance -- never by sort order alone.
* **Columns** are matched by position after the best permutation: column names are ignored
  (``COUNT(*)`` and ``n`` are the same answer), the same number of columns is required, and
  the columns of the answer may come in any order (Spider's rule). The permutation is found
  as a bipartite matching (column signatures, a Hall check, then a backtracking search with
  pruning by the projected rows), with a hard bound.
* A truncated answer never matches.

Each part can be changed per suite (top-level ``match:``) or per case (``match:``):
``column_names: require`` (names must match, case-insensitively, and decide the alignment),
``duplicates: ignore`` (compare as sets), ``extra_columns: allow`` (the answer may carry
more columns than the gold), ``abs_tol`` / ``rel_tol`` (the float tolerance),
``float_tolerance: t`` (the older spelling: ``rel_tol = abs_tol = t``; ``0`` is exact), and
``column_tolerance: {column: {abs_tol: .., rel_tol: ..}}`` (per gold column).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from operator import ne
from typing import Any

import attrs

from pytest_nl2sql.safetext import shown
from pytest_nl2sql.scoring.alignment import Column, Search, compatible, refined, row_contents
from pytest_nl2sql.scoring.pairing import Verdict, compare, max_matching
from pytest_nl2sql.scoring.rule import (
    DEFAULT_ABS_TOL,
    DEFAULT_REL_TOL,
    DEFAULT_TOLERANCE,
    MatchRule,
    Tolerance,
)
from pytest_nl2sql.suitefile.values import NAN, canonical_value

__all__ = [
    "DEFAULT_ABS_TOL",
    "DEFAULT_REL_TOL",
    "DEFAULT_TOLERANCE",
    "MatchResult",
    "MatchRule",
    "RowShapeError",
    "Tolerance",
    "answer_rows",
    "match_rows",
    "rows_to_tuples",
]
_DEFAULT_RULE = MatchRule()


@attrs.frozen
class MatchResult:
    matched: bool
    reason: str = ""
    missing: tuple[tuple, ...] = ()
    unexpected: tuple[tuple, ...] = ()
    columns: tuple[int, ...] | None = None  # answer column for each gold column
    note: str = ""  # why no arrangement of the columns fits, when that is known


class RowShapeError(ValueError):
    """The answer's rows are not rows (a bare value, a text, rows of different widths)."""


def rows_to_tuples(rows: Sequence[Any]) -> tuple[tuple[str, ...], list[tuple]]:
    """Gold rows (``{column: value}`` maps, or sequences) as a column tuple and row tuples."""
    if not rows:
        return (), []
    if isinstance(rows[0], Mapping):
        columns = tuple(rows[0])
        return columns, [tuple(r.get(c) for c in columns) for r in rows]
    return answer_rows(rows, ())


def _describe(value: Any) -> str:
    text = shown(value)
    return (text[:60] + "...") if len(text) > 60 else text


def answer_rows(rows: Any, columns: Sequence[str] | None = ()) -> tuple[tuple[str, ...], list[tuple]]:
    """An engine's rows as (column names, row tuples), or :class:`RowShapeError`.

    Accepted: any iterable of rows, each row a sequence of values (tuple, list, a DB-API
    row) or a mapping ``{column: value}`` (read in the order of ``columns`` when the engine
    gave them, else in the first row's key order). Not accepted: a text or a mapping as the
    whole result, a bare value as a row, rows of different widths. Column names that do not
    fit the rows' width are dropped (they only matter for ``column_names: require``)."""
    cols = tuple(str(c) for c in (columns or ()))
    if rows is None:
        return cols, []
    if isinstance(rows, (str, bytes, bytearray, Mapping)) or not isinstance(rows, Iterable):
        raise RowShapeError(f"the answer's rows are {type(rows).__name__} {_describe(rows)}, not a list of rows")
    out: list[tuple] = []
    keys: tuple | None = None
    by_names = False
    width: int | None = None
    for n, row in enumerate(rows, 1):
        if type(row) is tuple and keys is None:
            t = row
        elif isinstance(row, Mapping):
            if keys is None:
                if out:
                    raise RowShapeError(f"row {n} is a mapping, row 1 is a sequence (every row has one shape)")
                by_names = bool(cols) and all(c in row for c in cols)
                keys = cols if by_names else tuple(row)
                cols = tuple(str(k) for k in keys)
            try:
                t = tuple(row[k] for k in keys)
            except KeyError as exc:
                raise RowShapeError(f"row {n} has no column {exc.args[0]!r} (row 1 has {list(keys)})") from None
            if not by_names and len(row) != len(keys):
                raise RowShapeError(f"row {n} has columns {list(row)}, row 1 has {list(keys)}")
        else:
            if keys is not None:
                raise RowShapeError(f"row {n} is not a mapping, row 1 is (every row has one shape)")
            bare = isinstance(row, (str, bytes, bytearray))
            if not bare:
                try:
                    t = tuple(row)
                except TypeError:
                    bare = True
            if bare:
                raise RowShapeError(
                    f"row {n} is a bare value {_describe(row)} ({type(row).__name__}), not a row: "
                    "give each row as a tuple or list of values"
                )
        if width is None:
            width = len(t)
        elif len(t) != width:
            raise RowShapeError(f"row {n} has {len(t)} values, row 1 has {width} (every row has the same columns)")
        out.append(t)
    if width is not None and cols and len(cols) != width:
        cols = ()
    return cols, out


_NONE = type(None)
_SKIP_NUMS = {int, float, _NONE}


def _plain_text(s: str) -> bool:
    """Text the comparison form leaves as it is (ASCII, not a date/time, UUID or JSON text)."""
    return s.isascii() and not (
        (s[:1].isdigit() and (s[2:3] == ":" or s[4:5] == "-")) or s[8:9] == "-" or s[:1] in "[{"
    )


def _canonical_columns(rows: list[tuple], width: int) -> list[list[Any]]:
    """The rows' columns in the comparison form, a column at a time (most columns hold one
    type, and ints, plain floats and plain ASCII text are already in the form)."""
    if not rows:
        return [[] for _ in range(width)]
    cols = [list(c) for c in zip(*rows, strict=True)]
    for j, col in enumerate(cols):
        types = set(map(type, col))
        if types <= _SKIP_NUMS:
            if float in types and any(map(ne, col, col)):  # a NaN (v != v), found in C
                cols[j] = [NAN if v != v else v for v in col]
            continue
        if types <= {str, _NONE} and all(v is None or _plain_text(v) for v in col):
            continue
        cols[j] = list(map(canonical_value, col))
    return cols


_BYTES = (bytes, bytearray, memoryview)


def _holds_bytes(rows: list[tuple]) -> bool:
    """Some cell of the first row holds bytes (a bytea column)."""
    return bool(rows) and any(isinstance(v, _BYTES) for v in rows[0])


def _hex_column(col: list[Any]) -> list[Any]:
    """Beside bytes, a text column that spells bytes in hex (``'01FF'``, PostgreSQL's
    ``'\\x01ff'``) is read as the lowercase hex the bytes compare as."""
    out = []
    for v in col:
        if v is None:
            out.append(v)
            continue
        if type(v) is not str:
            return col
        h = v[2:] if v[:2] in ("\\x", "\\X") else v
        if len(h) % 2 or not all(c in "0123456789abcdefABCDEF" for c in h):
            return col
        out.append(h.lower())
    return out


def _widths(rows: list[tuple], who: str) -> int | str:
    if not rows:
        return 0
    w = len(rows[0])
    if len(set(map(len, rows))) == 1:
        return w
    for n, r in enumerate(rows, 1):
        if len(r) != w:
            return f"{who} row {n} has {len(r)} values, row 1 has {w}"
    return w


def _raw_equal(gold: Sequence[tuple], pred: Sequence[tuple], rule: MatchRule) -> bool:
    """The fast path: equal as Python values (then equal under the value model too, which is
    coarser); hash every row once, build counters only when a row repeats."""
    try:
        if rule.order_matters:
            return gold == pred
        if rule.duplicates == "ignore":
            return set(gold) == set(pred)
        if len(gold) != len(pred):
            return False
        if gold == pred:
            return True
        seen = set(gold)
        if len(seen) == len(gold):
            # len(b) == len(a) == |set(a)| and every member of set(a) occurs in b: b is a permutation of a
            seen.difference_update(pred)
            return not seen
        return Counter(gold) == Counter(pred)
    except TypeError:  # an unhashable value (a list in a cell): the slow path canonicalizes it
        return False


def match_rows(
    gold_columns: Sequence[str],
    gold_rows: Sequence[Sequence[Any]],
    pred_columns: Sequence[str],
    pred_rows: Iterable[Sequence[Any]],
    rule: MatchRule | None = None,
    *,
    truncated: bool = False,
) -> MatchResult:
    """Do the answer's rows equal the gold rows under ``rule`` (the default rule if None)?"""
    rule = rule if rule is not None else _DEFAULT_RULE
    if truncated:
        return MatchResult(False, "the answer was truncated at the row limit (a cut result never matches)")
    gold_raw = gold_rows if isinstance(gold_rows, list) else list(gold_rows)
    pred_raw = pred_rows if isinstance(pred_rows, list) else list(pred_rows)
    # rows as maps, sqlite3.Row, named tuples or lists: read as row tuples (answer_rows' rules)
    try:
        if gold_raw and type(gold_raw[0]) is not tuple:
            gold_columns, gold_raw = _as_tuples(gold_raw, gold_columns)
        if pred_raw and type(pred_raw[0]) is not tuple:
            pred_columns, pred_raw = _as_tuples(pred_raw, pred_columns)
    except RowShapeError as exc:
        return MatchResult(False, f"the rows cannot be compared: {exc}")
    if not gold_raw and not pred_raw:
        return MatchResult(True)
    gold_cols, pred_cols = tuple(gold_columns or ()), tuple(pred_columns or ())
    gw = len(gold_raw[0]) if gold_raw else 0
    pw = len(pred_raw[0]) if pred_raw else 0
    n = len(gold_cols) if gold_cols else gw
    m = len(pred_cols) if pred_cols else pw
    if gold_raw and gw != n:
        gold_cols, n = (), gw
    if pred_raw and pw != m:
        pred_cols, m = (), pw
    if not gold_cols:
        gold_cols = tuple(f"_{i}" for i in range(n))
    if not pred_cols:
        pred_cols = tuple(f"_{j}" for j in range(m))
    if gold_raw and pred_raw and n != m and rule.extra_columns == "forbid":
        return MatchResult(False, f"the answer has {m} columns, the gold has {n}")
    if n > m:
        return MatchResult(False, f"the answer has {m} columns, the gold has {n}")
    identity = tuple(range(n))
    names_line_up = [c.lower() for c in gold_cols] == [c.lower() for c in pred_cols]
    if n == m and (rule.column_names == "ignore" or names_line_up) and _raw_equal(gold_raw, pred_raw, rule):
        return MatchResult(True, columns=identity)

    bad = [w for w in (_widths(gold_raw, "gold"), _widths(pred_raw, "answer")) if isinstance(w, str)]
    if bad:
        return MatchResult(False, bad[0])
    gold_by_col = _canonical_columns(gold_raw, n)
    pred_by_col = _canonical_columns(pred_raw, m)
    if _holds_bytes(gold_raw) or _holds_bytes(pred_raw):
        for by_col in (gold_by_col, pred_by_col):
            by_col[:] = [_hex_column(c) for c in by_col]
    gold = list(zip(*gold_by_col, strict=True)) if gold_raw else []
    pred = list(zip(*pred_by_col, strict=True)) if pred_raw else []
    tols = [rule.tolerance(c) for c in gold_cols]
    if rule.order_matters and n == m and gold != pred and _same_multiset(gold, pred):
        first = next(k for k, (g, p) in enumerate(zip(gold, pred, strict=True)) if g != p)
        return MatchResult(
            False,
            "the same rows in another order (order matters for this case): "
            f"row {first + 1} is {_shown_row(pred[first])}, the gold's row {first + 1} is {_shown_row(gold[first])}",
        )

    def size_reason() -> str:
        if len(gold) != len(pred):
            return f"{len(pred)} rows, the gold has {len(gold)}"
        if rule.order_matters:
            return "rows differ or come in another order (order matters for this case)"
        return "rows differ"

    def project(align: tuple[int, ...]) -> list[tuple]:
        return pred if align == tuple(range(m)) else [tuple(r[j] for j in align) for r in pred]

    if not gold or not pred:
        align = identity if n == m else None
        return MatchResult(False, size_reason(), tuple(gold), tuple(project(align) if align else pred))

    lower = [c.lower() for c in pred_cols]
    if rule.column_order == "strict" and rule.column_names != "require":
        # nl2sql-engine's rule: the answer's columns in the gold's order (with extra_columns:
        # allow, the gold's columns first); compared by position only, so polynomial
        v = compare(gold, project(identity), rule, tols)
        if v.ok:
            return MatchResult(True, columns=identity)
        note = ""
        if n == m and not rule.order_matters:
            def contents(rows: list[tuple]) -> Counter:
                return Counter(frozenset(Counter(r).items()) for r in rows)

            same = _hashable(gold, pred) and contents(gold) == contents(pred)
            if same:
                note = " (the same values in another column order: column_order is strict for this case)"
        return MatchResult(False, size_reason() + v.note + note, tuple(v.missing), tuple(v.unexpected), columns=identity)
    if rule.column_names == "require":
        try:
            align = tuple(lower.index(c.lower()) for c in gold_cols)
        except ValueError:
            return MatchResult(False, f"no column of the answer {list(pred_cols)} matches the gold columns {list(gold_cols)} by name")
        v = compare(gold, project(align), rule, tols)
        if v.ok:
            return MatchResult(True, columns=align)
        return MatchResult(False, size_reason() + v.note, tuple(v.missing), tuple(v.unexpected), columns=align)

    # the arrangements a reader expects first: by position, then by name
    by_name = tuple(lower.index(c.lower()) if c.lower() in lower else -1 for c in gold_cols)
    preferred = [a for a in (identity if n == m else None, by_name) if a is not None and -1 not in a and len(set(a)) == n]
    tried: dict[tuple[int, ...], Verdict] = {}

    gcols: list[Column] = []
    pcols: list[Column] = []

    def failed(reason: str, verdict: Verdict | None = None, note: str = "") -> MatchResult:
        """A mismatch, with the rows that differ under the arrangement a reader expects."""
        if verdict is None and preferred:
            align = preferred[0]
            floats = [gcols[i].has_float or pcols[j].has_float for i, j in enumerate(align)] if gcols else None
            verdict = tried.get(align) or compare(gold, project(align), rule, tols, floats)
        if verdict is None:
            return MatchResult(False, reason, note=note)
        return MatchResult(False, reason + verdict.note, tuple(verdict.missing), tuple(verdict.unexpected), note=note)

    if len(gold) != len(pred) and (rule.order_matters or rule.duplicates == "count"):
        return failed(size_reason())
    gcols[:] = [Column(c) for c in gold_by_col]
    pcols[:] = [Column(c) for c in pred_by_col]
    compat = [[compatible(gcols[i], pcols[j], rule, tols[i]) for j in range(m)] for i in range(n)]
    if n == m and not rule.order_matters and any(sum(row) > 1 for row in compat):
        # columns alike by their values alone: refine by the rows they stand in. A row's
        # multiset of values does not depend on the column order, so (a) the two sides must
        # hold the same multiset of row contents, and (b) a column must hold its values in
        # rows of the same contents as the gold column it answers
        loose = any(c.has_float for c in gcols) or any(c.has_float for c in pcols)
        rkg, rkp = row_contents(gold, loose), row_contents(pred, loose)
        same = set(rkg) == set(rkp) if rule.duplicates == "ignore" else Counter(rkg) == Counter(rkp)
        if not same:
            return failed(size_reason(), note="no arrangement of the answer's columns gives the gold rows: they hold other values")
        for i in range(n):
            for j in range(m):
                if compat[i][j] and sum(compat[i]) > 1:
                    compat[i][j] = refined(gcols[i], pcols[j], rkg, rkp, rule)
    for align in preferred:
        if align not in tried and all(compat[i][j] for i, j in enumerate(align)):
            floats = [gcols[i].has_float or pcols[j].has_float for i, j in enumerate(align)]
            v = tried[align] = compare(gold, project(align), rule, tols, floats)
            if v.ok:
                return MatchResult(True, columns=align)
    size, _, _ = max_matching([[j for j in range(m) if compat[i][j]] for i in range(n)], m)
    if size < n:
        if n == 1:
            return failed(size_reason())
        lonely = [gold_cols[i] for i in range(n) if not any(compat[i])]
        if lonely:
            why = f"no column of the answer holds the values of the gold column{'s' if len(lonely) > 1 else ''} {lonely}"
        else:
            why = f"the answer's columns {list(pred_cols)} cannot be arranged to hold the gold columns' values {list(gold_cols)}"
        return failed(size_reason(), note=why)
    prefer = [[i] if i < m else [] for i in range(n)]
    for i, j in enumerate(by_name):
        if j >= 0:
            prefer[i].insert(0, j)
    search = Search(gold, pred, gcols, pcols, compat, rule, tols, prefer)
    found = search.run()
    if found is not None:
        return MatchResult(True, columns=found)
    fallback = search.first_failure[1] if search.first_failure and not preferred else None
    if search.gave_up:
        return failed(
            size_reason() + f" (the column-arrangement search stopped at its bound after {search.leaves} full"
            " comparisons and no arrangement so far matches)",
            fallback,
        )
    return failed(size_reason(), fallback)


def _as_tuples(rows: list, columns: Sequence[str]) -> tuple[Sequence[str], list[tuple]]:
    cols, out = answer_rows(rows, columns)
    return (cols or tuple(columns or ())), out


def _hashable(*sides: list[tuple]) -> bool:
    try:
        for side in sides:
            for row in side:
                hash(row)
    except TypeError:
        return False
    return True


def _same_multiset(gold: list[tuple], pred: list[tuple]) -> bool:
    """The same rows, exactly, as multisets (only an order differs)."""
    try:
        return Counter(gold) == Counter(pred)
    except TypeError:  # an unhashable canonical value: do not guess
        return False


def _shown_row(row: tuple) -> str:
    return ", ".join(shown(v) for v in row)
