"""Past one machine: ``--nl2sql-shard I/N`` and merging the shards' JSON reports.

A case belongs to shard ``1 + sha256("<suite file name>::<case id>") mod N``: every role of a
case runs in the same shard, the shard of a case depends on nothing but its own id (adding a
case elsewhere moves no other case), and the shares are balanced in expectation (each case is
equally likely to land in any shard). Items that are not nl2sql cases are left alone.

(``plugin.collect.select_shard`` deselects the other shards' items.) ``merge_reports`` joins shard reports into one whose items, verdicts and summary are those of
a single run over the same cases (the summary is recomputed from the merged items).
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_nl2sql.errors import Nl2sqlError
from pytest_nl2sql.reporting.report import REPORT_SCHEMA, REPORT_VERSION, RunReport
from pytest_nl2sql.reporting.spool import RecordSpool

__all__ = ["MergeError", "merge_reports", "shard_of"]


class MergeError(Nl2sqlError):
    pass


def shard_of(suite_name: str, case_id: str, count: int) -> int:
    """The 1-based shard of a case."""
    digest = hashlib.sha256(f"{suite_name}::{case_id}".encode()).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def _check(report: Mapping[str, Any], where: str) -> None:
    if not isinstance(report, Mapping) or report.get("schema") != REPORT_SCHEMA or report.get("version") != REPORT_VERSION:
        raise MergeError(f"{where}: not a pytest-nl2sql report (schema {REPORT_SCHEMA!r}, version {REPORT_VERSION})")


def merge_reports(reports: Sequence[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """One report from the shards' reports ``[(name, data), ...]``."""
    with tempfile.TemporaryDirectory(prefix="nl2sql-merge-") as folder:
        return merge_into(reports, Path(folder)).to_json()


def merge_into(reports: Sequence[tuple[str, Mapping[str, Any]]], folder: Path) -> RunReport:
    """The merged report, its records spooled in ``folder`` (``reporting.spool``): the shards'
    items are read one at a time (a lazy report's from its file), never all in memory."""
    if not reports:
        raise MergeError("nothing to merge")
    spool = RecordSpool(folder)
    seen_in: dict[str, int] = {}
    modes = set()
    for n, (where, data) in enumerate(reports):
        _check(data, where)
        modes.add(data["run"].get("mode"))
        for rec in data["items"]:
            node = rec["nodeid"]
            if node in seen_in:
                raise MergeError(f"{where}: item {node} is also in {reports[seen_in[node]][0]} (shards must not overlap)")
            spool.add(rec)
            seen_in[node] = n
    if len(modes) > 1:
        raise MergeError(f"the reports come from different modes ({', '.join(sorted(map(str, modes)))}): merge runs of one mode")
    runs = [d["run"] for _, d in reports]
    meta = dict(runs[0])
    meta.update(
        {
            "suites": sorted({s for r in runs for s in r.get("suites", [])}),
            "started": min(r.get("started", "") for r in runs),
            "duration_s": max(float(r.get("duration_s") or 0) for r in runs),
            "workers": sum(int(r.get("workers") or 0) for r in runs),
            "fixed": sorted({n for r in runs for n in r.get("fixed", [])}),
            "crashed": sorted({n for r in runs for n in r.get("crashed", [])}),
            "merged_from": [w for w, _ in reports],
            "collected": sum(int(r.get("collected") or 0) for r in runs) if all("collected" in r for r in runs) else None,
            "missing": [m for r in runs for m in r.get("missing") or []],
            "complete": all(r.get("complete", True) is not False for r in runs),
        }
    )
    meta.pop("shard", None)
    return RunReport(None, meta, spool=spool)
