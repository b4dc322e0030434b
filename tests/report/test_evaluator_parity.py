"""What nl2sql-engine's evaluator reports that we now report too (issue 30), through the front
doors: ``pytest --nl2sql-...`` on the demo's mini suite, the JSON and HTML reports, and
``pytest-nl2sql report compare / gate``."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from pytest_nl2sql.cli import main
from pytest_nl2sql.reporting.baseline import Baseline

MINI = ("--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "-p", "no:randomly")


def _run(pytester: pytest.Pytester, out: str = "r.json", *extra: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest(*MINI, "--nl2sql-out", out, "--nl2sql-html", out.replace(".json", ".html"), *extra)
    return result, json.loads((pytester.path / out).read_text())


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


# -- 1. provenance -----------------------------------------------------------------------------
def test_a_run_records_which_suite_database_commit_and_engine_it_is_about(pytester: pytest.Pytester, project: Path) -> None:
    result, data = _run(pytester)
    prov = data["run"]["provenance"]
    suite = prov["suites"]["mini.yaml"]
    assert suite["sha256"] == hashlib.sha256((project / "evals" / "mini.yaml").read_bytes()).hexdigest()
    assert set(suite["cases"]) >= {"mini_001", "mini_002", "mini_003"} and all(len(d) == 64 for d in suite["cases"].values())
    assert len(prov["datasources"]["chinook"]["fingerprint"]) == 64 and prov["datasources"]["chinook"]["tables"] == 11
    assert prov["engine"]["name"] == "pytest_nl2sql.engine.reference:ReferenceEngine" and prov["engine"]["version"]
    assert prov["git"] is None or set(prov["git"]) == {"commit", "dirty"}
    result.stdout.fnmatch_lines([" provenance: suites mini.yaml *(6 cases); schemas chinook *; engine pytest_nl2sql.engine.reference:ReferenceEngine*"])
    page = (project / "r.html").read_text()
    assert 'id="provenance"' in page and suite["sha256"] in page


def test_git_commit_and_dirty_flag(pytester: pytest.Pytester, project: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    for args in (["init", "-q"], ["-c", "user.email=t@t", "-c", "user.name=t", "add", "nl2sql.yaml", "evals"],
                 ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"]):
        pytester.run("git", *args)
    _, clean = _run(pytester)
    (project / "nl2sql.yaml").write_text((project / "nl2sql.yaml").read_text() + "\n")
    _, dirty = _run(pytester)
    assert len(clean["run"]["provenance"]["git"]["commit"]) == 40 and clean["run"]["provenance"]["git"]["dirty"] is False
    assert dirty["run"]["provenance"]["git"]["dirty"] is True


def _own_data(project: Path) -> Path:
    """Replace the shared demo data with a copy this test may change."""
    shared = (project / "data").resolve()
    (project / "data").unlink()
    shutil.copytree(shared, project / "data")
    return project / "data" / "chinook.sqlite"


def test_a_changed_schema_is_a_series_break_and_an_edited_case_is_listed_apart(
    pytester: pytest.Pytester, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _own_data(project)
    base = _run(pytester, "base.json")[1]
    _edit(project / "evals" / "mini.yaml", "What is the favourite colour of each customer?", "What is the favourite colour of every customer?")
    same_schema = _run(pytester, "edited.json")[1]
    capsys.readouterr()
    assert main(["report", "compare", str(project / "base.json"), str(project / "edited.json")]) == 0
    out = capsys.readouterr().out
    assert "case changed: evals/mini.yaml::mini_003[admin] (case edited)" in out and "regressed:" not in out
    assert base["run"]["provenance"]["datasources"] == same_schema["run"]["provenance"]["datasources"]

    with sqlite3.connect(db) as con:  # the team's own copy of the database gained a column
        con.execute("ALTER TABLE Genre ADD COLUMN Mood TEXT")
    _run(pytester, "new.json")
    capsys.readouterr()
    assert main(["report", "compare", str(project / "edited.json"), str(project / "new.json")]) == 2
    out = capsys.readouterr().out
    assert "SERIES BREAK: datasource chinook: schema fingerprint" in out and "exit 2 (pass --allow-series-break" in out
    assert main(["report", "compare", str(project / "edited.json"), str(project / "new.json"), "--allow-series-break"]) == 0

    baseline = project / "baseline.json"
    Baseline(baseline).write()
    gate = ["report", "gate", str(project / "new.json"), "--baseline", str(baseline)]
    assert main(gate) == 0  # no earlier run named: the gate as it was
    capsys.readouterr()
    assert main([*gate, "--against", str(project / "base.json")]) == 2
    captured = capsys.readouterr()
    assert "SERIES BREAK since" in captured.out and "case changed since" in captured.out and "mini_003 (case edited)" in captured.out
    assert "--allow-series-break" in captured.err
    assert main([*gate, "--against", str(project / "base.json"), "--allow-series-break"]) == 0


def test_nl2sql_compare_across_a_schema_change_fails_the_run_with_its_own_exit_code(pytester: pytest.Pytester, project: Path) -> None:
    db = _own_data(project)
    _run(pytester, "base.json")
    with sqlite3.connect(db) as con:  # the database gained a column since base.json
        con.execute("ALTER TABLE Genre ADD COLUMN Mood TEXT")
    broken, _ = _run(pytester, "new.json", "--nl2sql-compare", "base.json")
    assert broken.ret == 7  # SERIES_BREAK: every item passed, the runs are about different databases
    broken.stdout.fnmatch_lines(["*SERIES BREAK: datasource chinook: schema fingerprint*",
                                 "*compare: 1 series break(s): exit 7 (pass --nl2sql-allow-series-break to compare anyway)"])
    allowed, _ = _run(pytester, "new.json", "--nl2sql-compare", "base.json", "--nl2sql-allow-series-break")
    assert allowed.ret == pytest.ExitCode.OK
    allowed.stdout.fnmatch_lines(["*compare: 1 series break(s): let through by --nl2sql-allow-series-break"])
    assert _run(pytester, "again.json", "--nl2sql-compare", "new.json")[0].ret == pytest.ExitCode.OK  # same schema: no break


# -- 2. answerability ----------------------------------------------------------------------------
def test_answerability_precision_and_recall_with_intervals(pytester: pytest.Pytester, project: Path) -> None:
    # the engine now calls an answerable question (mini_002, admin and viewer) not answerable
    _edit(project / "evals" / "mini.yaml", "  plan:\n    datasource: chinook\n    from: {table: Track, alias: t}",
          "  plan: {kind: not_answerable, reason: no}\n  unused:\n    datasource: chinook\n    from: {table: Track, alias: t}")
    text = (project / "evals" / "mini.yaml").read_text()
    start = text.index("  unused:")
    end = text.index("- id: mini_003")
    (project / "evals" / "mini.yaml").write_text(text[:start] + text[end:])
    result, data = _run(pytester)
    a = data["summary"]["answerability"]
    assert (a["true_refusals"], a["false_refusals"], a["missed_unanswerable"]) == (2, 2, 0)
    assert a["false_refusals_by_expected"] == {"allowed": 2}
    assert a["precision"]["passed"] == 2 and a["precision"]["total"] == 4 and a["precision"]["ci95"] == [0.15, 0.85]
    assert a["recall"] == {"passed": 2, "total": 2, "accuracy": 1.0, "ci95": [0.3424, 1.0]}
    assert a["by_role"]["viewer"]["precision"]["total"] == 2
    result.stdout.fnmatch_lines(['*answerability ("not answerable" said): precision 50.0% (2/4, 95% CI 15.0%-85.0%), recall 100.0% (2/2*'])
    assert 'id="answerability"' in (project / "r.html").read_text()


# -- 8. verified answers -------------------------------------------------------------------------
VERIFIED = """\
- id: customers_by_country
  datasource: chinook
  questions: ["how many customers do we have, by country"]
  sql: SELECT Country, COUNT(CustomerId) AS customer_count FROM Customer GROUP BY Country
