"""The run's spool (reporting/spool.py): records on disk, slim views in memory that share what
records spell alike (issue 27 G.20)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_nl2sql.reporting.spool import SHARED_MAX, RecordSpool


def _record(i: int, passed: bool) -> dict:
    score = {"gating": True, "passed": passed, "value": 1.0 if passed else 0.0, "detail": f"detail {i}"}
    return json.loads(json.dumps({  # fresh objects, as a record decoded from an xdist worker
        "nodeid": f"s.yaml::c{i:03d}[admin]", "case_id": f"c{i:03d}", "role": "admin", "verdict": "passed" if passed else "failed",
        "sql": f"SELECT {i}", "question": f"q {i}?", "tags": ["a", "b"], "llm": {"calls": 0, "input_tokens": 0},
        "scores": {"outcome": score, "result_match": dict(score)}, "latency_s": i / 1000,
    }))


def test_views_share_equal_nested_values_and_records_read_back_whole(tmp_path: Path) -> None:
    spool = RecordSpool(tmp_path)
    records = [_record(i, passed=i % 3 != 0) for i in range(30)]
    for record in records:
        spool.add(record)
    views = spool.views()
    assert [v["nodeid"] for v in views] == sorted(r["nodeid"] for r in records)
    first, second = views[1], views[2]  # both passed
    assert first["tags"] is second["tags"] and first["llm"] is second["llm"]
    assert first["scores"]["outcome"] is second["scores"]["outcome"] == {"gating": True, "passed": True, "value": 1.0}
    assert views[0]["scores"]["outcome"] == {"gating": True, "passed": False, "value": 0.0}  # a failed one is not the passed one
    assert views[0]["scores"]["outcome"] is views[3]["scores"]["outcome"]
    assert first is not second and first["latency_s"] != second["latency_s"]
    assert "sql" not in first and "detail" not in first["scores"]["outcome"]
    assert list(spool.records()) == sorted(records, key=lambda r: r["nodeid"])  # the whole records, from disk
    spool.add(_record(31, True))  # a write after reads: appended at the end, nothing overwritten
    assert spool.get("s.yaml::c031[admin]")["sql"] == "SELECT 31"
    assert list(spool.records())[:30] == sorted(records, key=lambda r: r["nodeid"])
    spool.close()


def test_one_and_true_are_not_shared_as_each_other(tmp_path: Path) -> None:
    spool = RecordSpool(tmp_path)
    spool.add({"nodeid": "a", "steps": [1]})
    spool.add({"nodeid": "b", "steps": [True]})
    spool.add({"nodeid": "c", "steps": [1.0]})
    steps = [v["steps"] for v in spool.views()]
    assert [type(s[0]) for s in steps] == [int, bool, float]
    spool.close()


def test_the_shared_values_are_bounded(tmp_path: Path) -> None:
    spool = RecordSpool(tmp_path)
    spool._shared.update({("filler", i): None for i in range(SHARED_MAX)})  # as after SHARED_MAX distinct values
    spool.add({"nodeid": "a", "tags": ["new"]})
    spool.add({"nodeid": "b", "tags": ["new"]})
    a, b = spool.views()
    assert a["tags"] == b["tags"] and a["tags"] is not b["tags"]  # full: kept as they are
    assert len(spool._shared) == SHARED_MAX
    spool.close()


def test_subclasses_of_plain_types_are_read_as_their_base(tmp_path: Path) -> None:
    import enum
    from collections import OrderedDict

    class Verdict(str, enum.Enum):  # noqa: UP042 -- the str mixin whose str() is the name, not the text
        PASSED = "passed"

    spool = RecordSpool(tmp_path)
    spool.add({"nodeid": "a", "verdict": Verdict.PASSED, "llm": OrderedDict(calls=0)})
    (view,) = spool.views()
    assert view["verdict"] == "passed" and type(view["verdict"]) is str
    assert view["llm"] == {"calls": 0} and type(view["llm"]) is dict
    spool.close()


def test_a_view_keeps_only_fail_fast_s_error_and_no_detail(tmp_path: Path) -> None:
    from pytest_nl2sql.reporting.figures import NOT_ASKED

    spool = RecordSpool(tmp_path)
    spool.add({"nodeid": "a", "error": f"{NOT_ASKED} the server is down", "scores": {"outcome": {"passed": False, "detail": "x"}}})
    spool.add({"nodeid": "b", "error": "OperationalError: boom", "scores": {"outcome": "odd"}, "sql": "SELECT 1", "tags": []})
    a, b = spool.views()
    assert a == {"nodeid": "a", "error": f"{NOT_ASKED} the server is down", "scores": {"outcome": {"passed": False}}}
    assert b == {"nodeid": "b", "error": None, "scores": {"outcome": "odd"}, "tags": []}
    assert list(a) == ["nodeid", "error", "scores"] and list(b) == ["nodeid", "error", "scores", "tags"]  # the record's order
    assert spool.get("b")["error"] == "OperationalError: boom" and spool.get("b")["sql"] == "SELECT 1"  # the record, whole
    spool.close()
