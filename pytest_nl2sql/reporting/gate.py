"""The baseline gate applied: an item's verdict, stale entries, updates, and the gate on a report.

``baseline.py`` owns the file and the rule (``judge``); this module applies it to pytest's
reports during a run (``apply_verdict``), to the records of a finished run or a merged report
(``gate_records``, for ``pytest-nl2sql report gate``), and rewrites baseline files from the records
(``update_baselines``). Everything here works on records, the plain dicts of ``report.py``.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from pytest_nl2sql.errors import SuiteError
from pytest_nl2sql.reporting.baseline import (
    Baseline,
    BaselineChange,
    BaselineError,
    Entry,
    baseline_key,
    beside,
    judge,
)
from pytest_nl2sql.reporting.outputs import write_output
from pytest_nl2sql.safetext import one_line
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.suitefile.lock import lock_for
from pytest_nl2sql.suitefile.model import Status

__all__ = ["GateResult", "apply_verdict", "failed_scorers", "gate_records", "raw_failed", "suite_cases", "update_baselines"]


def failed_scorers(record: Mapping[str, Any]) -> list[str]:
    """The gating scorers that failed, from a record's scores."""
    return [n for n, s in (record.get("scores") or {}).items() if s.get("passed") is False and s.get("gating")]


def raw_failed(record: Mapping[str, Any]) -> bool | None:
    """Did the item fail before the baseline had its say? None for a skipped item."""
    verdict = record.get("verdict")
    if verdict in ("skipped", "error"):  # not asked, or the suite's error: not the engine's
        return None
    if verdict == "xfailed":
        return True
    if verdict == "failed":
        return record.get("baseline") != "fixed"  # strict turns a fixed item into a failure
    return False


def suite_cases(path: Path) -> dict[str, list[str]] | None:
    """``{case id: roles}`` of a suite's approved cases (None when the suite does not load)."""
    try:
        suite = load_suite(path)
    except (SuiteError, OSError):
        return None
    return {c.id: list(c.outcome) for c in suite.cases if c.status is Status.APPROVED}


def apply_verdict(baseline: Baseline | None, record: dict[str, Any], report: Any, mode: str, *, strict: bool) -> None:
    """Set ``record["verdict"]`` (and the baseline fields) and turn the pytest report into an
    xfail, a failure that names what the baseline knew, or a strict failure of a fixed item."""
    failed = failed_scorers(record)
    if report.skipped:
        record["verdict"] = "skipped"
        return
    j = judge(baseline, record["suite"], record["case_id"], record["role"], mode, failed if report.failed else None, record.get("llm_config"))
    record["verdict"] = j.verdict
    state = j.state
    if state is not None:
        record["baseline"] = state
    if j.verdict == "xfailed":
        report.outcome = "skipped"
        report.wasxfail = f"known failure (baseline): {j.reason()}"[:300]
        record["baseline_reason"] = j.reason()[:300]
    elif j.verdict == "failed" and state == "new":
        knew = j.knew()[:300]
        record["baseline_reason"] = knew
        _append(report, f"  baseline: not a known failure; the baseline knew only: {knew}")
    elif j.verdict == "xfail-fixed" and strict:
        record["verdict"] = "failed"
        report.outcome = "failed"
        fixed = ", ".join(f"{e.mode} {e.scorer}" for e in j.fixed)
        report.longrepr = (
            f"{baseline_key(record['suite'], record['case_id'], record['role'], record.get('llm_config'))}: a known failure now passes (strict baseline): "
            f"{fixed}; remove it with --nl2sql-update-baseline"
        )


def _append(report: Any, line: str) -> None:
    longrepr = report.longrepr
    if isinstance(longrepr, str):
        report.longrepr = longrepr + "\n" + line
        return
    entries = getattr(getattr(longrepr, "reprtraceback", None), "reprentries", None)
    if entries and hasattr(entries[-1], "lines"):
        lines = list(entries[-1].lines)
        lines.append(line + "\n")
        entries[-1].lines = lines
        return
    addsection = getattr(longrepr, "addsection", None)
    if addsection is not None:
        addsection("nl2sql baseline", line)


@attrs.frozen
class GateResult:
    """The baseline's verdict on a whole run."""

    new: tuple[str, ...] = ()  # node ids that failed and are not known failures
    known: tuple[str, ...] = ()
    fixed: tuple[Entry, ...] = ()
    stale: tuple[tuple[Entry, str], ...] = ()
    strict: bool = False

    @property
    def ok(self) -> bool:
        return not self.new and not (self.strict and (self.fixed or self.stale))

    def lines(self) -> list[str]:
        out = [
            f"baseline gate: {len(self.new)} new failures, {len(self.known)} known failures, "
            f"{len(self.fixed)} fixed entries, {len(self.stale)} stale entries"
            + (" (strict)" if self.strict else "")
            + (": ok" if self.ok else ": FAILED")
        ]
        out += [f"  new failure: {one_line(n)}" for n in self.new]  # node ids from a report file: neutralised
        out += [f"  fixed: {one_line(e.describe())} (remove it with --nl2sql-update-baseline)" for e in self.fixed]
        out += stale_lines(self.stale)
        return out