"""


def _add_verified(project: Path, entries: str) -> None:
    """A curated query more, after the demo's own (its nl2sql.yaml ends with its verified: list)."""
    text = (project / "nl2sql.yaml").read_text()
    assert text.rstrip().splitlines()[-1].startswith("    ORDER BY sales DESC")
    (project / "nl2sql.yaml").write_text(text + entries)


def test_verified_answers_say_so_and_accuracy_is_given_per_source(pytester: pytest.Pytester, project: Path) -> None:
    _add_verified(project, VERIFIED)
    result, data = _run(pytester)
    items = {r["nodeid"]: r for r in data["items"]}
    assert items["evals/mini.yaml::mini_001[admin]"]["source"] == "verified"
    assert items["evals/mini.yaml::mini_002[admin]"]["source"] == "generated"
    viewer = items["evals/mini.yaml::mini_001[viewer]"]  # the curated SQL still runs under the role's policy
    assert viewer["status"] == "refused" and viewer["verdict"] == "passed"
    by_source = data["summary"]["by_source"]
    assert by_source["verified"]["passed"] == by_source["verified"]["total"] == 2
    assert by_source["generated"]["total"] == 2
    result.stdout.fnmatch_lines([" per source (answer items; verified: a curated query answered):", "  generated *", "  verified *100.0%  (2/2, *"])
    assert "accuracy, source verified" in (project / "r.html").read_text()


