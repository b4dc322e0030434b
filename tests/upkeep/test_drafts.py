"""The refusals seeding and export share: drafts never replace reviewed cases."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.model import Status
from pytest_nl2sql.upkeep.drafts import DraftTargetRefused, check_draft_target
from pytest_nl2sql.upkeep.feedback import FeedbackStore, export
from pytest_nl2sql.upkeep.init import shipped_suites
from pytest_nl2sql.upkeep.seed import seed, write_drafts

from .conftest import Demo


@pytest.fixture(scope="module")
def drafts(demo: Demo) -> list:
    return seed("support", demo.registry, count=5)


@pytest.fixture
def thumbs_up_store(tmp_path: Path) -> FeedbackStore:
    store = FeedbackStore(tmp_path / "fb.sqlite")

    class Answer:
        status, sql, datasources = "ok", "SELECT COUNT(*) FROM Track", ("chinook",)

    store.rate(store.record("How many tracks are there?", "admin", Answer()), good=True)
    return store


def _refused_both_ways(demo: Demo, target: Path, drafts: list, store: FeedbackStore, reason: str) -> None:
    before = target.read_bytes()
    with pytest.raises(DraftTargetRefused) as seeding:
        write_drafts(target, drafts, config=demo.config)
    with pytest.raises(DraftTargetRefused) as exporting:
        export(store, target, config=demo.config)
    for refusal in (seeding.value, exporting.value):
        message = str(refusal)
        assert "\n" not in message
        assert message.startswith(f"{target}: refusing to write drafts here: ")
        assert reason in message
    assert target.read_bytes() == before


def test_a_suite_evals_yaml_names_is_refused(demo: Demo, drafts: list, thumbs_up_store: FeedbackStore) -> None:
    target = demo.root / "evals" / "chinook.yaml"
    assert target in demo.config.evals_suites
    _refused_both_ways(demo, target, drafts, thumbs_up_store, "evals.yaml names this suite")


def test_a_file_with_an_approved_case_is_refused(demo: Demo, drafts: list, thumbs_up_store: FeedbackStore) -> None:
    target = demo.root / "evals" / "routing.yaml"  # reviewed, but not named by evals.yaml
    assert target not in demo.config.evals_suites
    _refused_both_ways(demo, target, drafts, thumbs_up_store, "approved case(s)")


def test_a_suite_the_package_ships_is_refused(demo: Demo, drafts: list, thumbs_up_store: FeedbackStore) -> None:
    shipped = next(p for p in shipped_suites() if p.name == "chinook.yaml")
    with pytest.raises(DraftTargetRefused, match="the package ships"):
        check_draft_target(shipped)  # checked first, so a broken rule cannot clobber the shipped file
    _refused_both_ways(demo, shipped, drafts, thumbs_up_store, "the package ships")


def test_a_file_that_does_not_load_is_refused_naming_why(
    demo: Demo, drafts: list, thumbs_up_store: FeedbackStore, tmp_path: Path
) -> None:
    target = tmp_path / "notes.yaml"
    target.write_text("shopping: [milk, eggs]\n")
    _refused_both_ways(demo, target, drafts, thumbs_up_store, "unknown top-level key 'shopping'")


def test_a_file_of_drafts_may_be_written_again(demo: Demo, drafts: list, thumbs_up_store: FeedbackStore, tmp_path: Path) -> None:
    target = tmp_path / "evals" / "drafts.yaml"  # the folder is created
    write_drafts(target, drafts, config=demo.config)
    assert len(load_suite(target)) == 5
    write_drafts(target, drafts[:2], config=demo.config)
    assert [c.id for c in load_suite(target)] == [c.id for c in drafts[:2]]
    export(thumbs_up_store, target, config=demo.config)
    assert [c.id for c in load_suite(target)] == ["feedback_001"]


def test_only_drafts_are_written(demo: Demo, drafts: list, tmp_path: Path) -> None:
    approved = [attrs.evolve(drafts[0], status=Status.APPROVED)]
    with pytest.raises(ValueError, match="only drafts"):
        write_drafts(tmp_path / "x.yaml", approved)
    assert not (tmp_path / "x.yaml").exists()
