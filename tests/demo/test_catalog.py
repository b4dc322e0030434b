"""The demo catalogue: a description and five sample questions for each demo database."""

from __future__ import annotations

import attrs
import pytest

from pytest_nl2sql.demo import DEMO_DATASOURCES, DEMO_NAMES, DemoDatasource


def test_every_demo_database_is_described() -> None:
    assert list(DEMO_DATASOURCES) == list(DEMO_NAMES) == ["chinook", "support", "webanalytics"]
    for name, source in DEMO_DATASOURCES.items():
        assert isinstance(source, DemoDatasource)
        assert source.name == name
        assert len(source.description) > 200
        assert len(source.sample_questions) == 5
        assert all(q.endswith("?") for q in source.sample_questions)


def test_sample_questions_are_distinct_across_databases() -> None:
    questions = [q for source in DEMO_DATASOURCES.values() for q in source.sample_questions]
    assert len(set(questions)) == len(questions) == 15


def test_datasources_are_frozen() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        DEMO_DATASOURCES["chinook"].name = "other"