def test_a_bad_verified_section_is_one_line_naming_the_fix(pytester: pytest.Pytester, project: Path) -> None:
    _add_verified(project, VERIFIED.replace("datasource: chinook", "datasource: chinok"))
    result = pytester.runpytest(*MINI)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*verified[[]2[]].datasource: unknown datasource 'chinok' (did you mean 'chinook'?)*"])


# -- 4. lenient reading --------------------------------------------------------------------------
def test_presentation_only_misses_are_counted_beside_an_unchanged_verdict(pytester: pytest.Pytester, project: Path) -> None:
    # the engine adds a column the gold does not have: a miss under the rule, presentation only when read leniently
    _edit(project / "evals" / "mini.yaml", "    - {expr: {count: t.TrackId}, alias: tracks}\n",
          "    - {expr: {count: t.TrackId}, alias: tracks}\n    - {expr: {max: t.TrackId}, alias: last_id}\n")
    result, data = _run(pytester)
    le = data["summary"]["lenient"]
    assert le["misses"] == 2 and le["presentation_only"] == 2 and le["by_kind"] == {"extra_columns": 2}
    assert le["execution_accuracy"]["passed"] == le["execution_accuracy"]["total"] == 4
    assert data["summary"]["execution_accuracy"]["passed"] == 2  # the verdict is the configured rule
    items = {r["nodeid"]: r for r in data["items"]}
    miss = items["evals/mini.yaml::mini_002[admin]"]
    assert miss["verdict"] == "failed" and miss["lenient"] == {"matched": True, "kind": "extra_columns"}
    assert miss["scores"]["lenient_match"]["gating"] is False
    result.stdout.fnmatch_lines(["*info lenient_match: matches when read leniently (extra columns): a presentation-only miss*",
                                 "*lenient reading: 2 of 2 result_match misses are presentation only (extra columns 2); the verdict is unchanged"])
    page = (project / "r.html").read_text()
    assert 'id="lenient"' in page and "a presentation-only miss" in page


# -- 3. faithfulness -----------------------------------------------------------------------------
UNFAITHFUL_ENGINE = """
import attrs
import pytest

from pytest_nl2sql.engine.reference import ReferenceEngine


class Chatty(ReferenceEngine):
    def answer(self, question, role, llm):
        a = super().answer(question, role, llm)
        if a.status != "ok":
            return a
        if question.startswith("How many tracks"):
            return attrs.evolve(a, text="There are 9 rows; the top media type is \\"Vinyl\\" with 3034 tracks.")
        return a


@pytest.hookimpl(tryfirst=True)
def pytest_nl2sql_make_engine(config, project):
    return Chatty(project)
"""


def test_the_answer_text_is_checked_against_its_rows(pytester: pytest.Pytester, project: Path) -> None:
    (project / "conftest.py").write_text(UNFAITHFUL_ENGINE)
    result, data = _run(pytester)
    fa = data["summary"]["faithfulness"]
    assert fa["total"] == 4 and fa["passed"] == 2  # mini_001 admin/analyst: the reference engine's text
    assert fa["unfaithful"] == ["evals/mini.yaml::mini_002[admin]", "evals/mini.yaml::mini_002[viewer]"]
    items = {r["nodeid"]: r for r in data["items"]}
    bad = items["evals/mini.yaml::mini_002[admin]"]
    assert bad["verdict"] == "passed"  # not gating: the verdict is the rows'
    assert bad["unsupported"] == ["9 rows (the answer has 5)", "'Vinyl'"]
    assert bad["text"].startswith("There are 9 rows")
    assert items["evals/mini.yaml::mini_001[admin]"]["scores"]["faithfulness"]["passed"] is True
    result.stdout.fnmatch_lines(["  faithful answer text          50.0%  (2/4, *"])
    assert "faithful answer text" in (project / "r.html").read_text()
    # off: the scorer's plugin removed, and for refusals (no text)
    _, off = _run(pytester, "off.json", "-p", "no:nl2sql_faithfulness")
    assert "faithfulness" not in off["summary"]
    assert "faithfulness" not in items["evals/mini.yaml::mini_001[viewer]"]["scores"]