def stale_lines(stale: Sequence[tuple[Entry, str]]) -> list[str]:
    return [f"  stale: {one_line(e.describe())}: {one_line(why)} (remove it with --nl2sql-update-baseline)" for e, why in stale]


def gate_records(
    records: Iterable[Mapping[str, Any]],
    baseline: Baseline,
    *,
    mode: str,
    suites: Mapping[str, Mapping[str, Iterable[str]]] | None = None,
    strict: bool = False,
    crashed: Iterable[str] = (),
) -> GateResult:
    """Judge a finished run's records (a JSON report, a merged one) against ``baseline``; an
    item that crashed (``run.crashed``) is a new failure whatever the baseline knows."""
    baseline = baseline.in_mode(mode)
    new, known, fixed = [f"{n} (crashed)" for n in crashed], [], []
    for rec in records:
        failed = raw_failed(rec)
        if failed is None:
            continue
        j = judge(baseline, rec["suite"], rec["case_id"], rec["role"], rec.get("mode") or mode, failed_scorers(rec) if failed else None, rec.get("llm_config"))
        if j.verdict == "failed":
            new.append(rec["nodeid"])
        elif j.verdict == "xfailed":
            known.append(rec["nodeid"])
        fixed.extend(j.fixed)
    stale = tuple(baseline.stale(suites)) if suites else ()
    return GateResult(tuple(sorted(new)), tuple(sorted(known)), tuple(sorted(set(fixed))), stale, strict)


def baseline_path(settings: Any, suite_path: Path) -> Path:
    return settings.baseline or beside(suite_path)


def update_baselines(
    records: Iterable[Mapping[str, Any]], suite_paths: Iterable[Path], settings: Any, errors: list[str] | None = None
) -> list[BaselineChange]:
    """``--nl2sql-update-baseline``: rewrite each baseline from the items that ran; prune stale
    entries of the run's suites; return what changed, file by file."""
    suites = {Path(p).name: Path(p) for p in suite_paths}
    targets: dict[Path, list[Path]] = {}
    for path in suites.values():
        targets.setdefault(baseline_path(settings, path), []).append(path)
    ran: dict[Path, list[tuple[str, str, str, dict[str, str], str]]] = {t: [] for t in targets}
    for rec in records:
        failed = raw_failed(rec)
        path = suites.get(rec["suite"])
        if failed is None or path is None:
            continue
        reasons: dict[str, str] = {}
        if failed:
            for name in failed_scorers(rec) or ["engine"]:
                detail = (rec.get("scores") or {}).get(name, {}).get("detail") or ""
                reasons[name] = (detail or rec.get("error") or "")[:300]
        ran[baseline_path(settings, path)].append((rec["suite"], rec["case_id"], rec["role"], reasons, rec.get("llm_config") or ""))
    changes: list[BaselineChange] = []
    for target, paths in sorted(targets.items()):
        cases = {p.name: c for p in paths if (c := suite_cases(p)) is not None}

        def write_one(target: Path = target, cases: Mapping[str, Any] = cases) -> None:
            # under the file's lock, read what is on disk now and merge this run's items into
            # it: two runs updating one baseline at once never lose each other's entries
            with lock_for(target):
                try:
                    old = Baseline.load(target)
                except BaselineError:
                    if target.exists() or target.is_symlink():
                        raise
                    old = Baseline(target)
                if not old.entries and old.version != 1 and not any(r[3] for r in ran[target]):
                    return  # nothing known, nothing failed: no file to write
                if target.exists() and not (target.stat().st_mode & 0o222 and os.access(target, os.W_OK)):
                    raise PermissionError(errno.EACCES, "the file is read-only (make it writable to update the baseline)")
                new, change = old.updated(settings.mode, ran[target], cases)
                new.write()
                changes.append(change)

        if errors is None:
            write_one()
        else:
            write_output("--nl2sql-baseline", target, write_one, errors)
    return changes


def stale_entries(baselines: Iterable[Baseline], suite_paths: Iterable[Path]) -> list[tuple[Entry, str]]:
    """Stale entries of the run's baselines (cases or roles the run's suites no longer have)."""
    cases = {Path(p).name: c for p in suite_paths if (c := suite_cases(Path(p))) is not None}
    out: list[tuple[Entry, str]] = []
    for b in baselines:
        out.extend(b.stale(cases))
    return out
