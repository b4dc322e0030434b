"""A newcomer's dead ends, each hit as a user hits it: the `nl2sql` command or pytest in a
temporary folder, and what it must say instead of silently doing nothing (or the wrong thing)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.config import load_config
from pytest_nl2sql.engine.protocol import Answer
from pytest_nl2sql.upkeep.feedback import store_for

CLI = [sys.executable, "-m", "pytest_nl2sql.cli"]
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path, demo_dir: Path) -> Path:
    root = tmp_path / "proj"
    shutil.copytree(demo_dir, root)
    return root


def test_eval_run_outside_a_project_is_a_usage_error_that_runs_nothing(tmp_path: Path) -> None:
    proc = _run([*CLI, "eval", "run"], tmp_path)
    assert proc.returncode == 4
    assert "no nl2sql.yaml found" in proc.stderr and "--config" in proc.stderr
    assert "passed" not in proc.stdout and "collected" not in proc.stdout


def test_an_nl2sql_option_in_an_empty_folder_is_a_usage_error(tmp_path: Path) -> None:
    proc = _run([*PYTEST, "--nl2sql-mode", "retrieval"], tmp_path)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "no nl2sql.yaml found" in proc.stderr and "--nl2sql-config" in proc.stderr


def test_plain_pytest_in_an_empty_folder_is_left_alone(tmp_path: Path) -> None:
    proc = _run([*PYTEST], tmp_path)
    assert proc.returncode == pytest.ExitCode.NO_TESTS_COLLECTED  # not our business: no nl2sql option


def test_an_unknown_tag_is_a_usage_error_with_did_you_mean(project: Path) -> None:
    proc = _run([*PYTEST, "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-cases", "aggregaton"], project)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "did you mean 'aggregation'?" in proc.stderr


def test_role_names_are_case_insensitive_as_in_nl2sql_yaml(project: Path) -> None:
    proc = _run([*PYTEST, "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-roles", "VIEWER", "-q", "--co"], project)
    assert proc.returncode == 0, proc.stderr
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert ids and all(line.endswith("[viewer]") for line in ids)


DRAFT_ONLY = """version: 1
cases:
- id: d1
  question: How many artists are there?
  datasources: [chinook]
  status: draft
  outcome: {admin: allowed}
  sql: SELECT COUNT(*) AS n FROM Artist
"""


def test_nothing_to_do_is_said_as_such(project: Path) -> None:
    (project / "evals" / "drafts.yaml").write_text(DRAFT_ONLY)
    proc = _run([*CLI, "eval", "regenerate", "evals/drafts.yaml"], project)
    assert "nothing to regenerate: no approved case has sql" in proc.stdout
    proc = _run([*CLI, "eval", "audit", "evals/drafts.yaml"], project)
    assert "nothing to audit" in proc.stdout and "no findings" not in proc.stdout


def test_audit_of_a_broken_file_does_not_say_no_findings(project: Path) -> None:
    (project / "evals" / "broken.yaml").write_text("version: 1\ncases:\n- id: x\n  question: 1\n")
    proc = _run([*CLI, "eval", "audit", "evals/broken.yaml"], project)
    assert proc.returncode == 1
    assert "no findings" not in proc.stdout and "did not load" in proc.stdout


def test_seed_count_zero_is_refused_and_keeps_the_drafts(project: Path) -> None:
    drafts = project / "evals" / "seeded.yaml"
    assert _run([*CLI, "eval", "seed", "chinook", "--output", str(drafts), "--count", "3"], project).returncode == 0
    before = drafts.read_bytes()
    proc = _run([*CLI, "eval", "seed", "chinook", "--output", str(drafts), "--count", "0"], project)
    assert proc.returncode == 4 and "--count must be at least 1" in proc.stdout + proc.stderr
    assert drafts.read_bytes() == before


TWO_DATASOURCES = """version: 1
cases:
- id: one
  question: How many artists are there?
  datasources: [chinook]
  status: approved
  outcome: {admin: allowed}
  sql: SELECT COUNT(*) AS n FROM Artist
