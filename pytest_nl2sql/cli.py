"""The ``nl2sql`` command. Each subcommand is a thin door onto the library (and the plugin)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pytest_nl2sql.config import ConfigError
from pytest_nl2sql.errors import Nl2sqlError, SuiteError

__all__ = ["main"]


def _suite_check(args: argparse.Namespace) -> int:
    from pytest_nl2sql.suitefile.loader import load_suite

    status = 0
    for path in args.paths:
        try:
            suite = load_suite(path, use_cache=False)
        except SuiteError as exc:
            print(exc, file=sys.stderr)
            status = 1
            continue
        approved = len(suite.approved())
        print(f"{path}: ok ({len(suite)} cases, {approved} approved)")
    return status


def _suite_migrate(args: argparse.Namespace) -> int:
    from pytest_nl2sql.suitefile.legacy import migrate

    suite = migrate(args.old, args.output, args.plans)
    print(f"{args.output}: wrote {len(suite)} cases (version 1)")
    return 0


def _demo(args: argparse.Namespace) -> int:
    """The main job: create the demo, run the Chinook suite (mode plans) and the routing suite
    (mode retrieval, gated by its baseline) through pytest, and print the reports."""
    import subprocess
    import time
    from pathlib import Path

    from pytest_nl2sql.upkeep.init import init_demo

    start = time.perf_counter()
    target = Path(args.dir).resolve()
    init_demo(target, force=args.force)
    print(f"demo project: {target} (nl2sql.yaml, evals/, data/chinook.sqlite, support.sqlite, webanalytics.sqlite)")
    runs = [
        ("Chinook suite, mode plans", ["--nl2sql-suite", "evals/chinook.yaml", "--nl2sql-mode", "plans", "--nl2sql-clarify", "--nl2sql-out", "eval_chinook.json"]),
        ("routing suite, mode retrieval (CI's gate)", ["--nl2sql-suite", "evals/routing.yaml", "--nl2sql-mode", "retrieval", "--nl2sql-out", "eval_routing.json"]),
    ]
    status = 0
    for title, argv in runs:
        if not (target / argv[1]).exists():
            print(f"== {title}: {argv[1]} is not shipped yet, skipped")
            continue
        print(f"== {title}", flush=True)
        cmd = [sys.executable, "-m", "pytest", *argv, "-p", "no:cacheprovider", "-q", *(["-n", args.workers] if args.workers else [])]
        code = subprocess.call(cmd, cwd=target)
        status = status or code
    print(f"demo done in {time.perf_counter() - start:.1f}s; reports: {target / 'eval_chinook.json'}, {target / 'eval_routing.json'}")
    return status


def _init(args: argparse.Namespace) -> int:
    from pytest_nl2sql.upkeep.init import init_demo

    if not args.demo:
        print("nl2sql init: only --demo is supported today (nl2sql init --demo DIR)", file=sys.stderr)
        return 2
    written = init_demo(args.demo, force=args.force)
    print(f"{args.demo}: demo project ready ({len(written)} files): nl2sql.yaml, evals.yaml, evals/, data/")
    return 0


def _project(config_path: str | None, near: str) -> object:
    from pathlib import Path

    from pytest_nl2sql.config import find_config, load_config

    if config_path:
        return load_config(config_path)
    start = Path(near).resolve()
    if not start.is_dir():
        start = start.parent
    for folder in (start, *start.parents):
        found = find_config(folder)
        if found is not None:
            return load_config(found)
    raise SystemExit(f"nl2sql: no nl2sql.yaml found above {near}; pass --config")


def _regenerate(args: argparse.Namespace) -> int:
    from pytest_nl2sql.datasources import DatasourceRegistry
    from pytest_nl2sql.upkeep.regenerate import regenerate

    status = 0
    for path in args.paths:
        project = _project(args.config, path)
        report = regenerate(path, DatasourceRegistry.from_config(project), allow_packaged=args.allow_packaged)
        print(report)
        status = status or (1 if report.failed else 0)
    return status


def _eval_run(args: argparse.Namespace) -> int:
    import pytest

    from pytest_nl2sql.api import pytest_args

    argv = pytest_args(
        args.suite or (),
        config=args.config,
        mode=args.mode,
        clarify=args.clarify,
        roles=args.roles.split(",") if args.roles else None,
        cases=args.cases.split(",") if args.cases else None,
        out=args.out,
        max_cost=args.max_cost,
        workers=args.workers,
        extra=list(args.pytest_args or ()),
    )
    return int(pytest.main(argv))


def _seed(args: argparse.Namespace) -> int:
    from pytest_nl2sql.upkeep.seed import run_seed

    return run_seed(args.datasource, args.output, _project(args.config, args.output), count=args.count, seed=args.seed)


def _audit(args: argparse.Namespace) -> int:
    from pytest_nl2sql.upkeep.audit import run_audit

    return run_audit(args.paths, _project(args.config, args.paths[0]), fail_on_warnings=args.warnings)


def _feedback_rate(args: argparse.Namespace) -> int:
    from pytest_nl2sql.upkeep.feedback import run_rate

    return run_rate(_project(args.config, "."), args.run_id, args.good, args.role)


def _feedback_export(args: argparse.Namespace) -> int:
    from pytest_nl2sql.upkeep.feedback import run_export

    return run_export(_project(args.config, "."), args.good)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nl2sql", description="Test NL2SQL systems with reviewed suites.")
    sub = parser.add_subparsers(dest="command", required=True)

    suite = sub.add_parser("suite", help="check and migrate suite files")
    suite_sub = suite.add_subparsers(dest="suite_command", required=True)
    check = suite_sub.add_parser("check", help="load suites and report every problem (exit 1 on any)")
    check.add_argument("paths", nargs="+", metavar="PATH")
    check.set_defaults(func=_suite_check)
    mig = suite_sub.add_parser("migrate", help="convert 0.6 gold files to a version 1 suite")
    mig.add_argument("old", metavar="OLD.yaml")
    mig.add_argument("--plans", metavar="OLD_plans.yaml")
    mig.add_argument("-o", "--output", required=True, metavar="NEW.yaml")
    mig.set_defaults(func=_suite_migrate)
    init = sub.add_parser("init", help="create a project (nl2sql init --demo DIR)")
    init.add_argument("--demo", metavar="DIR", help="write the demo project into DIR")
    init.add_argument("--force", action="store_true", help="overwrite files you changed")
    init.set_defaults(func=_init)

    ev = sub.add_parser("eval", help="run and maintain evaluation suites")
    ev_sub = ev.add_subparsers(dest="eval_command", required=True)
    run = ev_sub.add_parser("run", help="run suites with pytest (same options as --nl2sql-*)")
    run.add_argument("--mode", choices=("retrieval", "plans", "full"), default=None)
    run.add_argument("--suite", action="append", metavar="PATH")
    run.add_argument("--out", metavar="FILE")
    run.add_argument("--max-cost", type=float, metavar="USD")
    run.add_argument("--cases", metavar="TAG,...")
    run.add_argument("--roles", metavar="ROLE,...")
    run.add_argument("--clarify", action="store_true")
    run.add_argument("--config", metavar="nl2sql.yaml")
    run.add_argument("-n", "--workers", metavar="N", help="xdist workers (e.g. auto)")
    run.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    run.set_defaults(func=_eval_run)
    seed = ev_sub.add_parser("seed", help="draft cases from a datasource's schema (status: draft)")
    seed.add_argument("datasource")
    seed.add_argument("-o", "--output", required=True, metavar="DRAFTS.yaml")
    seed.add_argument("--count", type=int, default=50)
    seed.add_argument("--seed", type=int, default=0, help="random seed (the same seed gives the same drafts)")
    seed.add_argument("--config", metavar="nl2sql.yaml")
    seed.set_defaults(func=_seed)
    audit = ev_sub.add_parser("audit", help="check that the gold can be trusted (exit 1 on errors)")
    audit.add_argument("paths", nargs="+", metavar="PATH")
    audit.add_argument("--warnings", action="store_true", help="warnings fail too")
    audit.add_argument("--config", metavar="nl2sql.yaml")
    audit.set_defaults(func=_audit)
    regen = ev_sub.add_parser("regenerate", help="rewrite rows/alt_rows from the database")
    regen.add_argument("paths", nargs="+", metavar="PATH")
    regen.add_argument("--config", metavar="nl2sql.yaml")
    regen.add_argument("--allow-packaged", action="store_true")
    regen.set_defaults(func=_regenerate)

    fb = sub.add_parser("feedback", help="rate answered questions and export the good ones as drafts")
    fb_sub = fb.add_subparsers(dest="feedback_command", required=True)
    rate = fb_sub.add_parser("rate", help="thumbs-up or -down for one recorded run")
    rate.add_argument("run_id", type=int)
    good = rate.add_mutually_exclusive_group(required=True)
    good.add_argument("--good", dest="good", action="store_true")
    good.add_argument("--bad", dest="good", action="store_false")
    rate.add_argument("--role")
    rate.add_argument("--config", metavar="nl2sql.yaml")
    rate.set_defaults(func=_feedback_rate)
    export = fb_sub.add_parser("export", help="write each thumbs-up run as a draft case")
    export.add_argument("--good", required=True, metavar="PATH", help="the drafts file to write")
    export.add_argument("--config", metavar="nl2sql.yaml")
    export.set_defaults(func=_feedback_export)

    demo = sub.add_parser("demo", help="the main job: build the demo and run its suites")
    demo.add_argument("dir", nargs="?", default="nl2sql-demo", help="folder for the demo (default: nl2sql-demo)")
    demo.add_argument("--force", action="store_true", help="overwrite demo files you changed")
    demo.add_argument("-n", "--workers", metavar="N", help="xdist workers for the runs (e.g. 2)")
    demo.set_defaults(func=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (Nl2sqlError, ConfigError) as exc:
        print(f"nl2sql: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
