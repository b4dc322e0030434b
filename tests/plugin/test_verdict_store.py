"""Verdicts remembered across runs (issue 28): a second run over the same SQL, schema and roles
asks neither the guard nor the validator again, and reports the same outcomes; a store edited
in place, or a cache folder turned off, is only a miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugin.test_parse_once import PREDICTIONS

COUNT_CHECKS = """
import json
import pytest_nl2sql.datasources.guard as guard
import pytest_nl2sql.engine.validator as validator

computed = {"guard": 0, "validator": 0}
_check, _validate = guard._check_statement, validator._validate_sql

def check(*a, **k):
    computed["guard"] += 1
    return _check(*a, **k)

def validate(*a, **k):
    computed["validator"] += 1
    return _validate(*a, **k)

guard._check_statement = check
validator._validate_sql = validate

def pytest_sessionfinish(session):
    with open("computed.json", "w") as f:
        json.dump(computed, f)
"""



def _run(pytester: pytest.Pytester, project: Path) -> tuple[dict[str, int], dict[tuple[str, str], str]]:
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/mini.yaml", "--nl2sql-predictions", "preds.jsonl", "--nl2sql-out", "r.json",
        "-p", "no:cacheprovider", "-n", "0",
    )
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    items = json.loads((project / "r.json").read_text())["items"]
    computed = json.loads((project / "computed.json").read_text())
    return computed, {(i["case_id"], i["role"]): (i["verdict"], i["status"]) for i in items}


@pytest.fixture
def store_project(pytester: pytest.Pytester, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    pytester.makeconftest(COUNT_CHECKS)
    (project / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))
    monkeypatch.setenv("NL2SQL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_second_run_reads_the_verdicts_of_the_first(pytester: pytest.Pytester, project: Path, store_project: Path) -> None:
    cold, first = _run(pytester, project)
    assert cold["guard"] >= 2 and cold["validator"] >= 2  # two SQL texts, several roles
    [store] = store_project.glob("verdicts-*.json")
    assert store.read_bytes().startswith(b"pytest-nl2sql verdict cache sha256=")
    warm, second = _run(pytester, project)
    assert warm == {"guard": 0, "validator": 0}
    assert second == first and {v for v, _ in first.values()} == {"passed"}


def test_a_store_edited_in_place_is_a_miss(pytester: pytest.Pytester, project: Path, store_project: Path) -> None:
    cold, first = _run(pytester, project)
    [store] = store_project.glob("verdicts-*.json")
    # a forged "ok" for every entry, without a matching sum: nothing of it is believed
    header, _, body = store.read_bytes().partition(b"\n")
    doc = json.loads(body)
    doc["entries"] = {k: None if v is None or isinstance(v, list) and len(v) == 2 else v for k, v in doc["entries"].items()}
    store.write_bytes(header + b"\n" + json.dumps(doc).encode())
    again, second = _run(pytester, project)
    assert again == cold and second == first


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_cache_folder_that_cannot_be_one_is_said_once(
    pytester: pytest.Pytester, project: Path, store_project: Path, monkeypatch: pytest.MonkeyPatch, workers: str
) -> None:
    """NL2SQL_CACHE_DIR naming a file: the run goes on cold (the same verdicts) and says why
    once -- not one line per worker -- naming the folder and the two ways out; a usable folder
    and ``off`` say nothing."""
    store_project.parent.mkdir(parents=True, exist_ok=True)
    store_project.write_text("not a folder\n")
    args = ["--nl2sql-suite", "evals/mini.yaml", "--nl2sql-predictions", "preds.jsonl", "--nl2sql-out", "r.json", "-p", "no:cacheprovider", "-n", workers]
    result = pytester.runpytest_subprocess(*args)
    out = result.stdout.str()
    assert result.ret == 0, out + result.stderr.str()
    said = [ln for ln in out.splitlines() if "PytestConfigWarning: pytest-nl2sql: the cache folder" in ln]
    assert len(said) == 1, out
    assert f"the cache folder {store_project} (NL2SQL_CACHE_DIR) is not a folder" in said[0]
    assert "NL2SQL_CACHE_DIR=off" in said[0] and "(cold)" in said[0]
    assert {i["verdict"] for i in json.loads((project / "r.json").read_text())["items"]} == {"passed"}
    assert store_project.read_text() == "not a folder\n"  # never written to
    for usable in (str(store_project.parent / "a-folder"), "off"):
        monkeypatch.setenv("NL2SQL_CACHE_DIR", usable)
        again = pytester.runpytest_subprocess(*args)
        assert again.ret == 0 and "cache folder" not in again.stdout.str(), again.stdout.str()


def test_no_store_when_the_cache_is_off(pytester: pytest.Pytester, project: Path, store_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NL2SQL_CACHE_DIR", "off")
    cold, _ = _run(pytester, project)
    again, _ = _run(pytester, project)
    assert again == cold and cold["validator"] >= 2
    assert not store_project.exists()