- id: two
  question: How many artists and tickets are there?
  datasources: [chinook, support]
  status: approved
  outcome: {admin: allowed}
  sql: SELECT COUNT(*) AS n FROM Artist
"""


def test_regenerate_lists_a_two_datasource_case_as_failed_and_writes_the_others(project: Path) -> None:
    suite = project / "evals" / "two.yaml"
    suite.write_text(TWO_DATASOURCES)
    proc = _run([*CLI, "eval", "regenerate", str(suite)], project)
    assert proc.returncode == 1
    assert "failed: case 'two': a case with SQL names one datasource, this names 2" in proc.stdout
    text = suite.read_text()
    assert text.count("rows:") == 1 and "n\": 275}" in text  # case "one" was written


def test_feedback_list_shows_the_ids_rate_takes_and_export_defaults_to_thumbs_up(project: Path) -> None:
    store = store_for(load_config(project / "nl2sql.yaml"))
    store.record("How many artists are there?", "admin", Answer(status="ok", sql="SELECT COUNT(*) AS n FROM Artist", datasources=("chinook",)))
    store.record("How many albums are there?", "admin", Answer(status="ok", sql="SELECT COUNT(*) AS n FROM Album", datasources=("chinook",)))
    listed = _run([*CLI, "feedback", "list"], project)
    assert listed.returncode == 0
    rows = [line.split() for line in listed.stdout.splitlines()[1:3]]
    assert [r[0] for r in rows] == ["2", "1"]  # newest first, with the run ids
    assert _run([*CLI, "feedback", "rate", "1", "--good"], project).returncode == 0
    assert _run([*CLI, "feedback", "rate", "2", "--bad"], project).returncode == 0
    assert "up" in _run([*CLI, "feedback", "list"], project).stdout
    out = project / "evals" / "fb.yaml"
    proc = _run([*CLI, "feedback", "export", str(out)], project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = out.read_text()
    assert "How many artists are there?" in text and "albums" not in text


NO_ROWS = "approved and allowed for {}, but has no rows to compare with (a suite error): write them from the database with `pytest-nl2sql eval regenerate SUITE` (or pytest --nl2sql-regenerate)"


def test_suite_check_with_the_project_names_every_wrong_name_at_its_line(project: Path) -> None:
    bad = project / "evals" / "bad.yaml"
    bad.write_bytes((Path(__file__).parent / "bad_names.yaml").read_bytes())
    proc = _run([*CLI, "suite", "check", "evals/bad.yaml"], project)  # nl2sql.yaml found above
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "evals/bad.yaml:5:16: case 'b1': unknown datasource 'chinok' in nl2sql.yaml (did you mean 'chinook'?)",
        "evals/bad.yaml:7:12: case 'b1': unknown role 'superuser' in nl2sql.yaml (known: admin, analyst, viewer); "
        "add it to the roles of nl2sql.yaml or fix the case's outcome",
        f"evals/bad.yaml:8:8: case 'b1': {NO_ROWS.format('superuser')}",
        f"evals/bad.yaml:16:8: case 'b2': {NO_ROWS.format('admin')}",
        "evals/bad.yaml:14:11: case 'b2': unknown table 'Custmer' in chinook (did you mean 'Customer'?)",
        "evals/bad.yaml:15:12: case 'b2': unknown column Customer.Contry in chinook (did you mean 'Country'?)",
        "evals/bad.yaml:18:5: case 'b2': plan: unknown key 'groupby' (did you mean 'group_by'?)",
        f"evals/bad.yaml:26:8: case 'b3': {NO_ROWS.format('admin')}",
        "evals/bad.yaml:28:5: case 'b3': plan reads names chinook does not have: Genre.Nmae (did you mean 'Name'?)",
        # the gold SQL compiled against the schema: the misspelt column where it is written
        "evals/bad.yaml:37:28: case 'b4': sql reads 'Contry', which chinook does not have (did you mean 'Country'?)",
    ]
    ok = _run([*CLI, "suite", "check", "evals/chinook.yaml"], project)
    assert ok.returncode == 0 and "checked against" in ok.stdout
    alone = project.parent / "alone.yaml"
    alone.write_bytes(bad.read_bytes())
    proc = _run([*CLI, "suite", "check", str(alone)], project.parent)  # no project above it
    assert proc.returncode == 0 and "file only: no nl2sql.yaml found" in proc.stdout
    proc = _run([*CLI, "suite", "check", str(alone), "--config", str(project / "nl2sql.yaml")], project.parent)
    assert proc.returncode == 1 and "did you mean 'chinook'?" in proc.stderr


def _strip_plans(text: str) -> str:
    out, skip = [], None
    for line in text.splitlines(keepends=True):
        if skip is not None:
            if not line.strip() or len(line) - len(line.lstrip(" ")) > skip:
                continue
            skip = None
        stripped = line.lstrip(" ")
        if stripped.startswith("plan:"):
            skip = len(line) - len(stripped)
            continue
        out.append(line)
    return "".join(out)


def test_suite_plan_gives_the_chinook_suite_back_its_plans(project: Path) -> None:
    suite = project / "evals" / "chinook.yaml"
    bare = _strip_plans(suite.read_text())
    assert "plan:" not in bare
    suite.write_text(bare)
    refused = _run([*PYTEST, "--nl2sql-suite", "evals/chinook.yaml"], project)
    assert refused.returncode == pytest.ExitCode.USAGE_ERROR and "cases without a plan" in refused.stderr
    assert "pytest-nl2sql suite plan" in refused.stderr  # the command that fixes it
    proc = _run([*CLI, "suite", "plan", "evals/chinook.yaml"], project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "could not be planned" in proc.stdout and "0 could not be planned" in proc.stdout
    assert "clarify cases have no SQL" in proc.stdout
    after = suite.read_text()
    assert _strip_plans(after) == bare  # every byte but the new plans is as it was
    run = _run([*PYTEST, "--nl2sql-suite", "evals/chinook.yaml", "-q", "--nl2sql-clarify"], project)
    last = run.stdout.strip().splitlines()[-1]
    passed = int(last.split(" passed")[0].split()[-1])
    failed = int(last.split(" failed")[0].split()[-1]) if " failed" in last else 0
    assert passed / (passed + failed) >= 0.9, last  # only the three clarify cases need hand plans
    assert _run([*CLI, "suite", "plan", "evals/chinook.yaml"], project).stdout.count("already had a plan") == 1


def test_suite_plan_says_which_sql_the_plan_language_cannot_express(project: Path) -> None:
    suite = project / "evals" / "u.yaml"
    suite.write_text(
        "version: 1\ncases:\n- id: u1\n  question: Names of artists and genres?\n  datasources: [chinook]\n"
        "  status: approved\n  outcome: {admin: allowed}\n  sql: SELECT Name FROM Artist UNION SELECT Name FROM Genre\n"
    )
    before = suite.read_bytes()
    proc = _run([*CLI, "suite", "plan", str(suite)], project)
    assert proc.returncode == 1
    assert "failed: case 'u1': the plan language cannot express a UNION" in proc.stdout
    assert suite.read_bytes() == before


def test_seeded_drafts_come_with_verified_plans(project: Path) -> None:
    drafts = project / "evals" / "seeded.yaml"
    proc = _run([*CLI, "eval", "seed", "chinook", "--output", str(drafts), "--count", "5"], project)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 drafts got a verified plan" in proc.stdout
    assert drafts.read_text().count("\n  plan:") == 5


def test_an_alternative_that_only_renames_columns_is_redundant(project: Path) -> None:
    suite = project / "evals" / "alt.yaml"
    suite.write_text(
        "version: 1\ncases:\n- id: a1\n  question: How many artists are there?\n  datasources: [chinook]\n"
        "  status: approved\n  outcome: {admin: allowed}\n  sql: SELECT COUNT(*) AS n FROM Artist\n"
        "  alt_sql: [SELECT COUNT(ArtistId) AS artists FROM Artist]\n"
    )
    assert _run([*CLI, "eval", "regenerate", str(suite)], project).returncode == 0
    proc = _run([*CLI, "eval", "audit", str(suite)], project)
    assert "[redundant-alt] alt_sql[1] returns the same rows as sql" in proc.stdout


def test_an_unknown_role_is_a_clear_error_not_a_key_error(project: Path) -> None:
    from pytest_nl2sql.api import Engine
    from pytest_nl2sql.errors import UnknownRole

    engine = Engine.from_config(project / "nl2sql.yaml")
    with pytest.raises(UnknownRole) as caught:
        engine.route("How many artists are there?", "nobody")
    assert str(caught.value) == "unknown role 'nobody' (known roles: admin, analyst, viewer)"
    assert engine.route("How many artists are there?", "ADMIN").top == "chinook"  # case-insensitive


def test_rows_in_another_order_say_so_and_list_no_missing_rows() -> None:
    from pytest_nl2sql.scoring.matching import MatchRule, match_rows

    rule = MatchRule.build(None, order_matters=True)
    result = match_rows(("a", "b"), [(1, "x"), (2, "y")], ("a", "b"), [(2, "y"), (1, "x")], rule)
    assert not result.matched
    assert result.reason.startswith("the same rows in another order (order matters for this case)")
    assert result.missing == () and result.unexpected == ()


def test_a_refusal_failure_does_not_talk_about_our_validator() -> None:
    from pytest_nl2sql.engine.protocol import Answer
    from pytest_nl2sql.scoring.scorers import ScoreContext, _outcome
    from pytest_nl2sql.suitefile.model import EvalCase, Outcome

    case = EvalCase(id="c", question="q", datasources=("d",), outcome={"viewer": Outcome.REFUSED})
    ctx = ScoreContext(case=case, role="viewer", expected=Outcome.REFUSED, answer=Answer(status="ok", rows=[(1,)]), mode="plans")
    score = _outcome(ctx)
    assert score is not None and not score.passed
    assert score.detail == "expected a refusal (status refused, no rows), got ok with rows"


def test_regenerate_suggests_the_datasource_a_misspelt_name_meant(project: Path) -> None:
    suite = project / "evals" / "typo.yaml"
    suite.write_text(TWO_DATASOURCES.split("- id: two")[0].replace("[chinook]", "[chinok]"))
    proc = _run([*CLI, "eval", "regenerate", str(suite)], project)
    assert proc.returncode == 1
    assert "failed: case 'one': unknown datasource 'chinok' (did you mean 'chinook'?" in proc.stdout


SUITE_ERRORS = """\
version: 1
cases:
- id: ok1
  question: How many artists are there?
  datasources: [chinook]
  status: approved
  outcome: {admin: allowed}
  sql: SELECT COUNT(*) AS n FROM Artist
  rows:
  - {n: 275}
  plan: {datasource: chinook, from: Artist, select: [{expr: {count: "*"}, alias: n}]}
