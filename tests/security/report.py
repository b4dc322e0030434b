"""Run the whole attack corpus through the three SQL paths on SQLite, DuckDB and PostgreSQL and print
how many attacks were tried, how many escaped and how many leaked, per path and backend.

    .venv/bin/python -m tests.security.report            # the table, then every failure
    .venv/bin/python -m tests.security.report --quiet    # the table only
    .venv/bin/python -m tests.security.report --backend sqlite --path replay

PostgreSQL rows are left out (and the reason printed) when no server can start here. The exit
status is 1 when anything escaped or leaked. The same checks run as tests in this folder
(``pytest tests/security``); docs/security.md shows this command's output.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tests.pg_server import running_server, skip_reason

from .corpus import ATTACKS, ORACLES
from .duckdb_backend import duckdb_backend
from .harness import (
    BACKENDS,
    PATHS,
    Verdict,
    hush_sqlglot,
    matrix,
    oracle_matrix,
    pg_backends,
    quiet,
    run_attack,
    run_oracle,
    run_regenerate,
    sqlite_backend,
)

PATH_LABELS = {
    "adapter": "adapter (Adapter.execute)",
    "replay": "replay (ReplayEngine)",
    "reference": "reference (ReferenceEngine)",
    "regenerate": "regenerate (Engine.evals)",
}


def _run(backends: dict, names: tuple[str, ...], paths: tuple[str, ...], folder: Path) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for name, attack, path, role in matrix(names, paths):
        verdicts.append(run_attack(backends[name], attack, path, role))
    for name, oracle, path in oracle_matrix(names):
        if path in paths:
            verdicts.append(run_oracle(backends[name], oracle, path))
    if "adapter" in paths:
        for name in names:
            found, _ = run_regenerate(backends[name], folder / f"regen-{name}")
            verdicts.extend(attrs_evolve_path(v) for v in found)
    return verdicts


def attrs_evolve_path(verdict: Verdict) -> Verdict:
    import attrs

    return attrs.evolve(verdict, path="regenerate")


def table(verdicts: list[Verdict], backends: tuple[str, ...]) -> str:
    tried: Counter = Counter()
    escaped: Counter = Counter()
    leaked: Counter = Counter()
    refused: Counter = Counter()
    for v in verdicts:
        key = (v.path, v.backend)
        tried[key] += 1
        escaped[key] += bool(v.escapes)
        leaked[key] += bool(v.leaks)
        refused[key] += bool(v.false_refusals)
    header = f"{'path':<30} {'backend':<9} {'tried':>6} {'escapes':>8} {'leaks':>6} {'false refusals':>15}"
    lines = [header, "-" * len(header)]

    def row(label: str, backend: str, key: Any) -> str:
        counts = (tried, escaped, leaked, refused)
        n, e, x, f = (sum(c.values()) if key is None else c[key] for c in counts)
        return f"{label:<30} {backend:<9} {n:>6} {e:>8} {x:>6} {f:>15}"

    for path in (*PATHS, "regenerate"):
        for backend in backends:
            key = (path, backend)
            if tried[key]:
                lines.append(row(PATH_LABELS[path], backend, key))
    lines.append("-" * len(header))
    lines.append(row("total", "", None))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.security.report", description=__doc__.splitlines()[0])
    parser.add_argument("--backend", action="append", choices=BACKENDS, help="only these backends (repeatable)")
    parser.add_argument("--path", action="append", choices=PATHS, help="only these paths (repeatable)")
    parser.add_argument("--quiet", action="store_true", help="print the table only, not each failure")
    args = parser.parse_args(argv)
    hush_sqlglot()
    names = tuple(args.backend or BACKENDS)
    paths = tuple(args.path or PATHS)
    started = time.perf_counter()
    notes = []
    with tempfile.TemporaryDirectory(prefix="nl2sql-security-") as tmp, contextlib.ExitStack() as stack:
        folder = Path(tmp)
        backends: dict = {}
        with quiet():
            if "sqlite" in names:
                backends["sqlite"] = sqlite_backend(folder / "sqlite")
            if "duckdb" in names:
                backends["duckdb"] = duckdb_backend(folder / "duckdb")
            pg_wanted = [n for n in names if n.startswith("pg")]
            if pg_wanted:
                reason = skip_reason()
                if reason is None:
                    server = stack.enter_context(running_server(prefix="nl2sql-sec-"))
                    cluster, pg = pg_backends(server, folder / "pg")
                    stack.callback(cluster.close)
                    backends.update({n: pg[n] for n in pg_wanted})
                else:
                    notes.append(f"PostgreSQL left out: {reason}")
            names = tuple(n for n in names if n in backends)
            try:
                verdicts = _run(backends, names, paths, folder)
            finally:
                for backend in backends.values():
                    backend.close()
    elapsed = time.perf_counter() - started
    families = len({a.family for a in ATTACKS})
    print(
        f"attack corpus: {len(ATTACKS)} attacks in {families} families + {len(ORACLES)} existence "
        f"oracles, run as {len(verdicts)} (attack, role, path, backend) combinations in {elapsed:.0f} s"
    )
    for note in notes:
        print(note)
    print()
    print(table(verdicts, names))
    failures = [v for v in verdicts if not v.ok]
    if failures and not args.quiet:
        print()
        print(f"{len(failures)} failures:")
        for v in failures:
            print("  " + v.describe())
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
