"""The failure path at its worst: every function a failing item passes through, on the shapes
that used to take seconds to minutes, each with its time per item (the bound: 50 ms).

    python benchmarks/bench_failure_paths.py [--quick]

Cases (one failing item each unless said otherwise; a result of more than 10,000 cells is timed
per 10,000 cells -- reading a result is linear in its cells, on the passing path too):

* ``match``: ``matching.match_rows`` (column compatibility, arrangement search, leftover
  pairing), 4-30 columns of repeated values x 1-100,000 rows, one wrong cell; and float rows
  all off by a little (every row a leftover to pair within the tolerance).
* ``taxonomy``: ``taxonomy.for_item`` on the same shapes (column permutations, row alignment,
  Spider's ``result_eq``).
* ``failure text``: the record and failure text of an item (``make_record``,
  ``failure_text``, ``json.dumps``), with a result holding a 10,000-digit integer.
* ``html``: one HTML report of 10,000 failing items (time per item).
* ``compare``: ``report compare`` of two runs of 10,000 and 100,000 items (time per item).
* ``mutants``: the mutants of a gold SQL whose WHERE has 300 conjuncts.

Each case is timed by the CPU time of this process (``time.process_time``), and the bound is
checked on it: on a shared machine the wall time also counts the other processes' work (it is
printed beside, with the load average, for the reader).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_nl2sql.reporting.compare import compare_reports  # noqa: E402
from pytest_nl2sql.reporting.html_report import write_html  # noqa: E402
from pytest_nl2sql.reporting.report import (  # noqa: E402
    REPORT_SCHEMA,
    REPORT_VERSION,
    RunReport,
    failure_text,
    make_record,
)
from pytest_nl2sql.reporting.taxonomy import for_item  # noqa: E402
from pytest_nl2sql.scoring.matching import match_rows  # noqa: E402
from pytest_nl2sql.scoring.mutants import mutants  # noqa: E402
from pytest_nl2sql.scoring.scorers import Score  # noqa: E402
from pytest_nl2sql.suitefile.model import Outcome  # noqa: E402

BOUND_MS = 50.0
CELLS_PER_ITEM = 10_000


def repeated(width: int, rows: int) -> tuple[list[str], list[tuple], list[tuple]]:
    """``rows`` rows of ``width`` columns of one repeated value; the answer has one wrong cell."""
    cols = [f"c{i}" for i in range(width)]
    gold = [tuple(1 for _ in range(width)) for _ in range(rows)]
    pred = list(gold)
    pred[-1] = (*gold[-1][:-1], 2)
    return cols, gold, pred


def floats_off(rows: int) -> tuple[list[str], list[tuple], list[tuple]]:
    """Float rows, every answer row off by a little (within 1e-9), one row off by much."""
    gold = [(i % 7, 0.5) for i in range(rows)]
    pred = [(i % 7, 0.5 + 1e-12) for i in range(rows)]
    pred[-1] = (pred[-1][0], 9.5)
    return ["k", "x"], gold, pred


def _case(cols: list[str], gold: list[tuple]) -> Any:
    return SimpleNamespace(
        id="c1", question="q?", sql="SELECT * FROM t", rows=[dict(zip(cols, r, strict=True)) for r in gold],
        alt_rows=None, order_matters=False, location=None, kind=SimpleNamespace(value="answer"), tags=("t",),
        difficulty=None, datasources=("db",),
    )


def _answer(cols: list[str], pred: list[tuple]) -> Any:
    return SimpleNamespace(status="ok", rows=pred, columns=cols, truncated=False, sql="SELECT 2", cost_usd=0.0,
                           error=None, code=None, message=None, datasources=("db",))


def _units(cells: int) -> int:
    """A result of more than CELLS_PER_ITEM cells counts as that many items: reading a result
    is linear in its cells on every path (the passing one too), so the bound is per item and per
    CELLS_PER_ITEM cells."""
    return max(1, cells // CELLS_PER_ITEM)


def _time(fn: Any, items: int = 1) -> tuple[float, float]:
    """(CPU ms, wall ms) per item of one call of ``fn``."""
    gc.collect()  # the previous case's garbage is not this one's time
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return (time.process_time() - cpu) * 1000.0 / items, (time.perf_counter() - wall) * 1000.0 / items


def _item(case: Any, i: int = 0) -> Any:
    return SimpleNamespace(case=case, nodeid=f"evals/s.yaml::c{i}[analyst]", path=Path("evals/s.yaml"), role="analyst",
                           expected=Outcome.ALLOWED)


def cases(quick: bool) -> list[tuple[str, Any, int]]:
    out: list[tuple[str, Any, int]] = []
    widths = (4, 8, 12, 30)
    heights = (1, 10, 10_000) if quick else (1, 10, 10_000, 100_000)
    for width in widths:
        for height in heights:
            if width * height > 1_000_000 and quick:
                continue
            cols, gold, pred = repeated(width, height)
            units = _units(width * height)
            out.append((f"match     {width:>2} cols x {height:>6} rows", lambda c=cols, g=gold, p=pred: match_rows(c, g, c, p), units))
            miss = [Score("result_match", False, 0.0, "rows differ")]
            out.append((f"taxonomy  {width:>2} cols x {height:>6} rows",
                        partial(for_item, _case(cols, gold), _answer(cols, pred), miss), units))
    for height in heights[1:]:
        cols, gold, pred = floats_off(height)
        units = _units(2 * height)
        out.append((f"match     floats off x {height:>6} rows", lambda c=cols, g=gold, p=pred: match_rows(c, g, c, p), units))
        miss = [Score("result_match", False, 0.0, "rows differ")]
        out.append((f"taxonomy  floats off x {height:>6} rows",
                    partial(for_item, _case(cols, gold), _answer(cols, pred), miss), units))

    big = 10 ** 10_000
    cols, gold, pred = ["n"], [(big,)], [(big + 1,)]

    def text_and_json() -> None:
        result = match_rows(cols, gold, cols, pred)
        score = Score("result_match", False, 0.0, result.reason, data={"missing": list(result.missing), "unexpected": list(result.unexpected)})
        case, answer = _case(cols, gold), _answer(cols, pred)
        record = make_record(_item(case), "plans", answer, None, [score])
        record["taxonomy"] = for_item(case, answer, [score])
        failure_text(_item(case), "plans", answer, None, [score])
        json.dumps(record, default=str)

    out.append(("failure text and record, a 10,000-digit integer", text_and_json, 1))

    n_html = 2_000 if quick else 10_000
    records = _failing_records(n_html)
    report = RunReport(records, {"mode": "plans", "suites": ["s.yaml"]}).to_json()
    report = json.loads(json.dumps(report, default=str))
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "r.html"
        out.append((f"html      {n_html} failing items (per item)", lambda: write_html(target, report), n_html))
    for n in (10_000,) if quick else (10_000, 100_000):
        base = {"schema": REPORT_SCHEMA, "version": REPORT_VERSION, "run": {}, "items": _failing_records(n, passed_every=2)}
        new = {"schema": REPORT_SCHEMA, "version": REPORT_VERSION, "run": {}, "items": _failing_records(n, passed_every=3)}
        out.append((f"compare   {n} items (per item)", lambda b=base, nw=new: compare_reports(b, nw).lines(), n))
    where = " AND ".join(f"c{i} = {i}" for i in range(300))
    out.append(("mutants   WHERE of 300 conjuncts", lambda: mutants(f"SELECT a FROM t WHERE {where}"), 1))
    return out


def _failing_records(n: int, passed_every: int = 0) -> list[dict[str, Any]]:
    recs = []
    for i in range(n):
        passed = bool(passed_every) and i % passed_every == 0
        recs.append({
            "nodeid": f"evals/s.yaml::case_{i}[analyst]", "suite": "s.yaml", "case_id": f"case_{i}", "role": "analyst",
            "kind": "answer", "expected": "allowed", "tags": ["t", f"g{i % 20}"], "difficulty": "easy", "datasources": ["db"],
            "mode": "plans", "status": "ok", "verdict": "passed" if passed else "failed",
            "scores": {"result_match": {"passed": passed, "value": 1.0 if passed else 0.0, "detail": None if passed else "rows differ", "gating": True}},
            "failed_scores": [] if passed else ["result_match"],
            "sql": f"SELECT a, b FROM t WHERE x = {i}", "gold_sql": f"SELECT a, b FROM t WHERE x = {i + 1}",
            "row_diff": None if passed else {"missing": [[i, "a" * 30]], "unexpected": [[i + 1, "b" * 30]]},
            "question": f"question {i}?", "cost_usd": 0.0, "latency_s": 0.01,
            "taxonomy": None if passed else {"kinds": ["missing_rows", "extra_rows"], "bird_set": False, "spider": False},
        })
    return recs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="the failure path's worst shapes, time per item")
    ap.add_argument("--quick", action="store_true", help="smaller shapes (no 100,000-row or -item cases)")
    args = ap.parse_args(argv)
    worst = 0.0
    over = []
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; CPU ms of this process (wall ms)", flush=True)
    for name, fn, items in cases(args.quick):
        ms, wall = _time(fn, items)
        worst = max(worst, ms)
        flag = "" if ms < BOUND_MS else "  OVER THE BOUND"
        if flag:
            over.append(name)
        unit = "item" if items == 1 or not name.startswith(("match", "taxonomy")) else "10,000 cells"
        print(f"{name:<52} {ms:9.2f} ms ({wall:8.2f} wall) per {unit}{flag}", flush=True)
    print(f"worst: {worst:.2f} ms CPU per item (bound {BOUND_MS:.0f} ms); {len(over)} over the bound")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
