"""The feedback store: answered questions, thumbs up or down, and export as drafts.

The reference engine records each answered question (``ReferenceEngine.recorder =
recorder(store)``); a person rates a run good or bad (``pytest-nl2sql feedback rate``); and ``export``
writes each thumbs-up run as a draft case with ``origin: feedback`` to a suite file of its own
(spec: "Drafts"). The store is a SQLite file of this tool's own, named by ``feedback.store`` in
``nl2sql.yaml`` and created on the first write -- it is not a datasource, and no datasource is
ever written.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from pytest_nl2sql.config import Config
from pytest_nl2sql.errors import LockTimeout, Nl2sqlError
from pytest_nl2sql.suitefile.model import EvalCase, Origin, Outcome, Status
from pytest_nl2sql.upkeep.drafts import DraftTargetRefused, write_draft_suite

__all__ = [
    "run_list",
    "FeedbackError",
    "FeedbackStore",
    "Run",
    "export",
    "recorder",
    "run_export",
    "run_rate",
    "store_for",
]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id INTEGER PRIMARY KEY AUTOINCREMENT,
    question TEXT NOT NULL,
    role TEXT NOT NULL,
    sql TEXT,
    datasources TEXT NOT NULL,
    status TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    rating INTEGER,
    rating_role TEXT,
    rated_at TEXT
)
"""


_OWN_TABLES = frozenset({"runs", "sqlite_sequence"})


class FeedbackError(Nl2sqlError):
    """A feedback store that cannot be used, or a run that is not in it."""


