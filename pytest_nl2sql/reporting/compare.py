"""Comparing two runs: which items flipped, per-tag deltas, and a paired test.

Items are paired by node id; only items that ran (were not skipped) in both runs count. An
item *passed* when it passed before the baseline had its say (a known failure that failed
again is a failure here: the comparison is about the engine, not the gate).

* **regressed**: passed in BASE, failed in NEW; **fixed**: the other way round.
* **case changed**: the item's case changed between the runs -- its expected outcome, or its
  gold (``gold_digest``: SQL, rows) -- so a flip says nothing about the engine: such items are
  listed apart and left out of every figure.
* **McNemar's exact test** on the discordant pairs: under "no difference", each flipped item
  is as likely to flip either way, so regressed ~ Binomial(regressed + fixed, 1/2); the
  two-sided p-value says how surprising the split is.
* **paired bootstrap**: the shared items resampled with replacement (2,000 times, seed 0),
  the accuracy delta of each resample, its 2.5th and 97.5th percentiles.

``pytest-nl2sql report compare`` exits 1 when more than ``--allow-regressions`` items regressed
(default 0) -- unless ``--max-p P`` is given and McNemar's p-value is above P (the regressions
may be noise) -- and 2 when a file is not a report, or on a **series break** (a datasource's
schema fingerprint changed between the runs: ``run.provenance``) unless ``--allow-series-break``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from pytest_nl2sql.errors import Nl2sqlError
from pytest_nl2sql.reporting import provenance
from pytest_nl2sql.reporting.gate import raw_failed
from pytest_nl2sql.reporting.report import REPORT_SCHEMA, REPORT_VERSION
from pytest_nl2sql.reporting.reportfile import open_report
from pytest_nl2sql.reporting.stats import mcnemar_exact, paired_bootstrap_ci
from pytest_nl2sql.reporting.validate import ReportInvalid, validate_item, validate_report
from pytest_nl2sql.safetext import one_line

__all__ = ["CompareError", "Comparison", "compare_reports", "load_report"]


class CompareError(Nl2sqlError):
    pass


def load_report(path: str | Path, *, lazy: bool = False) -> dict[str, Any]:
    """A JSON report, checked (``reporting.validate``); ``lazy``: its items are read from the
    file one at a time on each pass (``reporting.reportfile``), never all in memory."""
    first_bad: list[ReportInvalid] = []

    def check(rec: dict[str, Any], i: int) -> None:
        if not first_bad:
            try:
                validate_item(rec, i)
            except ReportInvalid as exc:
                first_bad.append(exc)

    try:
        if lazy:
            data: Any = open_report(path, check)
        else:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CompareError(f"{path}: no such report") from None
    except (OSError, ValueError, RecursionError) as exc:
        raise CompareError(f"{path}: not a JSON report ({one_line(str(exc)[:200])})") from None
    if not isinstance(data, dict) or data.get("schema") != REPORT_SCHEMA or data.get("version") != REPORT_VERSION:
        raise CompareError(f"{path}: not a pytest-nl2sql report (schema {REPORT_SCHEMA!r}, version {REPORT_VERSION})")
    try:
        validate_report(data)
        if first_bad:
            raise first_bad[0]
    except ReportInvalid as exc:
        raise CompareError(f"{path}: {one_line(exc)}") from None
    return data


def _outcomes(report: Mapping[str, Any]) -> dict[str, tuple[bool, Mapping[str, Any]]]:
    out = {}
    for rec in report.get("items") or []:
        failed = raw_failed(rec)
        if failed is not None:  # what the comparison reads of the record, not the record
            out[rec["nodeid"]] = (not failed, {k: rec.get(k) for k in ("expected", "gold_digest", "tags", "suite", "case_id")})
    return out


@attrs.frozen
class Comparison:
    shared: int
    only_base: tuple[str, ...]
    only_new: tuple[str, ...]
    regressed: tuple[str, ...]
    fixed: tuple[str, ...]
    base_accuracy: float | None
    new_accuracy: float | None
    delta_ci95: tuple[float, float]
    p_value: float
    by_tag: dict[str, dict[str, Any]]
    case_changed: tuple[tuple[str, str], ...] = ()  # (node id, what changed): not compared
    series_break: tuple[str, ...] = ()  # a datasource's schema fingerprint changed (provenance.py)

    @property
    def delta(self) -> float | None:
        if self.base_accuracy is None or self.new_accuracy is None:
            return None
        return round(self.new_accuracy - self.base_accuracy, 4)

    def exit_code(self, allow_regressions: int = 0, max_p: float | None = None, *, allow_series_break: bool = False) -> int:
        if self.series_break and not allow_series_break:
            return 2  # the two runs are about different databases: not a comparison
        if len(self.regressed) <= allow_regressions:
            return 0
        if max_p is not None and self.p_value > max_p:
            return 0  # more regressions than allowed, but not a significant difference at max_p
        return 1

    def to_json(self) -> dict[str, Any]:
        return {
            "shared": self.shared,
            "only_base": list(self.only_base),
            "only_new": list(self.only_new),
            "regressed": list(self.regressed),
            "fixed": list(self.fixed),
            "base_accuracy": self.base_accuracy,
            "new_accuracy": self.new_accuracy,
            "delta": self.delta,
            "delta_ci95": list(self.delta_ci95),
            "mcnemar_p": self.p_value,
            "by_tag": self.by_tag,
            "case_changed": [{"nodeid": n, "change": why} for n, why in self.case_changed],
            "series_break": list(self.series_break),
        }

    def lines(self, base: str = "BASE", new: str = "NEW") -> list[str]:
        out = [
            f"compare {one_line(base)} -> {one_line(new)}: {self.shared} shared items, {len(self.regressed)} regressed, "
            f"{len(self.fixed)} fixed" + (f", {len(self.case_changed)} case changed (not compared)" if self.case_changed else "")
        ]
        out += [f"  SERIES BREAK: {one_line(b)}: the runs are about different databases" for b in self.series_break]
        if self.delta is not None:
            lo, hi = self.delta_ci95
            out.append(
                f"  accuracy {self.base_accuracy:.1%} -> {self.new_accuracy:.1%} (delta {self.delta:+.1%}, "
                f"paired bootstrap 95% CI {lo:+.1%} to {hi:+.1%}); exact McNemar p = {self.p_value:.4g}"
            )
        # node ids come from the report files: shown neutralised, never raw at a line start
        out += [f"  regressed: {one_line(n)}" for n in self.regressed]
        out += [f"  fixed: {one_line(n)}" for n in self.fixed]
        out += [f"  case changed: {one_line(n)} ({one_line(why)}): the expectation changed, not the engine" for n, why in self.case_changed]
        moved = {t: d for t, d in self.by_tag.items() if d["delta"]}
        if moved:
            out.append("  per tag (shared items):")
            out += [
                f"    {one_line(t):<26} {d['base']:6.1%} -> {d['new']:6.1%}  ({d['delta']:+.1%}, n={d['total']})" for t, d in sorted(moved.items())
            ]
        if self.only_base or self.only_new:
            out.append(f"  not compared: {len(self.only_base)} items only in {base}, {len(self.only_new)} only in {new}")
        return out


def compare_reports(base: Mapping[str, Any], new: Mapping[str, Any], *, resamples: int = 2000, seed: int = 0) -> Comparison:
    b, n = _outcomes(base), _outcomes(new)
    edited = provenance.changed_cases(base.get("run") or {}, new.get("run") or {})
    changed = {k: why for k in set(b) & set(n) if (why := _case_change(b[k][1], n[k][1], edited))}
    shared = sorted(set(b) & set(n) - set(changed))
    bp = [b[k][0] for k in shared]
    np_ = [n[k][0] for k in shared]
    regressed = tuple(k for k in shared if b[k][0] and not n[k][0])
    fixed = tuple(k for k in shared if not b[k][0] and n[k][0])
    tags: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    for k in shared:
        for tag in n[k][1].get("tags") or []:
            tags[str(tag)].append((b[k][0], n[k][0]))
    by_tag = {
        t: {
            "total": len(v),
            "base": round(sum(x for x, _ in v) / len(v), 4),
            "new": round(sum(y for _, y in v) / len(v), 4),
            "delta": round((sum(y for _, y in v) - sum(x for x, _ in v)) / len(v), 4),
        }
        for t, v in sorted(tags.items())
    }
    return Comparison(
        shared=len(shared),
        only_base=tuple(sorted(set(b) - set(n))),
        only_new=tuple(sorted(set(n) - set(b))),
        regressed=regressed,
        fixed=fixed,
        base_accuracy=round(sum(bp) / len(bp), 4) if bp else None,
        new_accuracy=round(sum(np_) / len(np_), 4) if np_ else None,
        delta_ci95=paired_bootstrap_ci(bp, np_, resamples=resamples, seed=seed),
        p_value=round(mcnemar_exact(len(regressed), len(fixed)), 6),
        by_tag=by_tag,
        case_changed=tuple(sorted(changed.items())),
        series_break=tuple(provenance.series_breaks(base.get("run") or {}, new.get("run") or {})),
    )


def _case_change(base: Mapping[str, Any], new: Mapping[str, Any], edited: Mapping[tuple[str, str], str] | None = None) -> str | None:
    """What changed in the item's case between the runs (its expected outcome, its gold, or its
    digest in ``run.provenance``), or None: then a flip is the engine's doing."""
    if base.get("expected") and new.get("expected") and base["expected"] != new["expected"]:
        return f"expected {base['expected']} -> {new['expected']}"
    if base.get("gold_digest") and new.get("gold_digest") and base["gold_digest"] != new["gold_digest"]:
        return "gold changed"
    return (edited or {}).get((str(new.get("suite")), str(new.get("case_id"))))
