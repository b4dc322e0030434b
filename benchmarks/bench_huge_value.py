"""Peak memory of the calling process when a query returns one huge value (issue 21).

    python benchmarks/bench_huge_value.py [--backends sqlite,duckdb,postgresql] [--raw]

For each backend, two fresh processes each open an ``Adapter`` (``timeout_s`` 120, so the
bound measured is memory, not time) and run one query: the baseline ``SELECT 1``, then the
huge one. Each prints its peak RSS (``ru_maxrss`` of itself: a DuckDB query's child process
is not the calling process), the verdict and the time. The ratio huge / baseline is the
figure: about 1 means the huge value never reached the calling process.

The huge queries: ``SELECT repeat('x', 1500000000)`` (DuckDB; PostgreSQL refuses it itself,
a text value is at most 1 GB there, so PostgreSQL also runs ``repeat('x', 900000000)``) and
on SQLite (which has no ``repeat``, and whose guard refuses ``printf('%.*c', ...)``) a
string doubled 31 times (2 GiB). ``--raw`` adds the same
queries fetched by the driver directly, without the adapter: what the bound saves.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
HUGE = {
    "sqlite": [
        "WITH RECURSIVE c(s, n) AS (SELECT 'x', 0 UNION ALL SELECT s || s, n + 1 FROM c WHERE n < 31) "
        "SELECT s FROM c WHERE n = 31"
    ],
    "duckdb": ["SELECT repeat('x', 1500000000) AS s"],
    "postgresql": ["SELECT repeat('x', 1500000000) AS s", "SELECT repeat('x', 900000000) AS s"],
}
BASELINE = "SELECT 1 AS n"

_ONE = r"""
import json, resource, sys, time
url, sql, raw = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
started = time.monotonic()
verdict = "rows"
if raw:
    from sqlalchemy import create_engine
    try:
        with create_engine(url).connect() as c:
            c.exec_driver_sql(sql).fetchall()
    except Exception as e:
        verdict = "error: " + str(e).splitlines()[0][:120]
else:
    from pytest_nl2sql.datasources import Adapter, QueryError
    adapter = Adapter("bench", url, timeout_s=120, allow_privileged_login=True)
    try:
        adapter.execute(sql)
    except QueryError as e:
        verdict = f"{e.kind}: {e.message[:120]}"
    finally:
        adapter.close()
print(json.dumps({"peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "seconds": time.monotonic() - started, "verdict": verdict}))
"""


def measure(url: str, sql: str, raw: bool = False) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _ONE, url, sql, "1" if raw else "0"],
        capture_output=True, text=True, cwd=ROOT, timeout=900,
    )
    if out.returncode != 0:
        return {"peak_mb": float("nan"), "seconds": float("nan"), "verdict": f"crashed: {out.stderr.strip()[-200:]}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _urls(backends: list[str], folder: Path, stack: list) -> dict[str, str]:
    urls = {}
    if "sqlite" in backends:
        import sqlite3

        path = folder / "b.sqlite"
        sqlite3.connect(path).execute("CREATE TABLE t(n)").connection.commit()
        urls["sqlite"] = f"sqlite:///{path}"
    if "duckdb" in backends:
        import duckdb

        path = folder / "b.duckdb"
        connection = duckdb.connect(str(path))
        connection.execute("CREATE TABLE t(n INTEGER)")
        connection.close()
        urls["duckdb"] = f"duckdb:///{path}"
    if "postgresql" in backends:
        from tests.pg_server import running_server, skip_reason

        reason = skip_reason()
        if reason:
            print(f"postgresql: skipped ({reason})")
        else:
            manager = running_server()
            server = manager.__enter__()
            stack.append(manager)
            urls["postgresql"] = server.url()
    return urls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backends", default="sqlite,duckdb,postgresql")
    parser.add_argument("--raw", action="store_true", help="also fetch through the driver directly")
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} cores")
    stack: list = []
    with tempfile.TemporaryDirectory() as folder:
        try:
            urls = _urls(args.backends.split(","), Path(folder), stack)
            print(f"{'backend':<11} {'query':<44} {'peak MB':>8} {'x base':>7} {'s':>6}  verdict")
            for backend, url in urls.items():
                base = measure(url, BASELINE)
                print(f"{backend:<11} {BASELINE:<44} {base['peak_mb']:8.0f} {1.0:7.2f} {base['seconds']:6.1f}  {base['verdict']}")
                for sql in HUGE[backend]:
                    runs = [("adapter", measure(url, sql))]
                    if args.raw:
                        runs.append(("raw driver", measure(url, sql, raw=True)))
                    for how, result in runs:
                        label = sql[-40:] + ("" if how == "adapter" else " [raw]")
                        ratio = result["peak_mb"] / base["peak_mb"]
                        print(
                            f"{backend:<11} {label:<44} {result['peak_mb']:8.0f} {ratio:7.2f} "
                            f"{result['seconds']:6.1f}  {result['verdict'][:90]}"
                        )
        finally:
            for manager in stack:
                manager.__exit__(None, None, None)


if __name__ == "__main__":
    main()
