"""The suite model: ``EvalCase`` and ``EvalSuite`` (spec: "Cases and suites").

Plain frozen value classes. The loader (``loader.py``) builds them from YAML and enforces
every rule of the spec; the writer (``writer.py``) is the only way back to a file.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

__all__ = [
    "Difficulty",
    "EvalCase",
    "EvalSuite",
    "Kind",
    "Location",
    "Origin",
    "Outcome",
    "Reviewed",
    "Status",
    "Row",
    "rows_problem",
]

#: One result row as a suite stores it: column name -> plain value.
Row = dict[str, Any]


class Status(enum.StrEnum):
    """Only ``approved`` cases run."""

    DRAFT = "draft"
    APPROVED = "approved"
    RETIRED = "retired"


class Kind(enum.StrEnum):
    """``answer`` (the default, left out of the file) or ``routing``."""

    ANSWER = "answer"
    ROUTING = "routing"


class Origin(enum.StrEnum):
    """Who wrote the case: a person, the schema seeder, or a thumbs-up export."""

    HAND = "hand"
    SEEDED = "seeded"
    FEEDBACK = "feedback"


class Difficulty(enum.StrEnum):
    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class Outcome(enum.StrEnum):
    """What a role should get for a question."""

    ALLOWED = "allowed"
    REFUSED = "refused"
    UNANSWERABLE = "unanswerable"
    CLARIFY = "clarify"


@attrs.frozen
class Location:
    """Where something stands in a suite file; ``line`` and ``column`` are 1-based."""

    path: str
    line: int
    column: int = 1

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}"


def _tuple(value: Any) -> tuple:
    return tuple(value) if value is not None else ()


def _rows(value: Any) -> tuple[Row, ...] | None:
    if value is None:
        return None
    if type(value) is tuple and all(type(r) is dict for r in value):
        return value  # already this shape (the suite cache decodes fresh dicts; attrs.evolve): no copy
    return tuple(dict(r) for r in value)


def _alt_rows(value: Any) -> tuple[tuple[Row, ...], ...]:
    return tuple(tuple(dict(r) for r in rows) for rows in value or ())


@attrs.frozen
class Reviewed:
    """A person's verdict on an answer SQL a test-suite neighbour flagged (``reviewed:``):
    ``equivalent`` -- the answer is right, the flag does not come back."""

    sql: str
    verdict: str = "equivalent"
    note: str | None = None


def _reviewed(value: Any) -> tuple[Reviewed, ...]:
    return tuple(r if isinstance(r, Reviewed) else Reviewed(*r) for r in value or ())


@attrs.frozen(kw_only=True)
class EvalCase:
    """One reviewed question and what each role should get for it."""

    id: str
    question: str
    datasources: tuple[str, ...] = attrs.field(converter=_tuple)
    outcome: Mapping[str, Outcome]
    status: Status = Status.APPROVED
    kind: Kind = Kind.ANSWER
    origin: Origin = Origin.HAND
    difficulty: Difficulty | None = None
    tags: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    paraphrase_group: str | None = None
    tables: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    columns: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    order_matters: bool = False
    sql: str | None = None
    rows: tuple[Row, ...] | None = attrs.field(default=None, converter=_rows)
    alt_sql: tuple[str, ...] = attrs.field(default=(), converter=_tuple)
    alt_rows: tuple[tuple[Row, ...], ...] = attrs.field(default=(), converter=_alt_rows)
    plan: Mapping[str, Any] | None = None
    match: Mapping[str, Any] | None = None
    reviewed: tuple[Reviewed, ...] = attrs.field(default=(), converter=_reviewed)
    #: a clarify case's readings (``suitefile.clarifications.Clarification``), its default
    #: reading's ``about`` and how many questions the engine may ask
    clarifications: tuple[Any, ...] = attrs.field(default=(), converter=_tuple)
    default: str | None = None
    turns: int = 1
    location: Location | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def approved(self) -> bool:
        return self.status is Status.APPROVED

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(self.outcome)

    def expected(self, role: str) -> Outcome:
        return self.outcome[role]

    @property
    def answerable(self) -> bool:
        """True when some role should get an answer (and so the case needs ``sql``)."""
        return any(o is Outcome.ALLOWED for o in self.outcome.values())


@attrs.frozen(kw_only=True)
class EvalSuite:
    """A suite file's cases, in file order."""

    path: str
    cases: tuple[EvalCase, ...] = attrs.field(converter=tuple)
    version: int = 1
    match: Mapping[str, Any] | None = None
    sha256: str = attrs.field(default="", eq=False, repr=False)

    def __iter__(self) -> Iterator[EvalCase]:
        return iter(self.cases)

    def __len__(self) -> int:
        return len(self.cases)

    def get(self, case_id: str) -> EvalCase:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(f"{self.path}: no case {case_id!r}")

    def approved(self) -> list[EvalCase]:
        return [c for c in self.cases if c.status is Status.APPROVED]

    def count(self, status: Status) -> int:
        return sum(1 for c in self.cases if c.status is status)


def rows_problem(case: EvalCase) -> str | None:
    """Why an approved answer case cannot be scored as written (a suite error), or None. Each
    item asks before it runs (``plugin/collect.py``), so it lives with the model: a run imports
    nothing of ``pytest-nl2sql check`` (the resolver, the compiler) for it."""
    allowed = [r for r, o in case.outcome.items() if o.value == "allowed"]
    if case.status is Status.APPROVED and case.kind.value == "answer" and case.sql and allowed and case.rows is None:
        return (f"approved and allowed for {', '.join(allowed)}, but has no rows to compare with (a suite error): write "
                "them from the database with `pytest-nl2sql eval regenerate SUITE` (or pytest --nl2sql-regenerate)")
    return None
