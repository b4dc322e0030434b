"""Free when unused (issue 28): in a project that never uses the plugin, having the package
installed imports nothing past the plugin's registration; a run that uses it does not have the
package's own modules assertion-rewritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DUMP_MODULES = """
import json, sys

def pytest_sessionfinish(session):
    loaders = {n: type(getattr(m, "__loader__", None)).__name__ for n, m in list(sys.modules.items())}
    with open("modules.json", "w") as f:
        json.dump(loaders, f)
"""

REGISTRATION = {"pytest_nl2sql", "pytest_nl2sql.plugin", "pytest_nl2sql.plugin.hookspecs", "pytest_nl2sql.plugin.options"}


def _modules(pytester: pytest.Pytester, *args: str) -> dict[str, str]:
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    return json.loads((pytester.path / "modules.json").read_text())


def test_a_project_without_suites_imports_nothing_of_the_pipeline(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(DUMP_MODULES)
    pytester.makepyfile(test_a="def test_a():\n    assert 1 + 1 == 2\n")
    with_plugin = _modules(pytester, "test_a.py")
    without = _modules(pytester, "test_a.py", "-p", "no:nl2sql")
    extra = set(with_plugin) - set(without)
    assert extra <= REGISTRATION, sorted(extra - REGISTRATION)
    assert not any(n.split(".")[0] in ("sqlglot", "sqlalchemy", "duckdb", "psycopg") for n in extra)
    assert "pytest_nl2sql.plugin" in with_plugin  # registered (its options are there), not absent


MADE = """
import json, sys

def pytest_sessionfinish(session):
    options = sys.modules["pytest_nl2sql.plugin.options"]
    with open("made.json", "w") as f:
        json.dump("Settings" in vars(options), f)
"""


def test_a_dormant_run_makes_no_settings_class(pytester: pytest.Pytester) -> None:
    """The run settings' class (a frozen dataclass of 37 fields, ~5 ms to make) is made when a
    run uses the plugin, not in every run of an environment where the package is installed."""
    pytester.makeconftest(MADE)
    pytester.makepyfile(test_a="def test_a():\n    assert 1 + 1 == 2\n")
    assert pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_a.py").ret == 0
    assert json.loads((pytester.path / "made.json").read_text()) is False


def test_a_run_that_uses_the_plugin_makes_it_as_before(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(MADE)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nl2sql-suite", "evals/mini.yaml", "--nl2sql-mode", "retrieval")
    assert result.ret in (0, 1), result.stdout.str()
    assert json.loads((pytester.path / "made.json").read_text()) is True
    from pytest_nl2sql.plugin.options import Settings, settings_class

    assert settings_class() is Settings and Settings.__qualname__ == "Settings"
    a = Settings(suites=(), config=None, mode="plans", roles=None, cases=None, clarify=False, out=None, baseline=None,
                 update_baseline=False, strict_baseline=False, max_cost=None, recall_threshold=None, regenerate=False,
                 allow_packaged=False, predictions=None, audit=False, audit_warnings=False, audit_mutants=False, seed=None,
                 seed_out=None, seed_count=0, explicit=True)
    assert repr(a).startswith("Settings(suites=(), config=None, mode='plans'") and a == Settings(**vars(a)) and not a.routes_only
    with pytest.raises(AttributeError):
        a.mode = "full"  # type: ignore[misc]  # frozen


def test_the_options_are_there_while_dormant(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess("--help")
    assert "--nl2sql-suite" in result.stdout.str()


def test_a_suite_run_loads_the_pipeline_without_rewriting_it(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makeconftest(DUMP_MODULES)
    # -p names the module itself: pytest marks it (and all below it) for assertion rewriting,
    # as it marks the whole package of an installed (non-editable) entry point
    loaders = _modules(pytester, "--nl2sql-suite", "evals/mini.yaml", "-p", "no:nl2sql", "-p", "pytest_nl2sql.plugin")
    ours = {n: kind for n, kind in loaders.items() if n.startswith("pytest_nl2sql.")}
    assert "pytest_nl2sql.plugin.session" in ours and "pytest_nl2sql.datasources.syntax" in ours
    rewritten = sorted(n for n, kind in ours.items() if kind == "AssertionRewritingHook")
    assert set(rewritten) <= REGISTRATION, rewritten


def test_an_nl2sql_yaml_above_still_gets_its_hint(pytester: pytest.Pytester) -> None:
    """Dormancy does not swallow the hint for a project run from a subfolder (issue 22)."""
    (pytester.path / "nl2sql.yaml").write_text("version: 1\n")
    sub = pytester.mkdir("sub")
    (sub / "pytest.ini").write_text("[pytest]\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(sub)
        result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert "is above this folder" in result.stdout.str() + result.stderr.str()
