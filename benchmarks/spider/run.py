"""Spider dev: our verdicts on C3SQL's predictions against the official execution-match metric.

    python benchmarks/spider/run.py [--out DIR] [--workers N] [--test-suite K] [--seed S]

Converts the shared Spider data (convert.py), writes C3SQL's predictions as a predictions
file, runs them through the plugin (the replay engine, ``-n 2``), computes the official
verdict for the same pairs (official.py), and prints both accuracies, the agreement and every
disagreement grouped by cause. Then does the same for the 322 pairs of test-suite-sql-eval's
example files (our verdict computed in-process, with the same adapter, replay engine and
match rule). Exits 0 with a message when the shared data is absent.

With ``--test-suite K`` the plugin runs with ``--nl2sql-test-suite K`` (K neighbour databases
per Spider database, cached in ``OUT/.nl2sql-cache/neighbours``); today's lines still use the
verdict on the real database, and a section follows: ``test-suite accuracy``, ``false
positives`` (items that pass on the real database and fail on a neighbour, each listed, and
written with both results to ``OUT/false_positives.jsonl``) and ``mutants killed`` -- the share
of the gold queries' mutants (mutation.py) told apart with the neighbours, and without them.
``--seed S`` draws the plugin's neighbours with another seed (``PYTEST_NL2SQL_NEIGHBOUR_SEED``),
to read flags beyond seed 0's; the kill rates stay at seed 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks.spider.agreement import (  # noqa: E402
    CAUSE_TEXT,
    Pair,
    classify,
    our_inprocess_verdicts,
    read_multiturn,
    summarize,
)
from benchmarks.spider.convert import ROOT, convert, db_path, default_spider_dir, write_predictions  # noqa: E402
from benchmarks.spider.mutation import distilled_kills, kill_reports  # noqa: E402
from benchmarks.spider.official import official_exec_match  # noqa: E402


def pytest_command(out: Path, workers: int, test_suite: int = 0) -> list[str]:
    return [
        sys.executable, "-m", "pytest",
        "--nl2sql-suite", str(out / "spider_dev.yaml"),
        "--nl2sql-config", str(out / "nl2sql.yaml"),
        "--nl2sql-predictions", str(out / "c3sql.jsonl"),
        "-n", str(workers), "--nl2sql-out", str(out / "report.json"),
        "-p", "no:cacheprovider", "-q", "--no-header", "-rN",
        *(["--nl2sql-test-suite", str(test_suite)] if test_suite else []),
    ]


def print_test_suite(k: int, out: Path, pairs: list[Pair], records: dict, items: list, spider: Path, workers: int) -> None:
    """--test-suite K: test-suite accuracy, the false positives, and the mutants' kill rates."""
    n = len(pairs) or 1
    fps = [p for p in pairs if ((records[p.key].get("test_suite") or {}).get("disagreed"))]
    findings = [p for p in pairs if ((records[p.key].get("test_suite") or {}).get("gold_finding"))]
    passed = sum(p.ours for p in pairs) - len(fps)
    unchecked = sum(1 for p in pairs if p.ours and not (records[p.key].get("test_suite") or {}).get("checked"))
    print(f"\n== test suite: {k} neighbour databases per database (--nl2sql-test-suite {k}) ==")
    print(f"  test-suite accuracy {passed / n:.1%} ({passed}/{len(pairs)}; on the real database alone "
          f"{sum(p.ours for p in pairs) / n:.1%}); passes not checked on neighbours: {unchecked}")
    print(f"  flags {len(fps) + len(findings)} (gating {len(fps)}, gold findings {len(findings)})")
    print(f"  false positives {len(fps)} (pass on the real database, fail on a neighbour)")
    with (out / "false_positives.jsonl").open("w", encoding="utf-8") as fh:
        for p in fps:
            d = records[p.key]["test_suite"]["disagreed"]
            fh.write(json.dumps({"id": p.key, "db_id": p.db_id, "gold": p.gold, "pred": p.pred, **d}, default=str) + "\n")
            print(f"     {p.key} ({p.db_id}) neighbour {d['neighbour'] + 1}: {d['reason'][:100]}")
            print(f"       gold: {p.gold[:150]}")
            print(f"       pred: {p.pred[:150]}")
    with (out / "gold_findings.jsonl").open("w", encoding="utf-8") as fh:
        for p in findings:
            d = records[p.key]["test_suite"]["gold_finding"]
            fh.write(json.dumps({"id": p.key, "db_id": p.db_id, "gold": p.gold, "pred": p.pred, **d}, default=str) + "\n")
            print(f"     gold finding {p.key} ({p.db_id}) neighbour {d['neighbour'] + 1}: {d['gold_finding'][:100]}")
    t = time.perf_counter()
    run = [it for it in items if it.case_id in records]
    reports = [r for r in kill_reports(run, spider, k, out / ".nl2sql-cache" / "neighbours", workers) if r is not None]
    total = sum(r.counted for r in reports) or 1
    real = sum(len(r.killed_real) for r in reports)
    near = sum(len(r.killed_any) for r in reports)
    broken = sum(len(r.broken) for r in reports)
    print(f"  mutants killed {near / total:.1%} ({near}/{total}) with the neighbours; "
          f"{real / total:.1%} ({real}/{total}) on the real database alone "
          f"[{len(reports)} gold queries, {broken} mutants that do not run left out, {time.perf_counter() - t:.1f}s]")
    t = time.perf_counter()
    counted, _, best = distilled_kills(run, spider, k, out / ".nl2sql-cache" / "neighbours", workers=workers)
    print(f"  mutants killed {best / (counted or 1):.1%} ({best}/{counted}) with {k} distilled neighbours "
          f"(per database, the {k} of {k * 4} candidates that kill the most: neighbours.keep_best) "
          f"[{time.perf_counter() - t:.1f}s]")
    weak = sum(1 for r in reports if r.rate_real is not None and r.rate_real < 0.5)
    weak_near = sum(1 for r in reports if r.rate_any is not None and r.rate_any < 0.5)
    print(f"  weak gold (kill rate < 50%): {weak} on the real database, {weak_near} with the neighbours")


