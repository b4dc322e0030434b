"""The replay engine: answers from a file of precomputed predictions (``--nl2sql-predictions``).

Research systems produce their SQL elsewhere; this engine scores it here. Each predicted
query runs through exactly what every other query runs through -- the statement guard, the
validator with the role's access policy, the read-only adapter -- so refusals and read-only
hold for replayed SQL too. Queries run with the role's policy (``adapter.execute(sql,
role=policy)``), so the database enforces it as well. For SQLite, a prediction that relies on
double-quoted strings (``WHERE city = "Paris"``) is rewritten by :func:`sqlite_string_fallback`
for an unrestricted role, and the rewritten SQL is what is validated and run -- never the
original, in which SQLite might resolve a quoted name (``"rowid"``) to data the validator did
not see. A restricted role gets no rewriting: a name missing from the schema is refused like a
denied one, so that the answer tells nothing about which names exist. The file format is
documented in docs/predictions.md:

* JSONL: one object a line, ``{"id": CASE_ID, "sql": "...", "role": ..., "question": ...,
  "datasource": ..., "cost_usd": ..., "latency_s": ...}`` (only ``id`` and ``sql`` required);
  an answer without SQL says what it was instead: ``{"id": ..., "role": ..., "sql": null,
  "status": "not_answerable" | "needs_clarification" | "refused" | "error", "message": ...,
  "code": ...}``, and is replayed as that answer (nothing runs); a ``needs_clarification``
  prediction may carry ``follow_up``, the engine's answer after the user's reply (``{"sql":
  ...}`` or ``{"status": ..., "message": ...}``, itself possibly asking again), served by
  ``follow_up`` whatever the reply (docs/engine.md, "Conversations");
* YAML: a list of the same maps, or ``{predictions: [...]}``.

A prediction is found by case id (``answer_case``); the plugin's ``answer(question, role,
llm)`` call names only the question, so the engine also keys predictions by question text --
the ``question`` a prediction carries, or the question its case has in the project's
``evals.yaml`` suites. A question shared by cases with different predictions is an error,
never a guess.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

import attrs
import pytest

from pytest_nl2sql.datasources import (
    DatasourceRegistry,
    QueryError,
    StatementRefused,
    check_statement,
    introspect,
)
from pytest_nl2sql.datasources.guard import MAX_SQL_CHARS, remembered
from pytest_nl2sql.datasources.memo import STORE
from pytest_nl2sql.engine.protocol import Answer, RouteResult, SetupError
from pytest_nl2sql.engine.stringfallback import sqlite_string_fallback
from pytest_nl2sql.engine.validator import (
    REFUSAL_MESSAGE,
    access_denied,
    policy_restricts,
    validate_sql,
    without_suggestions,
)
from pytest_nl2sql.engine.validator import remembered as validator_remembered
from pytest_nl2sql.engine.validatorbase import FrozenSchema
from pytest_nl2sql.errors import Nl2sqlError
from pytest_nl2sql.suitefile.yamlnodes import BadScalar, YamlSyntaxError, compose, to_python

__all__ = ["Prediction", "PredictionsError", "ReplayEngine", "read_predictions", "sqlite_string_fallback"]

_FIELDS = ("id", "sql", "role", "question", "datasource", "cost_usd", "latency_s", "status", "message", "code", "follow_up")
#: What a prediction without SQL may say (the engine's answer status, as in ``Answer``).
_STATUSES_WITHOUT_SQL = ("refused", "not_answerable", "needs_clarification", "error")
#: The largest predictions file read (a larger one is an error, not a MemoryError).
MAX_PREDICTIONS_FILE_BYTES = 256 * 1024 * 1024
#: How much of an over-long predicted SQL is kept to show (it never runs).
_SHOWN_CHARS = 2000
#: Answers one helper checks ahead at most (``prepare_ahead``); the next ones get a new helper.
HELPER_AHEAD = 100_000
#: How many checked answers ``prepare_cases`` keeps for their items at most (a serial warm run
#: prepares the whole run at once: the rest are looked up again as their items ask, from the
#: memos, so a run of 100,000 items holds no more than these).
PREPARED_MAX = 4096


class PredictionsError(Nl2sqlError, pytest.UsageError):
    """A predictions file that cannot be used; the message says where and what would be right."""


class _Checked(NamedTuple):
    """A prediction that passed the guard and the validator: what runs, where, as whom."""

    adapter: Any
    policy: Any
    datasource: str
    sql: str
    check: Any


@attrs.frozen(kw_only=True)
class Prediction:
    """One predicted query for one case (and optionally one role)."""

    id: str
    sql: str | None  # None: an answer without SQL (``status`` says which)
    role: str | None = None
    question: str | None = None
    datasource: str | None = None
    cost_usd: float = 0.0
    latency_s: float = 0.0
    status: str | None = None  # the answer's status; None: "ok" when there is SQL
    message: str = ""
    code: str | None = None
    where: str = attrs.field(default="", eq=False)
    #: the length of a predicted SQL over the guard's limit (``sql`` then holds its start and
    #: a marker, and the prediction answers with an error; it never runs)
    oversize: int = 0
    #: ``status: needs_clarification``: the engine's answer after the user's reply (issue 24)
    follow_up: Prediction | None = None


def _number(value: Any, key: str, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise PredictionsError(f"{where}: {key} must be a number >= 0, got {value!r}")
    return float(value)


def _prediction(item: Any, where: str) -> Prediction:
    if not isinstance(item, Mapping):
        raise PredictionsError(f'{where}: a prediction is a map like {{"id": "case_1", "sql": "SELECT ..."}}, got {item!r:.80}')
    unknown = [k for k in item if k not in _FIELDS]
    if unknown:
        raise PredictionsError(f"{where}: unknown key {unknown[0]!r} (a prediction may have {', '.join(_FIELDS)})")
    status = item.get("status")
    if status is not None and (not isinstance(status, str) or status not in ("ok", *_STATUSES_WITHOUT_SQL)):
        raise PredictionsError(f"{where}: status must be one of ok, {', '.join(_STATUSES_WITHOUT_SQL)}, got {status!r:.80}")
    if "id" not in item:
        raise PredictionsError(f"{where}: the prediction has no 'id' (each needs 'id' and 'sql', or a 'status' without SQL)")
    without_sql = status in _STATUSES_WITHOUT_SQL and item.get("sql") is None
    if "sql" not in item and not without_sql:
        raise PredictionsError(f"{where}: the prediction has no 'sql' (each needs 'id' and 'sql', or a 'status' without SQL)")
    texts: dict[str, str | None] = {}
    for key in ("id", "sql", "role", "question", "datasource", "message", "code"):
        value = item.get(key)
        if value is None and (key not in ("id", "sql") or (key == "sql" and without_sql)):
            texts[key] = None
            continue
        if isinstance(value, (int,)) and not isinstance(value, bool) and key == "id":
            value = str(value)
        if not isinstance(value, str) or (key not in ("sql", "message") and not value.strip()):
            raise PredictionsError(f"{where}: {key} must be text, got {value!r:.80}"
                                   + ("; an answer without SQL says so with \"status\"" if key == "sql" else ""))
        texts[key] = value
    sql = texts["sql"]
    oversize = len(sql) if isinstance(sql, str) and len(sql) > MAX_SQL_CHARS else 0
    if oversize:
        sql = sql[:_SHOWN_CHARS] + f" ... [truncated: {oversize:,} characters]"
    follow_up = None
    if item.get("follow_up") is not None:
        if status != "needs_clarification":
            raise PredictionsError(f"{where}: follow_up belongs to a prediction with status needs_clarification (the answer after the user's reply)")
        nested = item["follow_up"]
        if not isinstance(nested, Mapping) or "id" in nested:
            raise PredictionsError(f'{where}: follow_up is a map like {{"sql": "SELECT ..."}} or {{"status": ..., "message": ...}} (no id)')
        follow_up = _prediction({**nested, "id": texts["id"]}, f"{where} follow_up")
    return Prediction(
        follow_up=follow_up,
        id=str(texts["id"]),
        sql=sql,
        oversize=oversize,
        role=texts["role"],
        question=texts["question"],
        datasource=texts["datasource"],
        cost_usd=_number(item.get("cost_usd", 0.0), "cost_usd", where),
        latency_s=_number(item.get("latency_s", 0.0), "latency_s", where),
        status=status,
        message=texts["message"] or "",
        code=texts["code"],
        where=where,
    )


def _yaml_items(text: str, path: str) -> list[tuple[Any, str]]:
    try:
        node = compose(text)
    except YamlSyntaxError as exc:
        line = f":{exc.line}" if exc.line else ""
        raise PredictionsError(f"{path}{line}: not valid YAML: {exc.message}") from None
    if node is not None and type(node).__name__ == "MappingNode":
        inner = [v for k, v in node.value if getattr(k, "value", None) == "predictions"]
        if len(inner) == 1 and len(node.value) == 1:
            node = inner[0]
    if node is None or type(node).__name__ != "SequenceNode":
        raise PredictionsError(f"{path}: a YAML predictions file is a list of predictions, or {{predictions: [...]}}")
    out = []
    for item in node.value:
        where = f"{path}:{item.start_mark.line + 1}"
        try:
            out.append((to_python(item), where))
        except BadScalar as exc:
            raise PredictionsError(f"{where}: {exc}") from None
    return out


def _jsonl_items(text: str, path: str) -> list[tuple[Any, str]]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((json.loads(line), f"{path}:{number}"))
        except json.JSONDecodeError as exc:
            raise PredictionsError(f"{path}:{number}: not a JSON object ({exc.msg} at column {exc.colno}); JSONL is one object a line") from None
        except RecursionError:
            raise PredictionsError(f"{path}:{number}: the JSON is nested too deeply (a prediction is one flat object)") from None
        except ValueError as exc:  # e.g. a number with more digits than Python converts
            raise PredictionsError(f"{path}:{number}: not a usable JSON object ({str(exc)[:120]})") from None
    return out


def read_predictions(path: str | os.PathLike[str]) -> list[Prediction]:
    """The predictions of a JSONL (``.jsonl``/``.json``) or YAML (``.yaml``/``.yml``) file.

    Raises ``PredictionsError`` naming ``path:line`` for anything malformed, and for a case
    id (with the same role) predicted twice.
    """
    shown = str(path)
    try:
        size = Path(path).stat().st_size
        if size > MAX_PREDICTIONS_FILE_BYTES:
            raise PredictionsError(
                f"{shown}: the predictions file is {size:,} bytes; at most "
                f"{MAX_PREDICTIONS_FILE_BYTES:,} are read (split it, or shorten its SQL)"
            )
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PredictionsError(f"--nl2sql-predictions: no such file: {shown}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PredictionsError(f"{shown}: cannot read the predictions file: {exc}") from None
    suffix = Path(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        items = _yaml_items(text, shown)
    elif suffix in (".jsonl", ".json", ".ndjson"):
        items = _jsonl_items(text, shown)
    else:
        raise PredictionsError(f"{shown}: unknown predictions format {suffix or '(no extension)'!r}; name the file .jsonl or .yaml")
    predictions = [_prediction(item, where) for item, where in items]
    seen: dict[tuple[str, str | None], str] = {}
    for p in predictions:
        key = (p.id, p.role)
        if key in seen:
            role = f" for role {p.role!r}" if p.role else ""
            raise PredictionsError(f"{p.where}: case {p.id!r}{role} is predicted twice (first at {seen[key]})")
        seen[key] = p.where
    return predictions


class ReplayEngine:
    """An engine whose SQL comes from a predictions file; see the module docstring."""

    needs_llm = False  # answers come from the predictions file, never from an LLM

    refusal_message = REFUSAL_MESSAGE

    #: Whether ``prepare_cases`` may check answers on a second core, with a forked helper
    #: process that works through them ahead of this one (engine/forkhelper.py). Off unless set:
    #: the plugin sets it in a serial run.
    second_core = False

    def __init__(self, predictions: Iterable[Prediction], project: Any, *, registry: DatasourceRegistry | None = None) -> None:
        self.project = project
        self.registry = registry or DatasourceRegistry.from_config(project)
        self._by_id: dict[str, dict[str | None, Prediction]] = {}
        for p in predictions:
            self._by_id.setdefault(p.id, {})[p.role] = p
        self._questions: dict[str, set[str]] | None = None
        self._case_datasources: dict[str, tuple[str, ...]] = {}
        self._schemas: dict[str, FrozenSchema] = {}
        self._pid = os.getpid()
        self._helper: Any = None  # engine/forkhelper.Helper, while one checks ahead
        self._helped: dict[tuple[Any, str], int] = {}
        #: the answers ``prepare_cases`` checked in this process and found runnable, by (case id, role,
        #: prediction, the case's datasources): taken by the answer's ``_replay``, which checks them
        #: no more (``PREPARED_MAX`` of one batch at most: each call replaces the last batch's)
        self._prepared: dict[tuple[str, str, int, tuple[str, ...]], _Checked] = {}

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], project: Any) -> ReplayEngine:
        """The engine for ``--nl2sql-predictions PATH`` over the project's datasources."""
        if project is None:
            raise PredictionsError(
                "--nl2sql-predictions needs the project's nl2sql.yaml (its datasources run the SQL): "
                "pass --nl2sql-config or put nl2sql.yaml beside the suite"
            )
        return cls(read_predictions(path), project)

    def check_setup(self) -> None:
        """Before a run: a PostgreSQL login that could write stops it (docs/security.md)."""

        for name in self.registry.names():
            try:
                self.registry.get(name).check_login()
            except QueryError as exc:
                if exc.kind == "refused":
                    raise SetupError(exc.message) from None

    # -- finding a case's prediction ---------------------------------------------------
    def _question_index(self) -> dict[str, set[str]]:
        """question text -> case ids, from predictions' ``question`` and the evals.yaml suites."""
        if self._questions is None:
            index: dict[str, set[str]] = {}
            for cid, by_role in self._by_id.items():
                for p in by_role.values():
                    if p.question:
                        index.setdefault(p.question.strip(), set()).add(cid)
            from pytest_nl2sql.suitefile.loader import load_suite

            for suite_path in getattr(self.project, "evals_suites", ()) or ():
                try:
                    suite = load_suite(suite_path, strict=False)
                except Exception:  # noqa: BLE001 - a broken suite is reported by collection
                    continue
                for case in suite.cases:
                    index.setdefault(case.question.strip(), set()).add(case.id)
                    self._case_datasources.setdefault(case.id, tuple(case.datasources))
            self._questions = index
        return self._questions

    def prediction(self, case_id: str, role: str | None) -> Prediction | None:
        """The prediction for ``case_id``: the one for ``role`` if given, else the role-less one."""
        by_role = self._by_id.get(case_id, {})
        return by_role.get(role) or by_role.get(None)

    def _case_for(self, question: str) -> str | Answer:
        ids = sorted(self._question_index().get(question.strip(), ()))
        if not ids:
            return Answer(
                status="error",
                error=f"no prediction for the question {question!r:.120}: predictions are found by case id; "
                "give each prediction its case's 'question', or list the suite in evals.yaml",
            )
        predicted = [i for i in ids if i in self._by_id]
        if len(ids) > 1 and len({self._by_id[i][next(iter(self._by_id[i]))].sql or "" for i in predicted}) > 1:
            return Answer(
                status="error",
                error=f"cases {', '.join(ids)} share the question {question!r:.80} and have different "
                "predictions; make questions unique per suite",
            )
        return (predicted or ids)[0]

    # -- the protocol -------------------------------------------------------------------
    def route(self, question: str, role: str) -> RouteResult:
        """The datasource the question's prediction (or case) names; empty when unknown."""
        found = self._case_for(question)
        if isinstance(found, Answer):
            return RouteResult()
        ds = self._datasource(found, self.prediction(found, role), ())
        return RouteResult(ranked=((ds, 1.0),), shortlist=(ds,)) if ds else RouteResult()

    def answer(self, question: str, role: str, llm: Any = None) -> Answer:
        """Answer by replaying the prediction of the case whose question this is."""
        found = self._case_for(question)
        if isinstance(found, Answer):
            return found
        return self._replay(found, role, ())

    def answer_case(self, case: Any, role: str, llm: Any = None) -> Answer:
        """Answer ``case`` (an ``EvalCase``) by id -- what the plugin calls when it can."""
        return self._replay(case.id, role, tuple(case.datasources))

    def follow_up_case(self, case: Any, role: str, llm: Any, history: list[dict[str, Any]]) -> Answer:
        """The prediction's ``follow_up`` (its n-th, after the n-th reply), whatever the reply said."""
        return self._follow(case.id, role, tuple(case.datasources), history)

    def follow_up(self, question: str, role: str, llm: Any, history: list[dict[str, Any]]) -> Answer:
        found = self._case_for(question)
        if isinstance(found, Answer):
            return found
        return self._follow(found, role, (), history)

    def _follow(self, case_id: str, role: str, case_datasources: tuple[str, ...], history: list[dict[str, Any]]) -> Answer:
        p = self.prediction(case_id, role)
        for _ in range(max(1, sum(1 for t in history if t.get("speaker") == "user") - 1)):
            p = p.follow_up if p is not None else None
        if p is None:
            said = f"the prediction for case {case_id} has no follow_up (the engine's answer after the user's reply)"
            return Answer(status="error", error=said, message=said)
        return self._replay(case_id, role, case_datasources, p)

    def _datasource(self, case_id: str, p: Prediction | None, case_datasources: tuple[str, ...]) -> str | None:
        if p is not None and p.datasource:
            return p.datasource
        known = case_datasources or self._case_datasources.get(case_id, ())
        if known:
            return known[0]
        names = self.registry.names()
        return names[0] if len(names) == 1 else None

    def _schema(self, datasource: str) -> FrozenSchema:
        if datasource not in self._schemas:
            if os.getpid() != self._pid:  # a forked helper (forkhelper.py): the parent's connections are not its own
                raise RuntimeError(f"the schema of {datasource!r} is read by the process that made the engine")
            # the tables and columns the validator reads: no row count or sample value of each
            # (a query per table and per column the full read costs, ~2 ms a Spider database)
            info = introspect(self.registry.get(datasource), shape_only=True)
            self._schemas[datasource] = FrozenSchema.of(info)
        return self._schemas[datasource]

    def prepare_cases(self, pairs: Iterable[tuple[Any, str]]) -> None:
        """Check the predictions of these ``(case, role)`` answers now, one after the other: the
        statement guard's and the validator's verdicts land in their memos (and the verdict
        store), and the answers, asked later by their items, read them there -- a runnable one is
        handed to its item as it was checked (``_prepared``), not looked up again. The plugin calls
        this with the next items of a process before the first of them runs (plugin.concurrency,
        "Checked in batches"). Nothing is executed; never raises (an answer that cannot be checked
        here is checked, and reports why, when its item asks).

        With ``second_core`` (a serial run) a forked helper checks them instead, in order, ahead of
        the items, which wait for their own verdicts (engine/forkhelper.py); the plugin then hands
        over the rest of the run at once (``prepare_ahead``)."""
        pairs = list(pairs)
        prepared = self._prepared = {}

        def work(i: int) -> None:
            case, role = pairs[i]
            try:
                p = self.prediction(case.id, role)
                if p is not None:
                    datasources = tuple(case.datasources)
                    checked = self._checked(case.id, role, datasources, p)
                    # an error may pass by the time its item asks: asked again then
                    if isinstance(checked, _Checked) and len(prepared) < PREPARED_MAX:
                        prepared[(case.id, role, id(p), datasources)] = checked
            except Exception:  # noqa: BLE001,S110 -- left to the item (the docstring)
                pass

        if self._start_helper(pairs, work):
            return
        for i in range(len(pairs)):
            work(i)

    @property
    def prepare_ahead(self) -> int | None:
        """How many upcoming answers ``prepare_cases`` wants at once: the rest of the run (up to
        :data:`HELPER_AHEAD`) when a helper checks them on a second core; None, the plugin's batch,
        when this process checks them."""
        if self.second_core and STORE.folder is not None and os.getpid() == self._pid:
            from pytest_nl2sql.engine import forkhelper

            if forkhelper.available():
                return HELPER_AHEAD
        return None

    def _start_helper(self, pairs: list[tuple[Any, str]], work: Any) -> bool:
        """Fork a helper that checks these answers in order, ahead of this process (``second_core``,
        engine/forkhelper.py); False when none starts. Its verdicts travel as the verdict store's
        entries, so not without a store."""
        if not self.second_core or STORE.folder is None or os.getpid() != self._pid:
            return False
        if self._helper is not None:
            self._helper.stop()  # done with its answers (a run longer than HELPER_AHEAD)
            self._helper = None
        from pytest_nl2sql.engine import forkhelper

        if len(pairs) < forkhelper.MIN_ITEMS or not forkhelper.available():
            return False
        targets = self._targets(pairs)
        for ds in sorted({ds for _, _, _, ds in targets if ds is not None}):
            try:  # read here before the fork: a forked copy never opens a database (``_schema``)
                self._schema(ds)
            except Exception:  # noqa: BLE001,S112 -- the item reports it
                continue
        if self._mostly_remembered(targets):
            return False
        helper = forkhelper.Helper.start(len(pairs), work, STORE.take_new)
        if helper is None:
            return False
        self._helper, self._helped = helper, {}
        for i, key, _, _ in targets:
            self._helped.setdefault(key, i)
        return True

    def _targets(self, pairs: list[tuple[Any, str]]) -> list[tuple[int, tuple[str, str], Prediction, str | None]]:
        """Each pair's position, ``(case id, role)``, prediction and datasource (None: unknown),
        for the pairs that have a prediction; anything else is left to its item."""
        out = []
        for i, (case, role) in enumerate(pairs):
            try:
                p = self.prediction(case.id, role)
                if p is None:
                    continue
                ds = self._datasource(case.id, p, tuple(case.datasources))
            except Exception:  # noqa: BLE001,S112 -- not a (case, role): left to its item
                continue
            out.append((i, (case.id, role), p, ds if ds is not None and ds in self.registry else None))
        return out

    def _mostly_remembered(self, targets: list[tuple[int, tuple[str, str], Prediction, str | None]]) -> bool:
        """Whether the verdicts of most of a sample of these answers (32 at most, those with SQL)
        are in the verdict store: a warm run, whose checks are look-ups that cost less than a fork
        (the parent's pages are copied as it writes them while a helper lives). Needs their
        schemas read."""
        sample = [t for t in targets if t[2].sql and t[3] is not None]
        sample = sample[:: max(1, len(sample) // 32)]
        known = 0
        for _, (_, role), p, ds in sample:
            try:
                known += self._checks_remembered(p.sql, ds, self.project.role(role))
            except Exception:  # noqa: BLE001,S112 -- left to its item
                continue
        return known >= 0.75 * len(sample)

    def _checks_remembered(self, sql: str, ds: str, policy: Any) -> bool:
        """Whether checking ``sql`` on ``ds`` for this role computes nothing (``_checked``'s path)."""
        if not policy.allows_datasource(ds):
            return True  # refused before any check
        dialect = self.registry.get(ds).dialect
        if not remembered(sql, dialect):
            return False
        try:
            check_statement(sql, dialect)  # remembered: a look-up
        except StatementRefused:
            return True  # refused: nothing more is checked
        schema = self._schemas.get(ds)
        return schema is not None and validator_remembered(sql, dialect=dialect, datasource=ds, schema=schema, policy=policy)

    def _await_helper(self, case_id: str, role: str) -> None:
        """Before answering: the helper's verdicts up to this answer's, if it checks it."""
        helper = self._helper
        if helper is None or os.getpid() != self._pid:
            return
        index = self._helped.get((case_id, role))
        if index is not None and not helper.wait_for(index, STORE.merge):
            self._helper = None  # ended or stalled: this process checks the rest itself

    def _replay(self, case_id: str, role: str, case_datasources: tuple[str, ...], p: Prediction | None = None) -> Answer:
        started = time.perf_counter()
        p = p if p is not None else self.prediction(case_id, role)
        if p is None:
            return Answer(status="error", error=f"no prediction for case {case_id}", message=f"no prediction for case {case_id}")
        cost, latency = p.cost_usd, p.latency_s

        def done(sql: str | None = p.sql, **kw: Any) -> Answer:
            return Answer(cost_usd=cost, latency_s=latency or time.perf_counter() - started, sql=sql, **kw)

        self._await_helper(case_id, role)
        checked = self._prepared.pop((case_id, role, id(p), case_datasources), None)  # checked with its batch
        if checked is None:
            checked = self._checked(case_id, role, case_datasources, p)
        if not isinstance(checked, _Checked):
            return done(**checked)
        adapter, policy, ds, run_sql, check = checked
        try:
            res = adapter.execute(run_sql, role=policy)
        except QueryError as exc:
            restricted = policy_restricts(policy, ds)
            if restricted and access_denied(exc):
                return done(status="refused", message=REFUSAL_MESSAGE, datasources=(ds,))
            said = without_suggestions(exc.message) if restricted else exc.message
            return done(status="error", error=f"{exc.kind}: {said}", message=said, datasources=(ds,))
        return done(
            sql=run_sql,  # what passed the guard and validator and ran (the neighbours run it too)
            status="ok",
            datasources=(ds,),
            columns=res.columns,
            rows=res.rows,
            truncated=res.truncated,
            retrieved_tables=tuple(sorted(check.tables)),
            retrieved_columns=tuple(sorted(check.columns)),
        )

    def _checked(self, case_id: str, role: str, case_datasources: tuple[str, ...], p: Prediction) -> _Checked | dict[str, Any]:
        """What runs for prediction ``p`` (the guard's and the validator's verdicts), or the
        fields of the answer given without running anything (a refusal, an error)."""
        if p.sql is None:  # the engine answered without SQL: the answer as it was saved
            ds = self._datasource(case_id, p, case_datasources)
            return dict(status=p.status or "error", message=p.message, code=p.code,
                        error=(p.message or "error") if p.status == "error" else None,
                        datasources=(ds,) if ds and p.status == "refused" else ())  # fmt: skip
        try:
            policy = self.project.role(role)
        except KeyError as exc:
            return {"status": "error", "error": str(exc.args[0] if exc.args else exc)}
        ds = self._datasource(case_id, p, case_datasources)
        if ds is None or ds not in self.registry:
            names = ", ".join(self.registry.names())
            what = f"names the unknown datasource {ds!r}" if ds else "names no datasource"
            return {"status": "error", "error": f"the prediction for case {case_id} ({p.where}) {what}; add \"datasource\": one of {names}"}
        if not policy.allows_datasource(ds):
            return {"status": "refused", "message": REFUSAL_MESSAGE, "datasources": (ds,)}
        if p.oversize:
            said = (f"the predicted SQL is {p.oversize:,} characters long; at most {MAX_SQL_CHARS:,} "
                    "are checked (write a shorter query)")  # fmt: skip
            return {"status": "error", "error": f"statement refused: {said}", "message": said, "datasources": (ds,)}
        adapter = self.registry.get(ds)
        try:
            check_statement(p.sql, adapter.dialect)
        except StatementRefused as refusal:
            return {"status": "error", "error": f"statement refused: {refusal.reason}", "message": refusal.reason, "datasources": (ds,)}
        try:
            schema = self._schema(ds)
        except QueryError as exc:
            return {"status": "error", "error": f"{exc.kind}: {exc.message}", "message": exc.message, "datasources": (ds,)}
        run_sql = p.sql
        check = validate_sql(run_sql, dialect=adapter.dialect, datasource=ds, schema=schema, policy=policy)
        if adapter.dialect == "sqlite" and check.status == "unknown_reference":
            # Only an unrestricted role gets unknown_reference. For a restricted role a missing
            # name is refused like a denied one, and no fallback is tried: turning a missing
            # name into a string while a denied one stays refused would tell the two apart.
            fixed = sqlite_string_fallback(p.sql, schema)
            if fixed is not None:
                check = validate_sql(fixed, dialect=adapter.dialect, datasource=ds, schema=schema, policy=policy)
                run_sql = fixed  # run what was validated, never the original
        if check.status == "refused":
            return {"status": "refused", "message": REFUSAL_MESSAGE, "datasources": (ds,)}
        if not check.ok:
            return {"status": "error", "error": f"{check.status}: {check.message}", "message": check.message, "datasources": (ds,)}
        return _Checked(adapter, policy, ds, run_sql, check)

    def close(self) -> None:
        if self._helper is not None:
            self._helper.stop()
            self._helper = None
        self.registry.close()
