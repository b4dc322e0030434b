"""The ``nl2sql`` command. Each subcommand is a thin door onto the library (and the plugin)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .errors import Nl2sqlError, SuiteError

__all__ = ["main"]


def _suite_check(args: argparse.Namespace) -> int:
    from .loader import load_suite

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
    from .legacy import migrate

    suite = migrate(args.old, args.output, args.plans)
    print(f"{args.output}: wrote {len(suite)} cases (version 1)")
    return 0


def _demo(args: argparse.Namespace) -> int:
    """The main job: build the demo and check the shipped suites (grows into the full demo run)."""
    import time
    from importlib import resources
    from pathlib import Path

    from .demo import build_demo_databases
    from .loader import load_suite

    start = time.perf_counter()
    target = Path(args.dir)
    paths = build_demo_databases(target / "data")
    for name, path in paths.items():
        print(f"demo database {name}: {path}")
    status = 0
    shipped = sorted(p for p in resources.files("pytest_nl2sql.suites").iterdir() if p.name.endswith(".yaml"))
    for suite_path in shipped:
        try:
            suite = load_suite(str(suite_path), use_cache=False)
        except SuiteError as exc:
            print(exc, file=sys.stderr)
            status = 1
            continue
        print(f"suite {suite_path.name}: ok ({len(suite)} cases, {len(suite.approved())} approved)")
    print(f"demo done in {time.perf_counter() - start:.1f}s")
    return status


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
    demo = sub.add_parser("demo", help="the main job: build the demo and run its suites")
    demo.add_argument("dir", nargs="?", default="nl2sql-demo", help="folder for the demo (default: nl2sql-demo)")
    demo.set_defaults(func=_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except Nl2sqlError as exc:
        print(f"nl2sql: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