@attrs.frozen
class Run:
    """One answered question as the store keeps it; ``good`` is None until rated."""

    run_id: int
    question: str
    role: str
    sql: str | None
    datasources: tuple[str, ...]
    status: str
    recorded_at: str
    good: bool | None = None
    rating_role: str | None = None
    rated_at: str | None = None


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class FeedbackStore:
    """Runs and their ratings in one SQLite file (created on the first write)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"FeedbackStore({str(self.path)!r})"

    @contextlib.contextmanager
    def _connect(self, *, write: bool) -> Iterator[sqlite3.Connection | None]:
        if not write and not self.path.exists():
            yield None
            return
        if write:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            connection = sqlite3.connect(self.path, timeout=30)
        except sqlite3.Error as exc:
            raise FeedbackError(f"{self.path}: cannot open the feedback store: {exc}") from None
        try:
            with connection:
                foreign = [
                    name
                    for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                    if name not in _OWN_TABLES
                ]
                if foreign:
                    raise FeedbackError(
                        f"{self.path}: not a feedback store (it holds other tables: "
                        f"{', '.join(sorted(foreign)[:5])}); feedback.store in nl2sql.yaml must name "
                        "a file of its own, not a datasource"
                    )
                if write:
                    connection.execute(_SCHEMA)
                yield connection
        except sqlite3.DatabaseError as exc:
            raise FeedbackError(
                f"{self.path}: not a usable feedback store ({exc}); feedback.store in nl2sql.yaml "
                "must name a file of its own, not a datasource"
            ) from None
        finally:
            connection.close()

    def record(self, question: str, role: str, answer: Any) -> int:
        """Keep one answered question (the answer's SQL, datasources and status); return its run id."""
        datasources = list(getattr(answer, "datasources", ()) or ())
        with self._connect(write=True) as db:
            assert db is not None
            cursor = db.execute(
                "INSERT INTO runs (question, role, sql, datasources, status, recorded_at) VALUES (?, ?, ?, ?, ?, ?)",
                (
                    question,
                    role,
                    getattr(answer, "sql", None),
                    json.dumps(datasources),
                    str(getattr(answer, "status", "ok")),
                    _now(),
                ),
            )
            return int(cursor.lastrowid or 0)

    def rate(self, run_id: int, good: bool, role: str | None = None) -> None:
        """Record a thumbs-up (``good=True``) or -down for a run, as ``role`` (default: the run's
        own role). A later rating replaces an earlier one."""
        with self._connect(write=True) as db:
            assert db is not None
            row = db.execute("SELECT role FROM runs WHERE run_id = ?", (int(run_id),)).fetchone()
            if row is None:
                last = db.execute("SELECT MAX(run_id) FROM runs").fetchone()[0]
                known = f"runs are 1..{last}" if last else "the store holds no runs yet"
                raise FeedbackError(f"{self.path}: no run {run_id} to rate ({known})")
            db.execute(
                "UPDATE runs SET rating = ?, rating_role = ?, rated_at = ? WHERE run_id = ?",
                (1 if good else 0, role or row[0], _now(), int(run_id)),
            )

    def runs(self) -> list[Run]:
        """Every run, oldest first (an empty list before the first write)."""
        with self._connect(write=False) as db:
            if db is None:
                return []
            try:
                rows = db.execute(
                    "SELECT run_id, question, role, sql, datasources, status, recorded_at, rating, "
                    "rating_role, rated_at FROM runs ORDER BY run_id"
                ).fetchall()
            except sqlite3.OperationalError:
                return []
        return [
            Run(
                run_id=r[0],
                question=r[1],
                role=r[2],
                sql=r[3],
                datasources=tuple(json.loads(r[4])),
                status=r[5],
                recorded_at=r[6],
                good=None if r[7] is None else bool(r[7]),
                rating_role=r[8],
                rated_at=r[9],
            )
            for r in rows
        ]


def recorder(store: FeedbackStore) -> Callable[[str, str, Any], int]:
    """A callable to set as ``ReferenceEngine.recorder``: records each answered question."""

    def record(question: str, role: str, answer: Any) -> int:
        return store.record(question, role, answer)

    return record


def _normal_question(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip("?.! ").casefold()


def _normal_sql(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip(";").strip()


def export(
    store: FeedbackStore, path: str | os.PathLike[str], *, config: Config | None = None
) -> list[EvalCase]:
    """Write each thumbs-up run with SQL as a draft case to ``path``; return the drafts.

    Runs with the same question (ignoring case, spacing and end punctuation), the same SQL
    (ignoring spacing) and the same datasource become one draft, allowed for every role that rated one of them good. Ids are
    ``feedback_NNN`` in the order of each draft's first run, so the same store content gives
    the same file. The refusal rules of ``drafts.py`` apply; nothing is written when refused.
    """
    groups: dict[tuple[str, str, tuple[str, ...]], list[Run]] = {}
    for run in store.runs():
        # a case with SQL names exactly one datasource (the loader's rule), as an answer does
        if run.good and run.sql and run.status == "ok" and len(run.datasources) == 1:
            key = (_normal_question(run.question), _normal_sql(run.sql), run.datasources)
            groups.setdefault(key, []).append(run)
    cases = []
    for n, runs in enumerate(groups.values(), 1):
        first = runs[0]
        roles = dict.fromkeys(r.rating_role or r.role for r in runs)
        cases.append(
            EvalCase(
                id=f"feedback_{n:03d}",
                question=first.question.strip(),
                datasources=first.datasources,
                status=Status.DRAFT,
                origin=Origin.FEEDBACK,
                tags=("feedback",),
                outcome={role: Outcome.ALLOWED for role in roles},
                sql=(first.sql or "").strip() + "\n",
            )
        )
    write_draft_suite(
        path,
        cases,
        title=f"Drafts exported from thumbs-up runs in {store.path.name} by `pytest-nl2sql feedback export --good`.",
        config=config,
    )
    return cases


def store_for(config: Config) -> FeedbackStore:
    """The project's feedback store (``feedback.store`` in ``nl2sql.yaml``)."""
    if config.feedback_store is None:
        raise FeedbackError(
            f"{config.path}: names no feedback store; add e.g. `feedback: {{store: feedback.sqlite}}`"
        )
    return FeedbackStore(config.feedback_store)


def run_rate(
    config: Config, run_id: int, good: bool, role: str | None = None, *, echo: Callable[[str], None] = print
) -> int:
    """The ``pytest-nl2sql feedback rate`` entry point: rate one run; print what was done; exit status."""
    if role is not None and role not in config.roles:
        echo(f"nl2sql: unknown role {role!r} (known: {', '.join(sorted(config.roles))})")
        return 1
    try:
        store_for(config).rate(run_id, good=good, role=role)
    except FeedbackError as exc:
        echo(str(exc))
        return 1
    echo(f"run {run_id}: thumbs-{'up' if good else 'down'}{f' as {role}' if role else ''}")
    return 0


def run_export(config: Config, path: str | os.PathLike[str], *, echo: Callable[[str], None] = print) -> int:
    """The ``pytest-nl2sql feedback export --good PATH`` entry point: print what was written (or why
    not); exit status."""
    try:
        cases = export(store_for(config), path, config=config)
    except (FeedbackError, DraftTargetRefused, LockTimeout) as exc:
        echo(str(exc))
        return 1
    echo(f"{path}: wrote {len(cases)} draft(s) from thumbs-up runs; promote them as its header says")
    if cases:
        from pytest_nl2sql.upkeep.plans import plan_drafts

        plan_drafts(path, config, echo)
    return 0


def run_list(config: Config, *, limit: int = 20, echo: Callable[[str], None] = print) -> int:
    """The ``pytest-nl2sql feedback list`` entry point: the most recent runs, newest first, with the
    id ``pytest-nl2sql feedback rate RUN_ID`` takes."""
    try:
        runs = store_for(config).runs()
    except FeedbackError as exc:
        echo(str(exc))
        return 1
    if not runs:
        echo("no recorded runs yet: answers are recorded when the project's feedback store is set "
             "(feedback: {store: feedback.sqlite}) and the engine answers a question")
        return 0
    shown = runs[::-1][: max(1, limit)]
    echo(f"{'run':>5}  {'recorded (UTC)':<20} {'role':<10} {'status':<20} {'rating':<7} question")
    for r in shown:
        rating = "-" if r.good is None else ("up" if r.good else "down")
        question = r.question if len(r.question) <= 70 else r.question[:67] + "..."
        echo(f"{r.run_id:>5}  {r.recorded_at[:19]:<20} {r.role:<10} {r.status:<20} {rating:<7} {question}")
    more = len(runs) - len(shown)
    if more > 0:
        echo(f"({more} older run(s) not shown; --limit N shows more)")
    echo("rate one: pytest-nl2sql feedback rate RUN_ID --good (or --bad); export the thumbs-up ones: pytest-nl2sql feedback export PATH")
    return 0
