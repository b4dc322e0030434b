"""The ``pytest-nl2sql`` command (also ``python -m pytest_nl2sql``). Each subcommand is a thin door onto the library (and the plugin)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from pytest_nl2sql.config import ConfigError
from pytest_nl2sql.errors import Nl2sqlError, SuiteError

__all__ = ["main"]


USAGE_ERROR = 4  # as pytest's: the command cannot run as asked
INCOMPLETE = 3  # report gate/merge/compare: a report of a run that lost items (without --allow-incomplete)
_CONFIG_HELP = "the project's nl2sql.yaml (default: the nearest one above the current folder)"


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
        project = _find_project(args.config, path)
        if project is None:
            # the file alone: datasources, roles, schema names and plans need the project
            print(f"{path}: ok ({len(suite)} cases, {approved} approved; file only: no nl2sql.yaml found)")
            continue
        from pytest_nl2sql.upkeep.check import run_check

        if run_check(path, project, echo=lambda line: print(line, file=sys.stderr)):
            status = 1
            continue
        print(f"{path}: ok ({len(suite)} cases, {approved} approved; checked against {project.path})")
    return status


def _find_project(config_path: str | None, near: str) -> object | None:
    """The project of ``--config``, else the nl2sql.yaml nearest above ``near``, else None."""
    from pathlib import Path

    from pytest_nl2sql.config import find_config, load_config

    if config_path:
        return load_config(config_path)
    start = Path(near).resolve()
    for folder in (start if start.is_dir() else start.parent, *start.parents):
        found = find_config(folder)
        if found is not None:
            return load_config(found)
    return None


def _suite_plan(args: argparse.Namespace) -> int:
    from pytest_nl2sql.upkeep.plans import run_plan

    return run_plan(args.paths, _project(args.config, args.paths[0]), force=args.force)


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
    written = init_demo(target, force=args.force)
    print(f"demo project: {target} (nl2sql.yaml, pytest.ini, evals/, data/chinook.sqlite, support.sqlite, webanalytics.sqlite)")
    _say_kept(written.kept)
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
        if not args.dir:
            print("pytest-nl2sql init: name the folder: `pytest-nl2sql init DIR` (a project skeleton) "
                  "or `pytest-nl2sql init --demo DIR` (the demo)", file=sys.stderr)
            return USAGE_ERROR
        from pytest_nl2sql.upkeep.skeleton import init_project

        made, kept = init_project(args.dir, force=args.force)
        print(f"{args.dir}: project skeleton ready: {', '.join(made) or 'nothing new'}")
        _say_kept(kept)
        print(f"next: cd {args.dir} && pytest   (then replace the example datasource and case with yours)")
        return 0
    written = init_demo(args.demo, force=args.force)
    print(f"{args.demo}: demo project ready ({len(written)} files): nl2sql.yaml, pytest.ini, evals.yaml, evals/, data/")
    _say_kept(written.kept)
    return 0


def _say_kept(kept: list[str]) -> None:
    if kept:
        one = len(kept) == 1
        print(
            f"kept {len(kept)} file{'' if one else 's'} you changed: {', '.join(kept)} "
            f"(use --force to overwrite {'it' if one else 'them'})"
        )


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
    print(
        f"pytest-nl2sql: no nl2sql.yaml found in {start} or any folder above it: pass --config "
        "PATH/TO/nl2sql.yaml, or make a project with `pytest-nl2sql init DIR` (or `init --demo DIR`)",
        file=sys.stderr,
    )
    raise SystemExit(USAGE_ERROR)


def _regenerate(args: argparse.Namespace) -> int:
    from pytest_nl2sql.datasources import DatasourceRegistry
    from pytest_nl2sql.upkeep.regenerate import regenerate

    status = 0
    for path in args.paths:
        project = _project(args.config, path)
        if _role_problems(path, project):
            status = 1
            continue
        report = regenerate(path, DatasourceRegistry.from_config(project), allow_packaged=args.allow_packaged)
        print(report)
        status = status or (1 if report.failed else 0)
    return status


def _role_problems(path: str, project: object) -> bool:
    """The one rule for a case's roles (as suite check and pytest): print each unknown one."""
    from pytest_nl2sql.suitefile.loader import load_suite
    from pytest_nl2sql.suitefile.model import Status
    from pytest_nl2sql.upkeep.check import role_problems

    problems = [
        f"{case.location or path}: case '{case.id}': {message}"
        for case in load_suite(path, strict=False, use_cache=False).cases
        if case.status is Status.APPROVED
        for message in role_problems(case, project)  # type: ignore[arg-type]
    ]
    for line in problems:
        print(line, file=sys.stderr)
    return bool(problems)