- id: norows
  question: How many albums are there?
  datasources: [chinook]
  status: approved
  outcome: {admin: allowed}
  sql: SELECT COUNT(*) AS n FROM Album
  plan: {datasource: chinook, from: Album, select: [{expr: {count: "*"}, alias: n}]}
"""


def test_an_approved_case_without_rows_is_a_suite_error_not_an_engine_failure(project: Path) -> None:
    (project / "evals" / "errs.yaml").write_text(SUITE_ERRORS)
    check = _run([*CLI, "suite", "check", "evals/errs.yaml"], project)
    assert check.returncode == 1 and "case 'norows': approved and allowed for admin, but has no rows" in check.stderr
    proc = _run([*PYTEST, "--nl2sql-suite", "evals/errs.yaml", "--nl2sql-out", "r.json", "-rA"], project)
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED
    assert "1 passed, 1 error" in proc.stdout and "failed" not in proc.stdout.splitlines()[-1]
    assert "suite error: " in proc.stdout and "errs.yaml:12:3: case 'norows'" in proc.stdout and "pytest-nl2sql eval regenerate" in proc.stdout
    import json

    data = json.loads((project / "r.json").read_text())
    assert data["summary"]["errors"] == 1 and data["summary"]["accuracy"]["total"] == 1
    assert data["summary"]["accuracy"]["accuracy"] == 1.0  # the suite's error is outside the figures


def test_regenerate_with_failures_exits_non_zero_through_pytest_too(project: Path) -> None:
    text = SUITE_ERRORS.replace("SELECT COUNT(*) AS n FROM Album", "SELECT COUNT(*) AS n FROM Albumm")
    (project / "evals" / "errs.yaml").write_text(text)
    cli = _run([*CLI, "eval", "regenerate", "evals/errs.yaml"], project)
    assert cli.returncode == 1
    proc = _run([*PYTEST, "--nl2sql-suite", "evals/errs.yaml", "--nl2sql-regenerate"], project)
    assert proc.returncode != 0 and "1 failed" in proc.stdout


def test_an_unknown_role_is_refused_by_every_door(project: Path) -> None:
    (project / "evals" / "roles.yaml").write_text(SUITE_ERRORS.replace("outcome: {admin: allowed}\n  sql: SELECT COUNT(*) AS n FROM Artist",
                                                                       "outcome: {admn: allowed}\n  sql: SELECT COUNT(*) AS n FROM Artist"))
    want = "unknown role 'admn' in nl2sql.yaml (did you mean 'admin'?)"
    for argv in (["suite", "check", "evals/roles.yaml"], ["eval", "regenerate", "evals/roles.yaml"], ["eval", "audit", "evals/roles.yaml"]):
        proc = _run([*CLI, *argv], project)
        assert proc.returncode == 1, (argv, proc.stdout, proc.stderr)
        assert want in proc.stdout + proc.stderr, argv
    proc = _run([*PYTEST, "--nl2sql-suite", "evals/roles.yaml"], project)
    assert proc.returncode != 0 and "unknown role 'admn'" in proc.stdout + proc.stderr


def test_a_dedented_key_names_the_line_before_too(project: Path) -> None:
    (project / "evals" / "dedent.yaml").write_text(
        "version: 1\ncases:\n- id: c1\n  question: Which?\n  datasources: [chinook]\n  status: approved\n"
        "origin: hand\n  outcome: {admin: allowed}\n  sql: SELECT 1\n"
    )
    proc = _run([*CLI, "suite", "check", "evals/dedent.yaml"], project)
    assert proc.returncode == 1
    assert "evals/dedent.yaml:8:10: YAML syntax error" in proc.stderr
    assert "check the indentation of line 7 and line 8" in proc.stderr  # line 7 is the dedented key


def test_the_summary_says_all_items_and_answer_cases_apart(project: Path) -> None:
    proc = _run([*PYTEST, "--nl2sql-suite", "evals/chinook.yaml", "-q"], project)
    assert proc.returncode == 0
    lines = {ln.split("  ")[1].strip(): ln for ln in proc.stdout.splitlines() if ln.startswith("  accuracy (")}
    assert set(lines) == {"accuracy (all items)", "accuracy (answer cases)"}
    all_total = int(lines["accuracy (all items)"].split("/")[1].split(",")[0])
    answer_total = int(lines["accuracy (answer cases)"].split("/")[1].split(",")[0])
    assert answer_total < all_total  # refusals and unanswerable items are not answer cases


def test_a_datasource_that_cannot_be_opened_is_said_once(project: Path) -> None:
    config = project / "nl2sql.yaml"
    config.write_text(config.read_text().replace("sqlite:///data/chinook.sqlite", "sqlite:///data/missing.sqlite"))
    (project / "evals" / "errs.yaml").write_text(SUITE_ERRORS)
    for argv in (["eval", "regenerate", "evals/errs.yaml"], ["eval", "audit", "evals/errs.yaml"]):
        proc = _run([*CLI, *argv], project)
        out = proc.stdout + proc.stderr
        assert proc.returncode == 1, argv
        assert out.count("missing.sqlite does not exist") == 1, out  # the reason once, at the first case
        assert "cannot be opened (see case 'ok1')" in out
