"""Inputs that used to end in a traceback end in one clear usage error: an `engine:` that is no
engine factory, a baseline nested past any recursion limit, a suite whose lock another process
holds while --nl2sql-regenerate wants to write it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.plugin.engine_factory import EngineFactoryError, build_engine, check_factory
from pytest_nl2sql.suitefile.lock import lock_for

DEFAULT = "engine: pytest_nl2sql.engine.reference:make_engine"


def _engine(project: Path, dotted: str) -> None:
    cfg = project / "nl2sql.yaml"
    text = cfg.read_text()
    assert DEFAULT in text
    cfg.write_text(text.replace(DEFAULT, f"engine: {dotted}"))


def _usage_error(result: pytest.RunResult, *lines: str) -> None:
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(list(lines))
    assert "Traceback" not in result.stderr.str() + result.stdout.str()


FACTORIES = '''
class NoEngine:
    def __init__(self, project):
        pass

def returns_a_string(project):
    return "not an engine"

def takes_two(project, other):
    return None

def explodes(project):
    raise RuntimeError("no database for you")

class Engine:
    def __init__(self, project):
        self.project = project
    def route(self, question, role):
        raise NotImplementedError
    def answer(self, question, role, llm):
        raise NotImplementedError

def make(project):
    return Engine(project)
'''


@pytest.mark.parametrize(
    ("dotted", "message"),
    [
        ("os:system", "*'os:system' is a builtin function, not an engine factory*"),
        ("subprocess:run", "*'subprocess:run' is part of Python's standard library (subprocess)*"),
        ("pytest_nl2sql:__version__", "*is a str (nothing that can be called)*"),
        ("factories:NoEngine", "*is a class without route() and answer()*"),
        ("factories:returns_a_string", "*returned 'str', which has no route() and answer()*"),
        ("factories:takes_two", "*must take the Config as its one argument*takes_two(project, other)*"),
        ("factories:explodes", "*'factories:explodes' failed: RuntimeError: no database for you*"),
        ("factories:nothing_here", "*cannot import 'factories:nothing_here'*"),
    ],
)
def test_an_engine_that_is_no_engine_factory_is_a_usage_error(
    pytester: pytest.Pytester, project: Path, dotted: str, message: str
) -> None:
    (project / "factories.py").write_text(FACTORIES)
    _engine(project, dotted)
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider", "-o", "pythonpath=.",
    )
    _usage_error(result, message)


def test_os_system_is_refused_before_it_is_called(tmp_path: Path) -> None:
    import os

    called: list[str] = []

    class Spy:  # a "config" that notices when something uses it as a path or a command
        def __fspath__(self) -> str:
            called.append("fspath")
            return str(tmp_path / "nothing-here")

        def __str__(self) -> str:
            called.append("str")
            return "true"

    with pytest.raises(EngineFactoryError, match="builtin"):
        check_factory("os:system", os.system)
    for dotted in ("os:system", "os:remove", "builtins:exec", "shutil:rmtree", "subprocess:Popen", "pathlib:Path"):
        with pytest.raises(EngineFactoryError):
            build_engine(dotted, Spy())
    assert called == []  # nothing was run with the config


def test_a_real_factory_still_builds(project: Path) -> None:
    (project / "factories.py").write_text(FACTORIES)
    sys.path.insert(0, str(project))
    try:
        assert type(build_engine("factories:make", object())).__name__ == "Engine"
        assert type(build_engine("factories:Engine", object())).__name__ == "Engine"
    finally:
        sys.path.remove(str(project))
        sys.modules.pop("factories", None)


def test_a_baseline_nested_past_any_recursion_limit_is_a_usage_error(pytester: pytest.Pytester, project: Path) -> None:
    (project / "evals" / "mini.baseline.json").write_text("[" * 100_000)
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider")
    _usage_error(result, "*mini.baseline.json: not a baseline file (nested too deeply to read)*")


def test_a_baseline_with_a_huge_number_is_a_usage_error(pytester: pytest.Pytester, project: Path) -> None:
    (project / "evals" / "mini.baseline.json").write_text('{"version": 1, "failures": {"a": ' + "9" * 5000 + "}}")
    result = pytester.runpytest_subprocess("--nl2sql-suite", "evals/mini.yaml", "-p", "no:cacheprovider")
    _usage_error(result, "*mini.baseline.json: not a baseline file*")


def test_regenerate_waiting_too_long_for_the_lock_is_a_usage_error(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = project / "evals" / "mini.yaml"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pytest_nl2sql.suitefile.lock import lock_for\n"
         "with lock_for(sys.argv[1], timeout=5):\n    print('held', flush=True); time.sleep(60)", str(suite)],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        text = suite.read_text()
        suite.write_text(text.replace("GROUP BY Country\n", "GROUP BY Country HAVING COUNT(CustomerId) > 4\n", 1))  # rows to rewrite
        monkeypatch.setenv("NL2SQL_LOCK_TIMEOUT_S", "0.3")
        result = pytester.runpytest_subprocess(
            "--nl2sql-suite", "evals/mini.yaml", "--nl2sql-regenerate", "-k", "mini_001", "-p", "no:cacheprovider"
        )
        _usage_error(result, "*mini.yaml: another process is writing this file (waited 0.3 s*")
    finally:
        holder.kill()
        holder.wait()
    with lock_for(suite, timeout=1):  # let go by the killed holder
        pass