def print_table(title: str, pairs: list[Pair]) -> None:
    s = summarize(pairs)
    print(f"\n== {title}: {s['n']} pairs ==")
    print(f"  our execution accuracy      {s['ours']:.1%} ({s['ours_n']}/{s['n']})")
    print(f"  official execution accuracy {s['theirs']:.1%} ({s['theirs_n']}/{s['n']})")
    print(f"  agreement                   {s['agree']:.1%} ({s['agree_n']}/{s['n']})")
    errors = [p for p in pairs if p.our_error]
    if errors:
        print(f"  per-case errors (not crashes): {len(errors)}")
        for p in errors[:10]:
            print(f"    {p.key}: {p.our_error[:160]}")
    groups: dict[str, list[Pair]] = defaultdict(list)
    for p in pairs:
        if p.ours != p.theirs:
            groups[classify(p)].append(p)
    kept = s["agree_n"] + len(groups.get("distinct-removed", []))
    print(f"  agreement with the official metric run with --keep_distinct: {kept / (s['n'] or 1):.1%} ({kept}/{s['n']})")
    if not groups:
        print("  no disagreement")
    for cause, members in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        right, why = CAUSE_TEXT.get(cause, ("?", "not classified: read the pairs"))
        print(f"  -- {cause}: {len(members)} (right: {right}) -- {why}")
        for p in members:
            print(f"     {p.key} ours={'pass' if p.ours else 'fail'} official={'pass' if p.theirs else 'fail'}")
            print(f"       gold: {p.gold[:150]}")
            print(f"       pred: {p.pred[:150]}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--test-suite", type=int, default=0, metavar="K", help="K neighbour databases per database")
    ap.add_argument("--seed", type=int, default=0, help="the neighbours' seed (PYTEST_NL2SQL_NEIGHBOUR_SEED)")
    args = ap.parse_args(argv)
    spider = default_spider_dir()
    if not (spider / "dev.json").is_file():
        print(f"skipped: the Spider data is not at {spider} (set NL2SQL_SPIDER_DIR)")
        return 0
    out: Path = args.out
    t0 = time.perf_counter()
    conv = convert(spider, out)
    print(f"converted {len(conv.items)} questions into {conv.suite} ({time.perf_counter() - t0:.1f}s); "
          f"skipped {sum(conv.skipped_dbs.values())} of {', '.join(conv.skipped_dbs)} (database absent); "
          f"drafts {len(conv.drafts)}; renamed duplicate columns in {', '.join(conv.renamed) or 'none'}")
    predicted = (spider / "predictions" / "C3SQL" / "predicted_sql.txt").read_text(encoding="utf-8").splitlines()
    write_predictions(conv.items, predicted, out / "c3sql.jsonl")
    if args.seed:
        os.environ["PYTEST_NL2SQL_NEIGHBOUR_SEED"] = str(args.seed)  # the plugin's neighbours; kill rates stay at seed 0
    cmd = pytest_command(out, args.workers, args.test_suite)
    print("running:", " ".join(cmd))
    t1 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    tail = [ln for ln in proc.stdout.splitlines() if ln.strip()][-3:]
    print(f"pytest exit {proc.returncode} in {time.perf_counter() - t1:.1f}s: {' | '.join(tail)}")
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    records = {r["case_id"]: r for r in report["items"]}
    pairs = []
    for it in conv.items:
        rec = records.get(it.case_id)
        if rec is None:
            continue  # a draft: not run
        rm = rec["scores"].get("result_match", {})
        # the verdict on the real database: a pass, or a fail on a neighbour (--test-suite) only
        real_pass = bool(rm.get("passed")) or bool((rec.get("test_suite") or {}).get("disagreed"))
        verdict = official_exec_match(db_path(spider, it.db_id), it.gold, predicted[it.index])
        pairs.append(Pair(it.case_id, it.db_id, it.gold, predicted[it.index], real_pass, verdict.matched,
                          our_error=None if rec["status"] == "ok" else (rec.get("error") or rec["status"]),
                          official=verdict, spider_dir=spider))
    print_table("Spider dev, C3SQL (through the plugin, -n 2)", pairs)
    if args.test_suite:
        print_test_suite(args.test_suite, out, pairs, records, list(conv.items), spider, args.workers)
    suite_dir = spider / "test-suite-sql-eval"
    if (suite_dir / "gold.txt").is_file():
        tpairs = read_multiturn(suite_dir / "gold.txt", suite_dir / "predict.txt")
        ours = our_inprocess_verdicts(spider, tpairs)
        print_table("test-suite-sql-eval example files (in-process)", ours)
    print(f"\ntotal {time.perf_counter() - t0:.1f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
