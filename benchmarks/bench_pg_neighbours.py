"""PostgreSQL neighbour databases: generation time per datasource, and what --nl2sql-test-suite
costs on the Chinook suite when its datasource is on PostgreSQL.

    python benchmarks/bench_pg_neighbours.py [--k 5]

Starts a throwaway PostgreSQL server (tests/pg_server.py; needs the server binaries), loads the
three demo databases into it, and makes a scratch login with CREATEDB and CREATEROLE.

1. Per datasource: the time to build K neighbours on the scratch server from scratch, and to
   find them again (the cache is the databases' names), beside the same datasource's K SQLite
   neighbours built from its demo SQLite file (ratio PostgreSQL / SQLite, same run).
2. The Chinook suite in mode plans (``-n 0``, a fresh ``python -m pytest``) on a demo project
   whose chinook datasource is the PostgreSQL database: without --nl2sql-test-suite, with
   ``--nl2sql-test-suite K`` and no neighbours yet (3K candidates built, K distilled over the
   suite's gold mutants), and with them built; ratios are to the run without it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_neighbours import _pytest  # noqa: E402  (the same timed run)
from pytest_nl2sql.demo import load_into  # noqa: E402
from pytest_nl2sql.scoring.neighbours import neighbours  # noqa: E402
from pytest_nl2sql.scoring.pgneighbours import PgSource, drop_neighbours  # noqa: E402
from tests.pg_server import running_server, skip_reason  # noqa: E402

DEMO = ("chinook", "support", "webanalytics")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="PostgreSQL neighbour databases: generation and overhead")
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args(argv)
    reason = skip_reason()
    if reason:
        print(f"skipped: {reason}")
        return 0
    import psycopg
    from ruamel.yaml import YAML

    with running_server(prefix="nl2sql-bench-") as server, tempfile.TemporaryDirectory() as tmp:
        with psycopg.connect(server.dsn(), autocommit=True) as con:
            con.execute("CREATE ROLE nl2sql_scratch LOGIN CREATEDB CREATEROLE")
        scratch = f"postgresql+psycopg://nl2sql_scratch@{server.host}:{server.port}/postgres"
        root = Path(tmp) / "demo"
        subprocess.run([sys.executable, "-m", "pytest_nl2sql.cli", "init", "--demo", str(root)], check=True, capture_output=True)
        print(f"neighbour generation, K={args.k} (PostgreSQL 15 on this machine, scratch login with CREATEDB CREATEROLE)")
        for name in DEMO:
            load_into(server.create_database(name), name)
            source = PgSource(name, server.url(name), scratch)
            start = time.perf_counter()
            source.build(args.k, 0)
            cold = time.perf_counter() - start
            start = time.perf_counter()
            source.build(args.k, 0)
            warm = time.perf_counter() - start
            start = time.perf_counter()
            neighbours(root / "data" / f"{name}.sqlite", args.k, 0, Path(tmp) / "nb" / name)
            lite = time.perf_counter() - start
            print(f"  {name:<14} build {cold:6.2f} s ({cold / lite:5.1f}x its {args.k} SQLite neighbours, {lite:.3f} s)"
                  f"   found again {warm * 1000:6.1f} ms")
        drop_neighbours(scratch)
        yaml = YAML()
        config = root / "nl2sql.yaml"
        data = yaml.load(config)
        data["datasources"]["chinook"]["url"] = server.url("chinook")
        data["test_suite"] = {"scratch_url": scratch}
        with config.open("w") as out:
            yaml.dump(data, out)
        base = min(_pytest(root) for _ in range(2))
        cold = _pytest(root, "--nl2sql-test-suite", str(args.k))
        warm = min(_pytest(root, "--nl2sql-test-suite", str(args.k), "--nl2sql-out", "r.json") for _ in range(2))
        report = json.loads((root / "r.json").read_text())
        s = report["summary"]
        ts = s.get("test_suite", {})
        print(f"chinook suite on PostgreSQL, mode plans, -n 0 ({s['items']} items, {s['passed']} passed)")
        print(f"  without --nl2sql-test-suite                  {base:6.2f} s   1.00x")
        print(f"  --nl2sql-test-suite {args.k}, no neighbours yet     {cold:6.2f} s   {cold / base:5.2f}x")
        print(f"  --nl2sql-test-suite {args.k}, neighbours built      {warm:6.2f} s   {warm / base:5.2f}x")
        print(f"  checked on neighbours {ts.get('checked')}, not checked {ts.get('not_checked')}, "
              f"failed on a neighbour: {ts.get('failed_on_a_neighbour')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