# -- 5. engine steps -----------------------------------------------------------------------------
def test_the_reference_engine_reports_its_steps(pytester: pytest.Pytester, project: Path) -> None:
    result, data = _run(pytester)
    steps = data["summary"]["steps"]
    assert {"router", "planner", "sql_generation", "execution"} <= set(steps)
    assert steps["router"]["runs"] == data["summary"]["ran"]
    assert steps["execution"]["runs"] == 4
    assert steps["execution"]["latency_p50_s"] is None  # mode plans: no percentiles (equal runs, equal reports) ...
    assert all(s["latency_s"] >= 0 for r in data["items"] for s in r["steps"])  # ... each record keeps its steps' times
    assert steps["sql_generation"]["errors"] == {"SECURITY_VIOLATION": 1}  # mini_001 as viewer: refused
    assert data["summary"]["step_errors"] == {"SECURITY_VIOLATION": 1}
    record = next(r for r in data["items"] if r["nodeid"] == "evals/mini.yaml::mini_002[admin]")
    assert [s["name"] for s in record["steps"]] == ["router", "planner", "sql_generation", "execution"]
    result.stdout.fnmatch_lines(["*engine steps: step*runs*p50 s*p95 s*tokens in*errors", "*sql_generation*SECURITY_VIOLATION 1"])
    assert 'id="steps"' in (project / "r.html").read_text()


MONTHS_CASE = """\
- id: mini_008
  question: How many invoices were issued per month in early 2009?
  datasources: [chinook]
  status: approved
  origin: hand
  tags: [dates]
  outcome: {admin: allowed}
  order_matters: false
  sql: |
    SELECT strftime('%Y-%m', InvoiceDate) AS month, COUNT(*) AS invoices FROM Invoice
    WHERE InvoiceDate < '2009-04-01' GROUP BY month
  plan: {datasource: chinook, from: Invoice, select: [InvoiceDate]}  # not read: the engine below answers itself
"""

DATED_ENGINE = """
import sqlite3

import pytest

from pytest_nl2sql.engine.protocol import Answer
from pytest_nl2sql.engine.reference import ReferenceEngine

SQL = ("SELECT date(InvoiceDate, 'start of month') AS month, COUNT(*) AS invoices FROM Invoice "
       "WHERE InvoiceDate < '2009-04-01' GROUP BY month")


class Dated(ReferenceEngine):
    def answer(self, question, role, llm):
        if question.startswith("How many invoices were issued per month"):
            with sqlite3.connect("data/chinook.sqlite") as con:
                rows = con.execute(SQL).fetchall()
            return Answer(status="ok", sql=SQL, datasources=("chinook",), columns=("month", "invoices"), rows=rows)
        return super().answer(question, role, llm)


@pytest.hookimpl(tryfirst=True)
def pytest_nl2sql_make_engine(config, project):
    return Dated(project)
"""


def test_a_month_label_against_the_first_of_the_month_is_a_presentation_only_miss(pytester: pytest.Pytester, project: Path) -> None:
    suite = project / "evals" / "mini.yaml"
    suite.write_text(suite.read_text() + MONTHS_CASE)
    (project / "conftest.py").write_text(DATED_ENGINE)
    result = pytester.runpytest(*MINI, "--nl2sql-regenerate", "--nl2sql-out", "r.json", "-k", "mini_008")
    data = json.loads((project / "r.json").read_text())
    (item,) = data["items"]
    assert item["verdict"] == "failed"  # the configured rule: a label is not a date
    assert item["lenient"] == {"matched": True, "kind": "period_label"}
    assert data["summary"]["lenient"]["by_kind"] == {"period_label": 1}
    result.stdout.fnmatch_lines(["*lenient reading: 1 of 1 result_match misses are presentation only (period label 1)*"])
