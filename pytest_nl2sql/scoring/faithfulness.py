"""The ``faithfulness`` scorer: does the answer's text say what its rows say? No model, no
randomness: the same text and rows always give the same verdict (docs/scoring.md#faithfulness).

An engine that writes a sentence for the user (``Answer.text``) can get the rows right and
the sentence wrong ("revenue was 523.60" over a row holding 523.06). The scorer reads the
text and checks three things:

* **numbers** -- each number written (``1,234.5``, ``-3``, ``$12``, ``37.2%``) must be a value
  of the rows at the precision it is written with (``523.1`` is 523.06, ``523.60`` is not), a
  number inside a text cell (the year of ``2013-12-01``) or a column name, the row count,
  the sum of a numeric column, or a number of the question (``top 5``). A percentage may also be a share (``37.2%``
  of 0.372). Ordinals (``2nd``), identifiers (``chinook_001``, ``MPEG-4``), list markers
  (``1.`` at a line start) and times (``12:30``) are not numbers; a date written ``2013-12-01`` or ``2013-12`` is a
  date, supported when a cell holds it.
* **stated row counts** -- "N rows" (results, records, entries) must be the answer's row count.
* **named values** -- a value the text quotes (``"Rock"``, ``'Rock'``, ``**Rock**``, a code
  span) must be in a text cell, a column name or the question (either containing the other,
  case-insensitively). Bold labels ending in ``:`` are not values.

It is off -- no score at all -- for an answer with no text, and for answers that are not rows
(refusals, errors). Not gating: the item's verdict is the configured rule; the score is
reported per item and as a rate (``summary.faithfulness``). ``-p no:nl2sql_faithfulness``
turns it off.
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pytest

from pytest_nl2sql.scoring.scorers import Score, ScoreContext

__all__ = ["FaithfulnessScorer", "check_text"]

_DATE = re.compile(r"(?<![\w.-])(\d{4})-(\d{2})(?:-(\d{2}))?(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?![\w-])")
_NUMBER = re.compile(r"(?<![\w.,#/:-])(-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(\s?%|\s?percent\b)?(?![\w]|[.,:]\d|-\w)")
_LIST_MARKER = re.compile(r"^[ \t]*\d+[.)](?=\s)", re.MULTILINE)
_ROW_COUNT = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)\s+(?:rows?|results?|records?|entries|entry)\b", re.IGNORECASE)
_NAMED = re.compile(r"\"([^\"\n]{1,80})\"|“([^”\n]{1,80})”|(?<!\w)'([^'\n]{1,80})'(?!\w)|\*\*([^*\n]{1,80})\*\*|`([^`\n]{1,80})`")
#: A quoted span longer than this many words is a quotation, not a value.
_MAX_NAME_WORDS = 8


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float, Decimal)):
        f = float(v)
        return f if f == f else None  # NaN is no value
    return None


def _cell_text(v: Any) -> str | None:
    if isinstance(v, str):
        return v
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat(sep=" ") if isinstance(v, dt.datetime) else v.isoformat()
    return None


def _written(raw: str) -> tuple[float, int]:
    plain = raw.replace(",", "")
    return float(plain), (len(plain.split(".", 1)[1]) if "." in plain else 0)


def _near(written: float, decimals: int, ordered: Sequence[float]) -> bool:
    """Is a value of ``ordered`` (sorted) the written number at its precision?"""
    tol = 0.5 * 10**-decimals + 1e-9 * max(1.0, abs(written))
    i = bisect.bisect_left(ordered, written - tol)
    return i < len(ordered) and ordered[i] <= written + tol


def check_text(text: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], question: str = "") -> dict[str, Any]:
    """What in ``text`` the rows do not support: ``unsupported`` (as written, in order),
    ``checked`` (how many numbers, dates, counts and names were read) and ``faithful``."""
    texts: list[str] = []
    values: list[float] = []
    sums: dict[int, float] = {}
    for row in rows:  # one pass over the cells (the common types first: this is every answer's cost)
        for i, c in enumerate(row):
            kind = type(c)
            if kind is str:
                texts.append(c)
            elif kind is int or kind is float:
                if c == c:  # NaN is no value
                    values.append(float(c))
                    sums[i] = sums.get(i, 0.0) + c
            elif (f := _number(c)) is not None:
                values.append(f)
                sums[i] = sums.get(i, 0.0) + f
            elif (t := _cell_text(c)) is not None:
                texts.append(t)
    values.append(float(len(rows)))
    values.extend(sums.values())
    ordered = sorted(values)
    shares = sorted(v * 100 for v in values)
    in_text: list[list[float]] = []  # the numbers inside text cells, column names and the question: read once, if needed

    def text_numbers() -> tuple[list[float], list[float]]:
        if not in_text:
            found = []
            for t in [*texts, question, *(str(c) for c in columns)]:
                if any(ch.isdigit() for ch in t):
                    scrubbed = _DATE.sub(lambda m: " ".join(g for g in m.groups() if g), t)
                    found += [_written(m.group(1))[0] for m in _NUMBER.finditer(scrubbed)]
            in_text.extend([sorted(found), sorted(v * 100 for v in found)])
        return in_text[0], in_text[1]

    unsupported: list[str] = []
    checked = 0

    body = _LIST_MARKER.sub("", text)
    names = [next(g for g in m.groups() if g is not None).strip() for m in _NAMED.finditer(body)]
    body = _NAMED.sub(lambda m: " " * len(m.group(0)) if not any(ch.isdigit() for ch in m.group(0)) else m.group(0), body)

    for m in _ROW_COUNT.finditer(body):
        checked += 1
        count, _ = _written(m.group(1))
        if count != len(rows):
            unsupported.append(f"{m.group(0)} (the answer has {len(rows)})")
    body = _ROW_COUNT.sub(" ", body)

    lowered: list[list[str]] = []

    def lowered_texts() -> list[str]:  # case-folded text cells: made once, if a date or a name needs them
        if not lowered:
            lowered.append([t.casefold() for t in texts])
        return lowered[0]

    for m in _DATE.finditer(body):
        checked += 1
        said = m.group(0).casefold().replace("t", " ")
        cells_said = (t.replace("t", " ") for t in lowered_texts())
        if said not in question.casefold() and not any(t.startswith(said) or (len(t) >= 7 and said.startswith(t)) for t in cells_said):
            unsupported.append(m.group(0))
    body = _DATE.sub(" ", body)

    for m in _NUMBER.finditer(body):
        checked += 1
        value, decimals = _written(m.group(1))
        percent = bool(m.group(2))
        if _near(value, decimals, ordered) or (percent and _near(value, decimals, shares)):
            continue
        more, more_shares = text_numbers()
        if _near(value, decimals, more) or (percent and _near(value, decimals, more_shares)):
            continue
        unsupported.append(m.group(0).strip())

    names = [n for n in names if n and not n.endswith(":") and len(n.split()) <= _MAX_NAME_WORDS]
    if names:
        known = [*lowered_texts(), *(str(c).casefold() for c in columns)]
        exact = set(known)
        q = question.casefold()
        for name in names:
            checked += 1
            n = name.casefold()
            if n in exact or n in q or any(n in k or (len(k) >= 3 and k in n) for k in known):
                continue
            unsupported.append(repr(name))
    return {"faithful": not unsupported, "checked": checked, "unsupported": unsupported}


def _faithfulness(ctx: ScoreContext) -> Score | None:
    a = ctx.answer
    if a is None or not (a.text or "").strip() or a.status != "ok" or a.rows is None:
        return None
    try:
        from pytest_nl2sql.scoring.matching import answer_rows

        columns, rows = answer_rows(a.rows, a.columns)
    except ValueError:
        return None  # rows that are not rows: result_match says why
    found = check_text(a.text or "", columns, rows, ctx.case.question)
    if found["faithful"]:
        detail = f"{found['checked']} numbers and values in the text, all in the rows"
    else:
        shown = ", ".join(found["unsupported"][:5]) + (f" and {len(found['unsupported']) - 5} more" if len(found["unsupported"]) > 5 else "")
        detail = f"the text says what the rows do not: {shown}"
    return Score("faithfulness", found["faithful"], 1.0 if found["faithful"] else 0.0, detail, gating=False, data=found)


class FaithfulnessScorer:
    """The ``faithfulness`` scorer as a pytest plugin (``nl2sql_faithfulness``)."""

    @pytest.hookimpl
    def pytest_nl2sql_score(self, context: ScoreContext) -> Score | None:
        return _faithfulness(context)