def _eval_run(args: argparse.Namespace) -> int:
    import pytest

    from pytest_nl2sql.api import pytest_args

    if not args.suite:
        _project(args.config, ".")  # no nl2sql.yaml, no --suite: a usage error, nothing runs
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

    return run_audit(
        args.paths, _project(args.config, args.paths[0]), fail_on_warnings=args.warnings,
        mutants=getattr(args, "mutants", False), report=getattr(args, "report", None),
        mark=getattr(args, "mark_reviewed", None), note=getattr(args, "note", None),
    )


def _feedback_rate(args: argparse.Namespace) -> int:
    from pytest_nl2sql.upkeep.feedback import run_rate

    return run_rate(_project(args.config, "."), args.run_id, args.good, args.role)


def _feedback_export(args: argparse.Namespace) -> int:
    from pytest_nl2sql.upkeep.feedback import run_export

    path = args.path or args.good
    if not path:
        print("pytest-nl2sql feedback export: name the drafts file to write: pytest-nl2sql feedback export PATH", file=sys.stderr)
        return USAGE_ERROR
    return run_export(_project(args.config, "."), path)


def _feedback_list(args: argparse.Namespace) -> int:
    from pytest_nl2sql.upkeep.feedback import run_list

    return run_list(_project(args.config, "."), limit=args.limit)


