"""--nl2sql-predictions through the plugin, in a pytest subprocess (serial and -n 2)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

PREDICTIONS = [
    {"id": "shop_001", "sql": "SELECT COUNT(*) FROM customer"},  # right, another column name
    {"id": "shop_002", "sql": "SELECT name FROM customer"},  # wrong rows
    {"id": "shop_004", "sql": "DELETE FROM customer", "cost_usd": 0.25},  # a write: refused
]


def _setup(pytester: pytest.Pytester, shop: Path) -> None:
    for name in ("shop.sqlite", "nl2sql.yaml", "evals.yaml"):
        shutil.copy(shop / name, pytester.path / name)
    shutil.copytree(shop / "evals", pytester.path / "evals")
    (pytester.path / "p.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PREDICTIONS))


def test_replayed_predictions_are_scored_under_xdist(pytester: pytest.Pytester, shop: Path) -> None:
    _setup(pytester, shop)
    before = hashlib.sha256((pytester.path / "shop.sqlite").read_bytes()).hexdigest()
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/shop.yaml", "--nl2sql-config", "nl2sql.yaml", "--nl2sql-predictions", "p.jsonl",
        "--nl2sql-out", "r.json", "-p", "no:cacheprovider", "-n", "2",
    )
    result.assert_outcomes(passed=1, failed=4)  # shop_004 runs for admin and clerk
    items = {(i["case_id"], i["role"]): i for i in json.loads((pytester.path / "r.json").read_text())["items"]}
    assert items["shop_001", "admin"]["verdict"] == "passed"
    assert items["shop_002", "admin"]["scores"]["result_match"]["passed"] is False
    assert items["shop_003", "admin"]["error"] == "no prediction for case shop_003"
    assert items["shop_004", "admin"]["error"].startswith("statement refused:")
    assert items["shop_004", "admin"]["cost_usd"] == 0.25
    assert items["shop_004", "clerk"]["verdict"] == "failed"  # a write is no refusal by policy
    result.stdout.fnmatch_lines(["*no prediction for case shop_003*"])
    assert hashlib.sha256((pytester.path / "shop.sqlite").read_bytes()).hexdigest() == before


def test_a_bad_predictions_file_is_a_usage_error(pytester: pytest.Pytester, shop: Path) -> None:
    _setup(pytester, shop)
    (pytester.path / "p.jsonl").write_text('{"id": "shop_001"}\n')
    result = pytester.runpytest_subprocess(
        "--nl2sql-suite", "evals/shop.yaml", "--nl2sql-config", "nl2sql.yaml", "--nl2sql-predictions", "p.jsonl", "-p", "no:cacheprovider",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*p.jsonl:1: the prediction has no 'sql'*"])
