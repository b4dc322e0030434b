"""Collection: approved case x role = one item, stable node ids, keywords, clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import ROUTING_SUITE


def test_each_approved_case_and_role_is_one_item(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--collect-only", "-q")
    ids = sorted(line for line in result.outlines if "::" in line)
    assert ids == [
        "evals/mini.yaml::mini_001[admin]",
        "evals/mini.yaml::mini_001[analyst]",
        "evals/mini.yaml::mini_001[viewer]",
        "evals/mini.yaml::mini_002[admin]",
        "evals/mini.yaml::mini_002[viewer]",
        "evals/mini.yaml::mini_003[admin]",
        "evals/mini.yaml::mini_003[viewer]",
    ]


def test_header_counts_approved_drafts_and_retired(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--collect-only")
    result.stdout.fnmatch_lines(["nl2sql: mini.yaml 4 approved cases x 3 roles = 7 items, 1 drafts, 1 retired*"])


def test_clarify_roles_run_only_when_asked(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--collect-only", "-q", "--nl2sql-clarify")
    assert "evals/mini.yaml::mini_004[admin]" in result.outlines


def test_routing_cases_run_once_as_their_role(pytester: pytest.Pytester, project: Path) -> None:
    (project / "evals" / "routing.yaml").write_text(ROUTING_SUITE)
    result = pytester.runpytest("--nl2sql-suite", "evals/routing.yaml", "--nl2sql-mode", "retrieval", "--collect-only", "-q")
    ids = sorted(line for line in result.outlines if "::" in line)
    assert ids == ["evals/routing.yaml::route_001[admin]", "evals/routing.yaml::route_002[admin]", "evals/routing.yaml::route_003[admin]"]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("aggregation and not viewer", {"mini_001[admin]", "mini_001[analyst]", "mini_002[admin]"}),
        ("unanswerable", {"mini_003[admin]", "mini_003[viewer]"}),
        ("hard or medium", {"mini_002[admin]", "mini_002[viewer]"}),
        ("refused", {"mini_001[viewer]"}),
    ],
)
def test_k_matches_tags_roles_difficulty_and_outcome(pytester: pytest.Pytester, project: Path, expr: str, expected: set[str]) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--collect-only", "-q", "-k", expr)
    got = {line.split("::")[1] for line in result.outlines if "::" in line}
    assert got == expected


def test_cases_option_narrows_by_tag_or_datasource(pytester: pytest.Pytester, project: Path) -> None:
    (project / "evals" / "routing.yaml").write_text(ROUTING_SUITE)
    result = pytester.runpytest(
        "--nl2sql-suite", "evals/routing.yaml", "--nl2sql-mode", "retrieval", "--nl2sql-cases", "support", "--collect-only", "-q"
    )
    assert [line for line in result.outlines if "::" in line] == ["evals/routing.yaml::route_001[admin]"]


def test_a_bad_suite_is_a_collection_error_with_path_and_line(pytester: pytest.Pytester, project: Path) -> None:
    (project / "evals" / "bad.yaml").write_text("version: 1\ncases:\n- id: x\n  question: q\n  datasources: [chinook]\n  status: aproved\n  outcome: {admin: allowed}\n")
    result = pytester.runpytest("--nl2sql-suite", "evals/bad.yaml")
    result.stdout.fnmatch_lines(["*bad.yaml:6:11: case 'x': status must be one of draft, approved, retired, got 'aproved'*"])
    assert "Traceback" not in result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERRUPTED


def test_a_missing_suite_file_is_a_usage_error(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/nope.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--nl2sql-suite: no such suite file:*nope.yaml*"])


def test_mode_plans_names_cases_without_plans(pytester: pytest.Pytester, project: Path) -> None:
    (project / "evals" / "routing.yaml").write_text(ROUTING_SUITE)
    result = pytester.runpytest("--nl2sql-suite", "evals/routing.yaml", "--nl2sql-mode", "plans")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*routing.yaml has cases without a plan (route_001, route_002, route_003); "
                                 "routing cases have no plan: run them with --nl2sql-mode retrieval*"])


def test_suites_default_to_what_evals_yaml_names(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--nl2sql-mode", "plans", "--collect-only", "-q")
    assert "evals/mini.yaml::mini_001[admin]" in result.outlines


def test_reportinfo_points_at_the_case_line(pytester: pytest.Pytester, project: Path) -> None:
    items, _ = pytester.inline_genitems("--nl2sql-suite", "evals/mini.yaml")
    (item,) = [i for i in items if i.name == "mini_002[admin]"]
    path, line, name = item.reportinfo()
    case_line = (project / "evals" / "mini.yaml").read_text().splitlines().index("- id: mini_002")  # 0-based
    assert (Path(path).name, line, name) == ("mini.yaml", case_line, "mini_002 [admin]")


def test_an_unknown_role_is_a_usage_error(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml", "--nl2sql-roles", "viewr")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--nl2sql-roles: no case names the role 'viewr' (the suites' roles: admin, analyst, viewer)*"])


def test_a_node_id_or_suite_path_on_the_command_line_runs(pytester: pytest.Pytester, project: Path) -> None:
    result = pytester.runpytest("evals/mini.yaml::mini_001[viewer]")
    result.assert_outcomes(passed=1)
    result = pytester.runpytest("evals/mini.yaml", "--co", "-q")
    assert len([line for line in result.outlines if "::" in line]) == 7


def test_plain_pytest_in_a_project_runs_the_suites_and_the_projects_own_tests(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(test_own="def test_own():\n    assert True\n")
    result = pytester.runpytest()
    result.assert_outcomes(passed=8)  # 7 suite items + the project's own test


def test_a_broken_baseline_is_a_usage_error(pytester: pytest.Pytester, project: Path) -> None:
    (project / "evals" / "mini.baseline.json").write_text('{"version": 1, "failures": [')
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*mini.baseline.json: not a baseline file*"])
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_a_case_naming_an_unknown_datasource_or_role_is_a_collection_error(pytester: pytest.Pytester, project: Path) -> None:
    (project / "evals" / "unk.yaml").write_text(
        "version: 1\ncases:\n- id: u1\n  question: Which genres?\n  datasources: [chinok]\n  status: approved\n"
        "  kind: routing\n  outcome: {analist: allowed}\n"
    )
    result = pytester.runpytest("--nl2sql-suite", "evals/unk.yaml", "--nl2sql-mode", "retrieval")
    result.stdout.fnmatch_lines([
        "*unk.yaml:3:3: case 'u1': unknown datasource 'chinok' in nl2sql.yaml (did you mean 'chinook'?)",
        "*unk.yaml:3:3: case 'u1': unknown role 'analist' in nl2sql.yaml (did you mean 'analyst'?)",
    ])


def test_a_typo_in_a_deny_list_stops_the_run_before_anything_is_read(pytester: pytest.Pytester, project: Path) -> None:
    cfg = project / "nl2sql.yaml"
    cfg.write_text(cfg.read_text().replace("tables: [chinook.Employee]", "tables: [chinook.Employe]", 1))
    result = pytester.runpytest("--nl2sql-suite", "evals/mini.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*roles.analyst: unknown table chinook.employe (did you mean chinook.employee?)*"])
