"""The CLI-ready entry points: what they print and the exit status they return."""

from __future__ import annotations

from pathlib import Path

import attrs

from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.upkeep.audit import run_audit
from pytest_nl2sql.upkeep.feedback import FeedbackStore, run_export, run_rate
from pytest_nl2sql.upkeep.seed import run_seed

from .conftest import Demo


def _echo() -> tuple[list[str], object]:
    lines: list[str] = []
    return lines, lines.append


def test_run_audit_prints_findings_and_returns_the_status(demo: Demo, tmp_path: Path) -> None:
    lines, echo = _echo()
    assert run_audit([demo.root / "evals" / "chinook.yaml"], demo.config, echo=echo) == 0
    assert lines == ["audit: no findings"]
    broken = tmp_path / "broken.yaml"
    broken.write_text("version: 1\ncases:\n- id: x\n")
    lines, echo = _echo()
    assert run_audit([broken], demo.config, echo=echo) == 1
    assert lines[0].startswith(f"{broken}:3:")


def test_run_seed_writes_or_says_why_not(demo: Demo, tmp_path: Path) -> None:
    lines, echo = _echo()
    out = tmp_path / "drafts.yaml"
    assert run_seed("webanalytics", out, demo.config, count=12, echo=echo) == 0
    assert len(load_suite(out)) == 12
    assert lines[-2].startswith(f"{out}: wrote 12 drafts from webanalytics (count ")
    assert lines[-1] == f"{out}: 12 drafts got a verified plan"  # so promoted drafts run in mode plans
    lines, echo = _echo()
    assert run_seed("webanalytics", demo.root / "evals" / "chinook.yaml", demo.config, echo=echo) == 1
    assert "refusing to write drafts here" in lines[-1]
    assert run_seed("nope", out, demo.config, echo=echo) == 1
    assert "unknown datasource 'nope'" in lines[-1]


def test_run_rate_and_run_export_use_the_configured_store(demo: Demo, tmp_path: Path) -> None:
    config = attrs.evolve(demo.config, feedback_store=tmp_path / "feedback.sqlite")
    store = FeedbackStore(config.feedback_store)

    class Answer:
        status, sql, datasources = "ok", "SELECT COUNT(*) AS n FROM Genre", ("chinook",)

    run = store.record("How many genres are there?", "viewer", Answer())
    lines, echo = _echo()
    assert run_rate(config, run, True, echo=echo) == 0
    assert run_rate(config, 99, True, echo=echo) == 1
    assert "no run 99" in lines[-1]
    out = tmp_path / "feedback.yaml"
    assert run_export(config, out, echo=echo) == 0
    assert lines[-2] == f"{out}: wrote 1 draft(s) from thumbs-up runs; promote them as its header says"
    assert lines[-1] == f"{out}: 1 draft got a verified plan"
    assert run_export(attrs.evolve(config, feedback_store=None), out, echo=echo) == 1
    assert "names no feedback store" in lines[-1]
