"""What issue 30's additions cost, as ratios against a baseline measured in the same run.

    python benchmarks/bench_parity.py [--quick]

* ``faithfulness``: ``check_text`` (a text with 50 numbers and 10 quoted names) on a result of
  4 columns x N rows, against ``match_rows`` of the same result in another order (the passing
  ``result_match`` every allowed item pays).
* ``lenient``: the lenient reading of a miss (the answer has an extra column), against the
  failure taxonomy of the same miss (``taxonomy.for_item``), which every miss already pays.
* ``summary``: ``RunReport.summary()`` of N records with 4 steps each, against the same summary
  with the new figures (answerability, answer figures, steps, models) left out.
* ``history``: ``report publish``'s page of 2,000 records (time per record).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_nl2sql.reporting import answer_figures, answerability, models, steps  # noqa: E402
from pytest_nl2sql.reporting.history import render_history  # noqa: E402
from pytest_nl2sql.reporting.report import RunReport  # noqa: E402
from pytest_nl2sql.reporting.taxonomy import for_item  # noqa: E402
from pytest_nl2sql.scoring.faithfulness import check_text  # noqa: E402
from pytest_nl2sql.scoring.lenient import lenient_reading  # noqa: E402
from pytest_nl2sql.scoring.matching import MatchRule, match_rows  # noqa: E402
from pytest_nl2sql.scoring.scorers import Score  # noqa: E402


def _best(fn: Any, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _rows(n: int) -> tuple[list[str], list[tuple]]:
    return ["name", "country", "total", "count"], [(f"name {i}", f"country {i % 40}", round(i * 1.37, 2), i % 97) for i in range(n)]


def _text() -> str:
    numbers = ", ".join(f"{round(i * 1.37, 2)}" for i in range(0, 500, 10))
    names = ", ".join(f'"country {i}"' for i in range(10))
    return f"The top rows hold {numbers}; the countries are {names}."


def _records(n: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        out.append({
            "nodeid": f"s.yaml::c{i}[{'admin' if i % 2 else 'viewer'}]", "suite": "s.yaml", "case_id": f"c{i}",
            "role": "admin" if i % 2 else "viewer", "kind": "answer", "expected": "unanswerable" if i % 10 == 0 else "allowed",
            "status": "not_answerable" if i % 10 == 0 else "ok", "verdict": "passed" if i % 7 else "failed",
            "tags": ["t"], "difficulty": "easy", "datasources": ["db"], "cost_usd": 0.001, "latency_s": 0.01,
            "scores": {"outcome": {"passed": True, "value": None, "detail": "", "gating": True},
                       "result_match": {"passed": bool(i % 7), "value": None, "detail": "", "gating": True},
                       "faithfulness": {"passed": bool(i % 3), "value": None, "detail": "", "gating": False}},
            "source": "verified" if i % 5 == 0 else "generated", "llm_config": "a" if i % 2 else "b",
            "lenient": {"matched": i % 14 == 0, "kind": "column_order"} if not i % 7 else None,
            "steps": [{"name": s, "latency_s": 0.001 * (i % 13), "input_tokens": 100, "output_tokens": 10, "cost_usd": 0.0001,
                       "error_code": None} for s in ("router", "planner", "sql_generation", "execution")],
        })
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    args = parser.parse_args(argv)
    sizes = (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000)
    print(f"{'case':<44} {'baseline':>12} {'new':>12} {'ratio':>8}")
    text = _text()
    for n in sizes:
        cols, rows = _rows(n)
        answer = list(reversed(rows))  # the same rows in another order: a passing result_match
        base = _best(lambda c=cols, r=rows, a=answer: match_rows(c, r, c, a))
        new = _best(lambda c=cols, a=answer: check_text(text, c, a, "top customers"))
        print(f"{'faithfulness, 4 cols x ' + format(n, ',') + ' rows':<44} {base * 1000:>9.1f} ms {new * 1000:>9.1f} ms {new / base:>7.2f}x")
    for n in sizes:
        cols, rows = _rows(n)
        wide = [(*r, 0) for r in rows]
        answer = SimpleNamespace(status="ok", truncated=False, rows=wide, columns=[*cols, "extra"])
        case = SimpleNamespace(rows=[dict(zip(cols, r, strict=True)) for r in rows], alt_rows=())
        case.sql, case.order_matters = "SELECT 1", False
        miss = [Score("result_match", False, 0.0, "the answer has 5 columns, the gold has 4")]
        base = _best(lambda a=answer, c=case, m=miss: for_item(c, a, m))  # what a miss already pays: its taxonomy
        new = _best(lambda a=answer, c=case: lenient_reading(a, c, MatchRule()))
        print(f"{'lenient reading, 4 cols x ' + format(n, ',') + ' rows':<44} {base * 1000:>9.1f} ms {new * 1000:>9.1f} ms {new / base:>7.2f}x")
    for n in sizes:
        records = _records(n)
        saved = {m: m.__dict__[f] for m, f in ((answerability, "answerability"), (answer_figures, "summary_figures"),
                                                (steps, "summary_figures"), (models, "summary_figures"))}
        try:
            answerability.answerability = lambda r: {}
            for m in (answer_figures, steps, models):
                m.summary_figures = lambda *a, **k: {}
            base = _best(lambda r=records: RunReport(r, {"mode": "plans"}).summary(), 1)
        finally:
            answerability.answerability = saved[answerability]
            for m in (answer_figures, steps, models):
                m.summary_figures = saved[m]
        new = _best(lambda r=records: RunReport(r, {"mode": "plans"}).summary(), 1)
        print(f"{'summary of ' + format(n, ',') + ' records':<44} {base * 1000:>9.1f} ms {new * 1000:>9.1f} ms {new / base:>7.2f}x")
    history = [{"schema": "pytest-nl2sql/history", "version": 1, "started": f"2026-01-01T00:00:{i % 60:02d}Z", "datasources": {"db": "x" if i < 1000 else "y"},
                "series": [{"suite": "s.yaml", "model": m, "figures": {"accuracy": 0.8, "execution_accuracy": 0.7, "cost_per_passed_usd": 0.01,
                                                                   "latency_p95_s": 1.0}} for m in ("a", "b")]} for i in range(2_000)]
    page = _best(lambda: render_history(history))
    print(f"{'history page, 2,000 records x 2 series':<44} {'':>12} {page * 1000:>9.1f} ms {'':>8}  ({page / 2000 * 1000:.3f} ms per record)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
