"""Neighbour databases: generation time per datasource, and what --nl2sql-test-suite 5 costs.

    python benchmarks/bench_neighbours.py [--k 5]

1. For each SQLite datasource of the demo (``pytest-nl2sql init --demo``): the time to build K
   neighbours from scratch, and to find them in the cache.
2. The Chinook suite in mode plans (``-n 0``), as a fresh ``python -m pytest`` subprocess:
   without --nl2sql-test-suite, with ``--nl2sql-test-suite K`` and an empty neighbour cache,
   and with a warm one; ratios are to the run without it. Prints the items that pass on the
   real database and fail on a neighbour (the gold's own plans: ideally none).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_nl2sql.config import load_config  # noqa: E402
from pytest_nl2sql.scoring.neighbours import neighbours, sqlite_file  # noqa: E402


def _pytest(root: Path, *extra: str) -> float:
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
           "--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-config", "nl2sql.yaml", *extra]
    start = time.perf_counter()
    subprocess.run(cmd, cwd=root, capture_output=True, text=True, check=False)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="neighbour databases: generation and overhead")
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "demo"
        subprocess.run([sys.executable, "-m", "pytest_nl2sql.cli", "init", "--demo", str(root)], check=True, capture_output=True)
        project = load_config(root / "nl2sql.yaml")
        print(f"neighbour generation, K={args.k}")
        for name, cfg in project.datasources.items():
            db = sqlite_file(cfg.url) or sqlite_file(f"sqlite:///{root / cfg.url.split('///', 1)[-1]}")
            if db is None:
                print(f"  {name:<14} skipped (not SQLite)")
                continue
            cache = Path(tmp) / "nb" / name
            start = time.perf_counter()
            neighbours(db, args.k, 0, cache)
            cold = time.perf_counter() - start
            start = time.perf_counter()
            neighbours(db, args.k, 0, cache)
            warm = time.perf_counter() - start
            size = db.stat().st_size / 2**20
            print(f"  {name:<14} {size:6.1f} MiB  build {cold:6.3f} s   cached {warm * 1000:6.1f} ms")
        base = min(_pytest(root) for _ in range(2))
        shutil.rmtree(root / ".nl2sql-cache" / "neighbours", ignore_errors=True)
        cold = _pytest(root, "--nl2sql-test-suite", str(args.k))
        warm = min(_pytest(root, "--nl2sql-test-suite", str(args.k), "--nl2sql-out", "r.json") for _ in range(2))
        report = json.loads((root / "r.json").read_text())
        ts = report["summary"].get("test_suite", {})
        print(f"chinook suite, mode plans, -n 0 ({report['summary']['items']} items)")
        print(f"  without --nl2sql-test-suite           {base:6.2f} s   1.00x")
        print(f"  --nl2sql-test-suite {args.k}, cold cache     {cold:6.2f} s   {cold / base:5.2f}x")
        print(f"  --nl2sql-test-suite {args.k}, warm cache     {warm:6.2f} s   {warm / base:5.2f}x")
        print(f"  checked on neighbours {ts.get('checked')}, failed on a neighbour: {ts.get('failed_on_a_neighbour')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