def _report_door(func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``report compare/merge/gate`` read files anyone may have written: whatever slips past the
    report's validation is still one line naming the command, never a traceback."""

    def door(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except (KeyError, TypeError, ValueError, AttributeError, OverflowError, RecursionError) as exc:
            from pytest_nl2sql.safetext import one_line

            what = one_line(f"{type(exc).__name__}: {exc}")[:200]
            print(f"pytest-nl2sql report {args.report_command}: a malformed report ({what}); "
                  "check it with `python -m json.tool FILE` or write it again with --nl2sql-out", file=sys.stderr)
            return 2

    return door


def _refuse_incomplete(command: str, reports: list[tuple[str, Any]], allow: bool) -> bool:
    """True (and one line on stderr) when a report is incomplete and --allow-incomplete is not
    given; with it, one line on stdout saying what is let through (reporting.completeness)."""
    from pytest_nl2sql.reporting.completeness import incomplete_line

    refused = False
    for name, data in reports:
        line = incomplete_line(data.get("run") or {})
        if line is None:
            continue
        if allow:
            print(f"{name}: {line} (let through by --allow-incomplete)")
        else:
            print(f"pytest-nl2sql report {command}: {name}: {line}; rerun it, or pass --allow-incomplete", file=sys.stderr)
            refused = True
    return refused


def _report_compare(args: argparse.Namespace) -> int:
    """Items that flipped between two JSON reports, per-tag deltas, a paired test."""
    from pytest_nl2sql.reporting.compare import CompareError, compare_reports, load_report

    try:
        base, new = load_report(args.base, lazy=True), load_report(args.new, lazy=True)  # items streamed
    except CompareError as exc:
        print(f"pytest-nl2sql report compare: {exc}", file=sys.stderr)
        return 2
    if _refuse_incomplete("compare", [(args.base, base), (args.new, new)], args.allow_incomplete):
        return INCOMPLETE
    try:
        result = compare_reports(base, new)
    except CompareError as exc:
        print(f"pytest-nl2sql report compare: {exc}", file=sys.stderr)
        return 2
    for line in result.lines(base=args.base, new=args.new):
        print(line)
    code = result.exit_code(args.allow_regressions, args.max_p, allow_series_break=args.allow_series_break)
    if result.series_break:
        print(f"  {len(result.series_break)} series break(s): "
              + ("let through by --allow-series-break" if args.allow_series_break else "exit 2 (pass --allow-series-break to compare anyway)"))
    if result.regressed and code == 0:
        why = "allowed by --allow-regressions" if len(result.regressed) <= args.allow_regressions else f"McNemar p above --max-p {args.max_p}"
        print(f"  {len(result.regressed)} regressed, {why}: exit 0")
    return code


def _report_merge(args: argparse.Namespace) -> int:
    """Shard reports into one, equal to a single run's."""
    import tempfile
    from pathlib import Path

    from pytest_nl2sql.reporting.compare import CompareError, load_report
    from pytest_nl2sql.reporting.shards import MergeError, merge_into

    try:
        loaded = [(p, load_report(p, lazy=True)) for p in args.reports]  # items streamed from the files
    except CompareError as exc:
        print(f"pytest-nl2sql report merge: {exc}", file=sys.stderr)
        return 2
    if _refuse_incomplete("merge", loaded, args.allow_incomplete):
        return INCOMPLETE
    with tempfile.TemporaryDirectory(prefix="nl2sql-merge-") as folder:
        try:
            merged = merge_into(loaded, Path(folder))  # records spooled in the folder, not held
        except MergeError as exc:
            print(f"pytest-nl2sql report merge: {exc}", file=sys.stderr)
            return 2
        out = Path(args.output)
        merged.write_json(out)
        s = merged.summary()
        print(f"{out}: merged {len(args.reports)} reports: {s['items']} items, {s['passed']} passed, {s['failed']} failed, {s['xfailed']} known failures")
        if args.html:
            from pytest_nl2sql.reporting.html_report import write_html

            write_html(Path(args.html), merged.to_json(lazy=True))
            print(f"{args.html}: HTML report")
    return 0


def _report_gate(args: argparse.Namespace) -> int:
    """The baseline gate on a finished (or merged) JSON report."""
    from pathlib import Path

    from pytest_nl2sql.reporting.baseline import Baseline, BaselineError
    from pytest_nl2sql.reporting.compare import CompareError, load_report
    from pytest_nl2sql.reporting.gate import gate_records, suite_cases

    try:
        report = load_report(args.report, lazy=True)  # items streamed from the file
        baseline = Baseline.load(Path(args.baseline))
    except (CompareError, BaselineError) as exc:
        print(f"pytest-nl2sql report gate: {exc}", file=sys.stderr)
        return 2
    if _refuse_incomplete("gate", [(args.report, report)], args.allow_incomplete):
        return INCOMPLETE
    mode = report["run"].get("mode") or "plans"
    if baseline.version == 1:
        print(f"pytest-nl2sql report gate: {args.baseline}: baseline version 1 records no mode; migrate it (docs/plugin.md#the-baseline-gate)", file=sys.stderr)
        return 2
    suites = {Path(p).name: c for p in args.suite or () if (c := suite_cases(Path(p))) is not None}
    result = gate_records(report["items"], baseline, mode=mode, suites=suites, strict=args.strict, crashed=report["run"].get("crashed") or ())
    for line in result.lines():
        print(line)
    if args.against:
        from pytest_nl2sql.reporting.provenance import changed_cases, series_breaks
        from pytest_nl2sql.safetext import one_line

        try:
            before = load_report(args.against)
        except CompareError as exc:
            print(f"pytest-nl2sql report gate: --against {exc}", file=sys.stderr)
            return 2
        for (suite, case), why in sorted(changed_cases(before["run"], report["run"]).items()):
            print(f"  case changed since {one_line(args.against)}: {one_line(suite)}::{one_line(case)} ({why}): not a regression")
        breaks = series_breaks(before["run"], report["run"])
        for line in breaks:
            print(f"  SERIES BREAK since {one_line(args.against)}: {one_line(line)}")
        if breaks and not args.allow_series_break:
            print(f"pytest-nl2sql report gate: {len(breaks)} series break(s) against {args.against}: the runs are about "
                  "different databases; pass --allow-series-break to gate anyway", file=sys.stderr)
            return 2
    return 0 if result.ok else 1


def _report_publish(args: argparse.Namespace) -> int:
    """Append a run's record to a history folder and render its page of figures over time."""
    from pathlib import Path

    from pytest_nl2sql.reporting.compare import CompareError, load_report
    from pytest_nl2sql.reporting.history import publish

    try:
        report = load_report(args.report)
    except CompareError as exc:
        print(f"pytest-nl2sql report publish: {exc}", file=sys.stderr)
        return 2
    if _refuse_incomplete("publish", [(args.report, report)], args.allow_incomplete):
        return INCOMPLETE
    folder = Path(args.folder)
    if folder.exists() and not folder.is_dir():
        print(f"pytest-nl2sql report publish: {folder} is not a folder (name a folder for the history)", file=sys.stderr)
        return 2
    try:
        history, page, count = publish(report, folder)
    except OSError as exc:
        print(f"pytest-nl2sql report publish: cannot write to {folder}: {exc.strerror or exc}", file=sys.stderr)
        return 6
    print(f"{history}: {count} runs recorded; {page}: the figures over time")
    return 0


def _add_report_parser(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser("report", help="compare, merge, gate and publish JSON reports (--nl2sql-out)")
    rep_sub = rep.add_subparsers(dest="report_command", required=True)
    cmp_ = rep_sub.add_parser("compare", help="items that flipped between two runs and a paired test (exit 1 on regressions)")
    cmp_.add_argument("base", metavar="BASE.json", help="the earlier JSON report (--nl2sql-out)")
    cmp_.add_argument("new", metavar="NEW.json", help="the later JSON report")
    cmp_.add_argument("--allow-regressions", type=int, default=0, metavar="N", help="exit 0 with at most N regressed items")
    cmp_.add_argument("--max-p", type=float, default=None, metavar="P", help="exit 0 unless McNemar's p-value is at most P")
    cmp_.add_argument("--allow-incomplete", action="store_true", help="read a report of a run that lost items (crashed, interrupted); says so")
    cmp_.add_argument("--allow-series-break", action="store_true", help="compare even when a datasource's schema fingerprint changed (else exit 2)")
    cmp_.set_defaults(func=_report_door(_report_compare))
    merge = rep_sub.add_parser("merge", help="merge shard reports into one (as a single run's)")
    merge.add_argument("reports", nargs="+", metavar="SHARD.json", help="the shard reports (--nl2sql-shard I/N runs)")
    merge.add_argument("-o", "--output", required=True, metavar="ALL.json", help="the merged JSON report to write")
    merge.add_argument("--html", metavar="FILE", help="also write the merged HTML report")
    merge.add_argument("--allow-incomplete", action="store_true", help="read a report of a run that lost items (crashed, interrupted); says so")
    merge.set_defaults(func=_report_door(_report_merge))
    gate = rep_sub.add_parser("gate", help="the baseline gate on a (merged) report (exit 1 on new failures)")
    gate.add_argument("report", metavar="ALL.json", help="the (merged) JSON report to gate")
    gate.add_argument("--baseline", required=True, metavar="FILE", help="the known failures (JSON baseline)")
    gate.add_argument("--suite", action="append", metavar="PATH", help="the run's suites, to find stale entries")
    gate.add_argument("--strict", action="store_true", help="fixed and stale entries fail too")
    gate.add_argument("--allow-incomplete", action="store_true", help="read a report of a run that lost items (crashed, interrupted); says so")
    gate.add_argument("--against", metavar="BEFORE.json", help="an earlier run's report: list cases changed since, and exit 2 on a series break")
    gate.add_argument("--allow-series-break", action="store_true", help="with --against: gate even when a datasource's schema fingerprint changed")
    gate.set_defaults(func=_report_door(_report_gate))
    pub = rep_sub.add_parser("publish", help="append a run's record to a history folder and render its figures over time (HTML)")
    pub.add_argument("report", metavar="REPORT.json", help="the JSON report of the run (--nl2sql-out)")
    pub.add_argument("folder", metavar="DIR", help="the history folder (history.jsonl and index.html; made if missing)")
    pub.add_argument("--allow-incomplete", action="store_true", help="publish a report of a run that lost items (crashed, interrupted); says so")
    pub.set_defaults(func=_report_door(_report_publish))


def _cache(args: argparse.Namespace) -> int:
    """pytest-nl2sql cache stats|clear: the response cache of mode full (docs/llm.md#the-response-cache)."""
    from pathlib import Path

    from pytest_nl2sql.llm.cache import ResponseCache

    if args.dir:
        folder = Path(args.dir)
    else:
        project = _project(args.config, ".")
        folder = Path(project.path).parent / ".nl2sql-cache" / "llm"  # type: ignore[attr-defined]
    cache = ResponseCache(folder)
    if args.cache_command == "clear":
        print(f"{folder}: removed {cache.clear()} cached responses")
        return 0
    st = cache.stats()
    print(f"{folder}: {st['entries']} cached responses, {st['bytes']} bytes")
    return 0


def _cache_neighbours(args: argparse.Namespace) -> int:
    """pytest-nl2sql cache neighbours [--clear]: the neighbour databases of --nl2sql-test-suite and
    audit --mutants: SQLite files beside nl2sql.yaml, PostgreSQL ones on the scratch server."""
    from pathlib import Path

    from pytest_nl2sql.scoring.pgneighbours import NeighbourSetupError, drop_neighbours

    project = _project(args.config, ".")
    folder = Path(project.path).parent / ".nl2sql-cache" / "neighbours"  # type: ignore[attr-defined]
    files = sorted(folder.glob("*.sqlite")) + sorted(folder.glob("distilled-*.json")) if folder.is_dir() else []
    if args.clear:
        for path in files:
            path.unlink(missing_ok=True)
    print(f"{folder}: {'removed' if args.clear else 'holds'} {len(files)} files")
    scratch = project.test_suite  # type: ignore[attr-defined]
    if not scratch.scratch_url:
        return 0
    try:
        names = drop_neighbours(scratch.scratch_url, allow_privileged_login=scratch.allow_privileged_login,
                                dry_run=not args.clear)
    except NeighbourSetupError as exc:
        print(f"pytest-nl2sql: {exc}", file=sys.stderr)
        return 1
    from pytest_nl2sql.config import redact_url

    print(f"{redact_url(scratch.scratch_url)}: {'dropped' if args.clear else 'holds'} {len(names)} neighbour databases")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pytest-nl2sql", description="Test NL2SQL systems with reviewed suites.")
    sub = parser.add_subparsers(dest="command", required=True)

    suite = sub.add_parser("suite", help="check, plan and migrate suite files")
    suite_sub = suite.add_subparsers(dest="suite_command", required=True)
    check = suite_sub.add_parser("check", help="load suites and report every problem (exit 1 on any)")
    check.add_argument("paths", nargs="+", metavar="PATH", help="suite files to check")
    check.add_argument("--config", metavar="nl2sql.yaml", help="the project to check against (default: the nl2sql.yaml above each suite)")
    check.set_defaults(func=_suite_check)
    plan = suite_sub.add_parser("plan", help="derive each answer case's plan from its SQL, verify it, write it in place")
    plan.add_argument("paths", nargs="+", metavar="PATH", help="suite files to give plans")
    plan.add_argument("--config", metavar="nl2sql.yaml", help="the project (default: the nl2sql.yaml above the suite)")
    plan.add_argument("--force", action="store_true", help="replace the plans cases already have")
    plan.set_defaults(func=_suite_plan)
    mig = suite_sub.add_parser("migrate", help="convert 0.6 gold files to a version 1 suite")
    mig.add_argument("old", metavar="OLD.yaml", help="the 0.6 gold file")
    mig.add_argument("--plans", metavar="OLD_plans.yaml", help="the 0.6 plans file to merge in")
    mig.add_argument("-o", "--output", required=True, metavar="NEW.yaml", help="the version 1 suite to write")
    mig.set_defaults(func=_suite_migrate)
    init = sub.add_parser("init", help="create a project: a skeleton (init DIR) or the demo (init --demo DIR)")
    init.add_argument("dir", nargs="?", metavar="DIR", help="write a project skeleton into DIR (nl2sql.yaml, pytest.ini, evals/)")
    init.add_argument("--demo", metavar="DIR", help="write the demo project into DIR")
    init.add_argument("--force", action="store_true", help="overwrite files you changed")
    init.set_defaults(func=_init)

    ev = sub.add_parser("eval", help="run and maintain evaluation suites")
    ev_sub = ev.add_subparsers(dest="eval_command", required=True)
    run = ev_sub.add_parser("run", help="run suites with pytest (same options as --nl2sql-*)")
    run.add_argument("--mode", choices=("retrieval", "plans", "full"), default=None, help="as --nl2sql-mode (default plans)")
    run.add_argument("--suite", action="append", metavar="PATH", help="suite file to run (repeatable; default: the suites evals.yaml names)")
    run.add_argument("--out", metavar="FILE", help="write the JSON report here")
    run.add_argument("--max-cost", type=float, metavar="USD", help="budget for the whole run's cost")
    run.add_argument("--cases", metavar="TAG,...", help="run only cases with one of these tags or datasources")
    run.add_argument("--roles", metavar="ROLE,...", help="run only these roles")
    run.add_argument("--clarify", action="store_true", help="also run roles whose outcome is clarify")
    run.add_argument("--config", metavar="nl2sql.yaml", help=_CONFIG_HELP)
    run.add_argument("-n", "--workers", metavar="N", help="xdist workers (e.g. auto)")
    run.add_argument("pytest_args", nargs="*", help="more pytest arguments, after --")
    run.set_defaults(func=_eval_run)
    seed = ev_sub.add_parser("seed", help="draft cases from a datasource's schema (status: draft)")
    seed.add_argument("datasource", help="the datasource (nl2sql.yaml) whose schema the drafts come from")
    seed.add_argument("-o", "--output", required=True, metavar="DRAFTS.yaml", help="the drafts file to write")
    seed.add_argument("--count", type=int, default=50, help="how many drafts (default 50)")
    seed.add_argument("--seed", type=int, default=0, help="random seed (the same seed gives the same drafts)")
    seed.add_argument("--config", metavar="nl2sql.yaml", help=_CONFIG_HELP)
    seed.set_defaults(func=_seed)
    audit = ev_sub.add_parser("audit", help="check that the gold can be trusted (exit 1 on errors)")
    audit.add_argument("paths", nargs="+", metavar="PATH", help="suite files to audit")
    audit.add_argument("--warnings", action="store_true", help="warnings fail too")
    audit.add_argument(
        "--mutants", action="store_true",
        help="also run mutants of each gold sql on the database and neighbour databases (weak-gold)",
    )
    audit.add_argument(
        "--report", metavar="REPORT.json",
        help="also list the gold findings of a --nl2sql-test-suite run's JSON report (gold-fragile)",
    )
    audit.add_argument(
        "--mark-reviewed", metavar="CASE",
        help="record the answer the --report flagged for CASE on a neighbour as reviewed: equivalent (it is not failed again)",
    )
    audit.add_argument("--note", help="with --mark-reviewed: why the flagged answer is right")
    audit.add_argument("--config", metavar="nl2sql.yaml", help=_CONFIG_HELP)
    audit.set_defaults(func=_audit)
    regen = ev_sub.add_parser("regenerate", help="rewrite rows/alt_rows from the database")
    regen.add_argument("paths", nargs="+", metavar="PATH", help="suite files to rewrite")
    regen.add_argument("--config", metavar="nl2sql.yaml", help=_CONFIG_HELP)
    regen.add_argument("--allow-packaged", action="store_true", help="let regenerate rewrite a suite the package ships")
    regen.set_defaults(func=_regenerate)

    fb = sub.add_parser("feedback", help="rate answered questions and export the good ones as drafts")
    fb_sub = fb.add_subparsers(dest="feedback_command", required=True)
    rate = fb_sub.add_parser("rate", help="thumbs-up or -down for one recorded run")
    rate.add_argument("run_id", type=int, help="the run's id (pytest-nl2sql feedback list)")
    good = rate.add_mutually_exclusive_group(required=True)
    good.add_argument("--good", dest="good", action="store_true", help="the answer was right")
    good.add_argument("--bad", dest="good", action="store_false", help="the answer was wrong")
    rate.add_argument("--role", help="the role the rating is for (default: the run's)")
    rate.add_argument("--config", metavar="nl2sql.yaml", help=_CONFIG_HELP)
    rate.set_defaults(func=_feedback_rate)
    listing = fb_sub.add_parser("list", help="the recent recorded runs, with the ids rate takes")
    listing.add_argument("--limit", type=int, default=20, help="how many runs to show (newest first)")
    listing.add_argument("--config", metavar="nl2sql.yaml", help=_CONFIG_HELP)
    listing.set_defaults(func=_feedback_list)
    export = fb_sub.add_parser("export", help="write each thumbs-up run as a draft case")
    export.add_argument("path", nargs="?", metavar="PATH", help="the drafts file to write")
    export.add_argument("--good", metavar="PATH", help="the same as PATH (thumbs-up runs are what is exported)")
    export.add_argument("--config", metavar="nl2sql.yaml", help=_CONFIG_HELP)
    export.set_defaults(func=_feedback_export)

    _add_report_parser(sub)
    cache = sub.add_parser("cache", help="the response cache of mode full (--nl2sql-cache)")
    cache_sub = cache.add_subparsers(dest="cache_command", required=True)
    for name, text in (("stats", "how many responses the cache holds"), ("clear", "remove every cached response")):
        cmd = cache_sub.add_parser(name, help=text)
        cmd.add_argument("--dir", metavar="DIR", help="the cache folder (default: .nl2sql-cache/llm beside nl2sql.yaml)")
        cmd.add_argument("--config", metavar="nl2sql.yaml", help=_CONFIG_HELP)
        cmd.set_defaults(func=_cache)
    hood = cache_sub.add_parser("neighbours", help="the neighbour databases of --nl2sql-test-suite (SQLite files, PostgreSQL scratch databases)")
    hood.add_argument("--clear", action="store_true", help="remove them all (they are built again when needed)")
    hood.add_argument("--config", metavar="nl2sql.yaml", help=_CONFIG_HELP)
    hood.set_defaults(func=_cache_neighbours)

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
        print(f"pytest-nl2sql: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
