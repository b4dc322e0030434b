"""Report files are input: `pytest-nl2sql report compare/merge/gate` on malformed JSON give one
line naming the file and the field, never a traceback; node ids from a file are never printed
raw at a line start."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.cli import main


def _good() -> dict[str, Any]:
    items = [
        {"nodeid": f"evals/s.yaml::c{i}[analyst]", "suite": "s.yaml", "case_id": f"c{i}", "role": "analyst", "kind": "answer",
         "expected": "allowed", "verdict": "passed" if i % 2 else "failed", "tags": ["t"], "datasources": ["db"], "mode": "plans",
         "scores": {"result_match": {"passed": bool(i % 2), "value": 1.0, "detail": None, "gating": True}},
         "cost_usd": 0.0, "latency_s": 0.1, "taxonomy": None, "llm": {"calls": 0}}
        for i in range(4)
    ]
    return {"schema": "pytest-nl2sql/report", "version": 1, "run": {"mode": "plans", "suites": ["s.yaml"]}, "summary": {}, "items": items}


def _mutations(rng: random.Random) -> list[tuple[str, Any]]:
    """(what, a malformed report as text or bytes)."""
    out: list[tuple[str, Any]] = [
        ("top level a list", "[]"),
        ("top level a string", '"report"'),
        ("invalid UTF-8", b'{"schema": "pytest-nl2sql/report", "version": 1, "run": {}, "items": ["\xff\xfe"]}'),
        ("not JSON", "{"),
        ("a huge integer", '{"schema": "pytest-nl2sql/report", "version": 1, "run": {"workers": ' + "9" * 5000 + '}, "items": []}'),
        ("nested deep", "[" * 100_000 + "]" * 100_000),
    ]
    good = _good()
    for key in ("run", "items"):
        bad = copy.deepcopy(good)
        del bad[key]
        out.append((f"no {key}", bad))
    for key in ("nodeid", "suite", "case_id", "role", "kind"):
        bad = copy.deepcopy(good)
        del bad["items"][1][key]
        out.append((f"an item without {key}", bad))
    values = [None, 1, 1e308 * 10, -1, "x", [], {}, [1, 2], {"a": 1}, True, 10**30]
    fields = ["nodeid", "suite", "case_id", "role", "kind", "verdict", "expected", "tags", "datasources", "scores",
              "cost_usd", "latency_s", "taxonomy", "llm", "attempts", "mode", "baseline", "gold_digest"]
    for _ in range(60):
        bad = copy.deepcopy(good)
        where = rng.choice(["item", "score", "run", "items"])
        value = rng.choice(values)
        if where == "item":
            bad["items"][rng.randrange(4)][rng.choice(fields)] = value
        elif where == "score":
            bad["items"][0]["scores"]["result_match"][rng.choice(["passed", "value", "detail", "gating"])] = value
        elif where == "run":
            bad["run"][rng.choice(["mode", "suites", "started", "duration_s", "workers", "fixed", "crashed"])] = value
        else:
            bad["items"][rng.randrange(4)] = value
        out.append((f"{where} field = {value!r}"[:60], bad))
    return out


def _write(path: Path, data: Any) -> Path:
    if isinstance(data, bytes):
        path.write_bytes(data)
    elif isinstance(data, str):
        path.write_text(data)
    else:
        path.write_text(json.dumps(data, allow_nan=True))
    return path


def test_malformed_reports_are_one_line_errors_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path / "good.json", _good())
    baseline = _write(tmp_path / "baseline.json", {"version": 2, "failures": []})
    rng = random.Random(22)
    tracebacks, silent = [], []
    for n, (what, data) in enumerate(_mutations(rng)):
        bad = _write(tmp_path / f"bad{n}.json", data)
        for argv in (["report", "compare", str(good), str(bad)], ["report", "compare", str(bad), str(good)],
                     ["report", "merge", str(bad), "-o", str(tmp_path / "all.json")],
                     ["report", "gate", str(bad), "--baseline", str(baseline)]):
            try:
                code = main(argv)
            except Exception as exc:  # noqa: BLE001 - any exception is the failure this test looks for
                tracebacks.append(f"{what}: {' '.join(argv[:2])}: {type(exc).__name__}: {exc}"[:300])
                continue
            err = capsys.readouterr().err
            if code not in (0, 1) or err:
                lines = [ln for ln in err.splitlines() if ln.strip()]
                if code != 2 or len(lines) != 1 or "Traceback" in err:
                    silent.append(f"{what}: {' '.join(argv[:2])}: exit {code}: {err[:200]!r}")
    assert tracebacks == []
    assert silent == []


def test_the_error_names_the_file_and_the_field(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = _write(tmp_path / "good.json", _good())
    data = _good()
    data["items"][2]["scores"]["result_match"]["passed"] = "yes"
    bad = _write(tmp_path / "bad.json", data)
    assert main(["report", "compare", str(good), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"pytest-nl2sql report compare: {bad}: items[2].scores.result_match.passed: expected true, false or null, got a string"
    data = _good()
    del data["items"][0]["nodeid"]
    bad = _write(tmp_path / "bad2.json", data)
    assert main(["report", "merge", str(bad), "-o", str(tmp_path / "all.json")]) == 2
    assert f"{bad}: items[0].nodeid: missing" in capsys.readouterr().err


def test_a_crafted_node_id_is_not_printed_at_a_line_start(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _good()
    new = _good()
    for data in (base, new):
        data["items"][1]["nodeid"] = "x\n::error file=a.py::pwned\x1b[8m"
    new["items"][1]["verdict"] = "failed"
    assert main(["report", "compare", str(_write(tmp_path / "b.json", base)), str(_write(tmp_path / "n.json", new))]) == 1
    out = capsys.readouterr().out
    assert "regressed: x ::error" in out.replace("\\x1b[8m", "")
    assert not [ln for ln in out.splitlines() if ln.lstrip().startswith("::")] and "\x1b" not in out
    baseline = _write(tmp_path / "baseline.json", {"version": 2, "failures": []})
    assert main(["report", "gate", str(tmp_path / "n.json"), "--baseline", str(baseline)]) == 1
    out = capsys.readouterr().out
    assert "new failure: x ::error" in out and not [ln for ln in out.splitlines() if ln.lstrip().startswith("::")]
