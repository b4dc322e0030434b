"""Feedback: the reference engine records answered questions, people rate them, and the
thumbs-up runs are exported as drafts."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_nl2sql.engine.reference import ReferenceEngine
from pytest_nl2sql.llm import FakeLLM
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import Origin, Outcome, Status
from pytest_nl2sql.upkeep.feedback import FeedbackError, FeedbackStore, export, recorder

from .conftest import Demo

BY_COUNTRY = "How many customers do we have, by country?"
BY_MEDIA = "How many tracks are there per media type?"
PLANS = {
    BY_COUNTRY: {
        "datasource": "chinook",
        "from": "Customer",
        "select": ["Country", {"expr": {"count": "CustomerId"}, "alias": "customer_count"}],
        "group_by": ["Country"],
    },
    BY_MEDIA: {
        "datasource": "chinook",
        "from": {"table": "Track", "alias": "t"},
        "joins": [{"table": "MediaType", "alias": "m", "on": {"eq": ["m.MediaTypeId", "t.MediaTypeId"]}}],
        "select": ["m.Name", {"expr": {"count": "t.TrackId"}, "alias": "tracks"}],
        "group_by": ["m.Name"],
    },
}
# the same question asked again, in other case and spacing
BY_COUNTRY_AGAIN = "how many customers  do we have, by country"


@pytest.fixture
def engine(demo: Demo) -> ReferenceEngine:
    engine = ReferenceEngine(demo.config, registry=demo.registry)
    return engine


def _ask(engine: ReferenceEngine, llm: FakeLLM, question: str, role: str) -> None:
    answer = engine.answer(question, role, llm)
    assert answer.status == "ok", answer


def test_the_engine_records_rated_runs_and_export_keeps_thumbs_up(
    demo: Demo, engine: ReferenceEngine, tmp_path: Path
) -> None:
    store = FeedbackStore(tmp_path / "state" / "feedback.sqlite")
    assert store.runs() == [] and not store.path.exists()  # created on first write only
    engine.recorder = recorder(store)
    llm = FakeLLM({**PLANS, BY_COUNTRY_AGAIN: PLANS[BY_COUNTRY]})
    _ask(engine, llm, BY_COUNTRY, "admin")  # run 1: good
    _ask(engine, llm, BY_COUNTRY, "admin")  # run 2: good, same question -> same draft
    _ask(engine, llm, BY_COUNTRY_AGAIN, "analyst")  # run 3: good as analyst -> same draft
    _ask(engine, llm, BY_MEDIA, "viewer")  # run 4: bad
    _ask(engine, llm, BY_MEDIA, "admin")  # run 5: not rated
    runs = store.runs()
    assert [r.run_id for r in runs] == [1, 2, 3, 4, 5]
    first = runs[0]
    assert (first.question, first.role, first.status, first.datasources) == (BY_COUNTRY, "admin", "ok", ("chinook",))
    assert first.sql and "Customer" in first.sql and first.recorded_at and first.good is None
    for run_id in (1, 2, 3):
        store.rate(run_id, good=True)
    store.rate(4, good=False)
    assert [r.good for r in store.runs()] == [True, True, True, False, None]
    assert store.runs()[2].rating_role == "analyst"

    out = tmp_path / "evals" / "feedback.yaml"
    drafts = export(store, out, config=demo.config)
    suite = load_suite(out)
    assert list(suite.cases) == drafts
    (case,) = suite.cases
    assert case.id == "feedback_001"
    assert case.question == BY_COUNTRY
    assert case.status is Status.DRAFT and case.origin is Origin.FEEDBACK
    assert case.datasources == ("chinook",)
    assert case.sql.strip() == first.sql.strip()
    assert dict(case.outcome) == {"admin": Outcome.ALLOWED, "analyst": Outcome.ALLOWED}

    # a later thumbs-up adds a draft after the first; the same store gives the same bytes
    store.rate(5, good=True, role="analyst")
    export(store, out, config=demo.config)
    again = out.read_bytes()
    export(store, out, config=demo.config)
    assert out.read_bytes() == again
    cases = load_suite(out).cases
    assert [c.id for c in cases] == ["feedback_001", "feedback_002"]
    assert cases[1].question == BY_MEDIA and dict(cases[1].outcome) == {"analyst": Outcome.ALLOWED}


def test_a_rating_changes_its_mind(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path / "fb.sqlite")

    class Answer:
        status, sql, datasources = "ok", "SELECT 1 AS one", ("chinook",)

    run = store.record("One?", "admin", Answer())
    store.rate(run, good=True)
    store.rate(run, good=False, role="viewer")
    (only,) = store.runs()
    assert (only.good, only.rating_role) == (False, "viewer")
    assert export(store, tmp_path / "out.yaml") == []
    assert load_suite(tmp_path / "out.yaml").cases == ()


def test_rating_an_unknown_run_says_which_runs_exist(tmp_path: Path) -> None:
    store = FeedbackStore(tmp_path / "fb.sqlite")
    with pytest.raises(FeedbackError, match="no run 3 to rate"):
        store.rate(3, good=True)


def test_a_datasource_is_not_a_feedback_store(demo: Demo) -> None:
    database = demo.root / "data" / "chinook.sqlite"
    before = database.read_bytes()
    store = FeedbackStore(database)  # a misconfigured feedback.store
    with pytest.raises(FeedbackError, match="not a feedback store .*Album.*a file of its own"):
        store.record("How many tracks?", "admin", object())
    with pytest.raises(FeedbackError, match="not a feedback store"):
        store.runs()
    assert database.read_bytes() == before
    with pytest.raises(FeedbackError, match="not a usable feedback store"):
        FeedbackStore(demo.root / "evals.yaml").runs()  # not SQLite at all
