"""What a run's provenance costs on a database with a large table.

    python benchmarks/bench_provenance.py [--rows 2000000] [--repeat 3]

A run's report fingerprints every datasource's schema (reporting/provenance.py). On an xdist
controller, which runs no item, nothing else has read the schema, so the fingerprint was the
only reason to read it -- and the full read (``introspect``) counts every table's rows and
samples five distinct values of every text column: on SQLite a ``COUNT(*)`` scans the table.
The provenance now reads the schema's shape only (``introspect(..., shape_only=True)``).

Builds one SQLite file in a temporary folder: a table of ``--rows`` rows with eight text columns,
plus two small tables; then, in this process, best of ``--repeat`` passes with the schema cache
emptied before each:

* ``full read``: ``introspect(adapter)``, as the provenance read it before (the baseline,
  measured here in the same run);
* ``provenance``: ``datasource_provenance(config)``, as a run's report calls it now.

Prints the milliseconds of each, ``provenance/full read X.XXx``, and that both fingerprints agree.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from pytest_nl2sql.config import load_config  # noqa: E402
from pytest_nl2sql.datasources import Adapter, introspect  # noqa: E402
from pytest_nl2sql.datasources.introspect import clear_schema_cache  # noqa: E402
from pytest_nl2sql.reporting.provenance import datasource_provenance, schema_fingerprint  # noqa: E402

TEXT_COLUMNS = 8


def build(path: Path, rows: int) -> None:
    names = ", ".join(f"t{i} TEXT" for i in range(TEXT_COLUMNS))
    with sqlite3.connect(path) as connection:
        connection.execute(f"CREATE TABLE events (id INTEGER PRIMARY KEY, {names}, n INTEGER)")
        values = ", ".join("?" for _ in range(TEXT_COLUMNS + 2))
        batch = 100_000
        for start in range(0, rows, batch):
            connection.executemany(
                f"INSERT INTO events VALUES ({values})",
                ((i, *(f"v{i % (97 + k)}" for k in range(TEXT_COLUMNS)), i) for i in range(start, min(rows, start + batch))),
            )
        connection.execute("CREATE TABLE kinds (id INTEGER PRIMARY KEY, label TEXT)")
        connection.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, kind INTEGER REFERENCES kinds(id))")
        connection.executemany("INSERT INTO kinds VALUES (?, ?)", [(i, f"k{i}") for i in range(10)])
    connection.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "big.sqlite"
        build(db, args.rows)
        (Path(tmp) / "nl2sql.yaml").write_text(
            f"version: 1\ndatasources:\n  big:\n    url: sqlite:///{db}\nroles:\n  admin:\n    datasources: '*'\n", encoding="utf-8"
        )
        config = load_config(Path(tmp) / "nl2sql.yaml")
        adapter = Adapter("big", f"sqlite:///{db}")
        times: dict[str, float] = {"full read": float("inf"), "provenance": float("inf")}
        fingerprints: dict[str, str] = {}
        try:
            for _ in range(args.repeat):
                for name in times:
                    clear_schema_cache()
                    start = time.perf_counter()
                    if name == "full read":
                        fingerprints[name] = schema_fingerprint(introspect(adapter))
                    else:
                        fingerprints[name] = datasource_provenance(config)["big"]["fingerprint"]
                    times[name] = min(times[name], time.perf_counter() - start)
        finally:
            adapter.close()
    print(f"one SQLite table of {args.rows:,} rows and {TEXT_COLUMNS} text columns (+2 small tables), best of {args.repeat}")
    for name, t in times.items():
        print(f"  {name:<11} {t * 1000:9.1f} ms")
    print(f"provenance/full read {times['provenance'] / times['full read']:.3f}x; "
          f"fingerprints {'agree' if fingerprints['full read'] == fingerprints['provenance'] else 'DIFFER'}")
    return 0 if fingerprints["full read"] == fingerprints["provenance"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
