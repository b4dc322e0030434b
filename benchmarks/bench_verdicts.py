"""What a cold guard and validator verdict costs, against parsing the same SQL alone.

    python benchmarks/bench_verdicts.py [--repeat 5]

On Spider dev's C3SQL predictions (the 972 questions whose database is in ../shared/data/spider),
in this process, with nothing remembered (the in-process memos emptied before each pass and the
verdict store off, as in a run whose verdicts are all computed: the "cold" and "suite cached"
lines of ``bench_official.py``):

* ``parse``: ``sqlglot.parse`` of each prediction, as SQLite (the least any verdict can cost);
* ``verdicts``: what the replay engine asks of each prediction before it runs: the statement
  guard (``check_statement``) and the validator (``validate_sql``, an unrestricted role).

Prints the CPU time of each (median of ``--repeat`` passes) and ``verdicts/parse X.XXx``, the
number to watch when the guard or the validator changes. Exits 0 with a message when the shared
data is absent.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    from benchmarks.spider.convert import convert, default_spider_dir

    spider = default_spider_dir()
    if not (spider / "dev.json").is_file():
        print(f"skipped: the Spider data is not at {spider} (set NL2SQL_SPIDER_DIR)")
        return 0
    import sqlglot

    from pytest_nl2sql.config import load_config
    from pytest_nl2sql.datasources import DatasourceRegistry, guard, memo
    from pytest_nl2sql.datasources.guard import StatementRefused, check_statement
    from pytest_nl2sql.datasources.introspect import introspect
    from pytest_nl2sql.engine import validator
    from pytest_nl2sql.engine.validator import validate_sql

    predicted = (spider / "predictions" / "C3SQL" / "predicted_sql.txt").read_text(encoding="utf-8").splitlines()
    with tempfile.TemporaryDirectory() as tmp:
        conv = convert(spider, Path(tmp))
        project = load_config(Path(tmp) / "nl2sql.yaml")
        registry = DatasourceRegistry.from_config(project)
        try:
            schemas = {}
            for db in {it.db_id for it in conv.items}:
                info = introspect(registry.get(db))
                schemas[db] = {name: [c.name for c in t.columns] for name, t in info.tables.items()}
        finally:
            registry.close()
    items = [(predicted[it.index].strip(), it.db_id) for it in conv.items]
    policy = project.role(next(iter(project.roles)))
    memo.STORE.enable(None)  # nothing remembered across runs

    def parse() -> None:
        for sql, _ in items:
            try:
                sqlglot.parse(sql, read="sqlite")
            except sqlglot.errors.SqlglotError:
                pass

    def verdicts() -> None:
        validator.VERDICTS.clear()
        guard.VERDICTS.clear()
        guard.PARSES.clear()
        for sql, db in items:
            try:
                check_statement(sql, "sqlite")
            except StatementRefused:
                continue
            validate_sql(sql, dialect="sqlite", datasource=db, schema=schemas[db], policy=policy)

    verdicts()  # imports and first uses (sqlglot's dialect, the rules) out of the way
    times: dict[str, list[float]] = {"parse": [], "verdicts": []}
    for _ in range(args.repeat):
        for name, run in (("parse", parse), ("verdicts", verdicts)):
            start = time.process_time()
            run()
            times[name].append(time.process_time() - start)
    median = {k: statistics.median(v) for k, v in times.items()}
    print(f"{len(items)} Spider dev predictions (C3SQL), median of {args.repeat} passes, CPU; "
          f"sqlglot {sqlglot.__version__}")
    for name, t in median.items():
        print(f"  {name:<9} {t:6.3f}s   {t / len(items) * 1e6:6.0f} us a query")
    print(f"verdicts/parse {median['verdicts'] / median['parse']:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
