"""Records, failure reports and the run report (terminal, JSON, GitHub step summary).

Every item leaves one record (a plain dict, so it crosses xdist unchanged); the controller
aggregates them into a ``RunReport``. The JSON report's schema is documented in
docs/report.md (``"schema": "pytest-nl2sql/report", "version": 1``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_nl2sql import __version__
from pytest_nl2sql.reporting import (
    answer_figures,
    answerability,
    breakdowns,
    figures,
    models,
    provenance,
    repeats,
    steps,
)
from pytest_nl2sql.reporting.answer_figures import answer_fields
from pytest_nl2sql.reporting.completeness import incomplete_line
from pytest_nl2sql.reporting.intervals import wilson
from pytest_nl2sql.safetext import line_safe, md_cell, one_line, plain, shown
from pytest_nl2sql.scoring import clarification
from pytest_nl2sql.suitefile.digest import gold_digest_of
from pytest_nl2sql.suitefile.model import EvalCase

if TYPE_CHECKING:
    from pytest_nl2sql.engine.protocol import Answer, RouteResult
    from pytest_nl2sql.reporting.spool import RecordSpool
    from pytest_nl2sql.scoring.scorers import Score
    from pytest_nl2sql.suitefile.model import Outcome

__all__ = ["RunReport", "failure_reason", "failure_text", "make_record", "record_reason", "short_repr", "wilson", "write_report"]

class CaseItem(Protocol):
    """What a report needs of an item (the plugin's ``CaseItem``): one case asked as one role."""

    nodeid: str
    path: Path
    case: EvalCase
    role: str
    expected: Outcome


REPORT_SCHEMA = "pytest-nl2sql/report"
REPORT_VERSION = 1
#: The longest text a record or a failure report keeps of one value (SQL, an error, a detail):
#: the statement guard's limit, so any SQL that could have run is kept whole.
MAX_TEXT_CHARS = 100_000


def clip(text: Any, limit: int = MAX_TEXT_CHARS) -> Any:
    """``text`` cut to ``limit`` characters with a marker saying how long it was (not text: as is)."""
    if isinstance(text, str) and len(text) > limit:
        return f"{text[:limit]} ... [truncated: {len(text):,} characters]"
    return text


def make_record(
    item: CaseItem,
    mode: str,
    answer: Answer | None,
    route: RouteResult | None,
    scores: Sequence[Score],
    *,
    latency: float = 0.0,
    skipped: str | None = None,
) -> dict[str, Any]:
    case = item.case
    return {
        "nodeid": item.nodeid,
        "suite": item.path.name,
        "case_id": case.id,
        "role": item.role,
        "kind": case.kind.value,
        "expected": item.expected.value,
        "tags": list(case.tags),
        "difficulty": case.difficulty.value if case.difficulty else None,
        "datasources": list(case.datasources),
        "mode": mode,
        "status": answer.status if answer is not None else ("routed" if route is not None else None),
        "scores": {
            s.name: {"passed": s.passed, "value": s.value, "detail": clip(s.detail), "gating": s.gating} for s in scores
        },
        "sql": clip(answer.sql) if answer is not None else None,
        "gold_sql": clip(case.sql),
        "rows": len(answer.rows) if answer is not None and answer.rows is not None else None,
        "truncated": bool(answer.truncated) if answer is not None else False,
        "route": {"top": route.top, "shortlist": list(route.shortlist)} if route is not None else None,
        "cost_usd": answer.cost_usd if answer is not None else 0.0,
        "latency_s": round(latency, 6),
        "error": clip(answer.error) if answer is not None else None,
        "message": clip(answer.message or None) if answer is not None else None,
        "code": answer.code if answer is not None else None,
        "skipped": skipped,
        "question": case.question,
        "row_diff": _row_diff(scores),
        "gold_digest": gold_digest_of(case, item.role),
        **_test_suite_record(scores),
        **answer_fields(answer, scores),  # source, text, steps, lenient, unsupported (answer_figures.py)
        **({"llm_config": item.llm} if getattr(item, "llm", None) else {}),  # --nl2sql-llm NAME
    }


def _test_suite_record(scores: Sequence[Score]) -> dict[str, Any]:
    """--nl2sql-test-suite: whether the neighbours were checked, and which one disagreed."""
    for s in scores:
        if s.name == "result_match" and "test_suite" in s.data:
            return {"test_suite": s.data["test_suite"]}
    return {}


def _neighbour_no(found: dict) -> int | None:
    n = found.get("neighbour")
    return n + 1 if isinstance(n, int) and not isinstance(n, bool) else None


def test_suite_summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The summary figures of --nl2sql-test-suite (none when it was off)."""
    marked = [r for r in records if r.get("test_suite")]
    if not marked:
        return {}
    checked = [r for r in marked if r["test_suite"].get("checked")]
    caught = [r for r in checked if r["test_suite"].get("disagreed")]
    return {
        "test_suite": {
            "checked": len(checked),
            "passed": len(checked) - len(caught),
            "failed_on_a_neighbour": sorted(r["nodeid"] for r in caught),
            "not_checked": len(marked) - len(checked),
            "not_checked_why": sorted({r["test_suite"].get("why", "") for r in marked if not r["test_suite"].get("checked")}),
            # the gold is fragile on a neighbour: passes, listed for the gold's owner to read
            "gold_findings": [
                {"nodeid": r["nodeid"], "case_id": r.get("case_id"), "suite": r.get("suite"),
                 "neighbour": _neighbour_no(r["test_suite"]["gold_finding"]), "why": r["test_suite"]["gold_finding"].get("gold_finding")}
                for r in sorted(checked, key=lambda r: str(r["nodeid"])) if isinstance(r["test_suite"].get("gold_finding"), dict)
            ],
        }
    }


def _row_diff(scores: Sequence[Score]) -> dict[str, list[list[Any]]] | None:
    """The first 10 missing and unexpected rows of a failed result_match (plain values)."""
    for s in scores:
        if s.name == "result_match" and s.passed is False and (s.data.get("missing") or s.data.get("unexpected")):
            return {k: [[plain(v) for v in row] for row in (s.data.get(k) or [])[:10]] for k in ("missing", "unexpected")}
    return None


def _fmt_rows(rows: Iterable[Sequence[Any]]) -> list[str]:
    return ["    " + ", ".join(shown(v) for v in r) for r in rows]


def failure_reason(scores: Sequence[Score], answer: Answer | None = None, limit: int = 200) -> str:
    """The one-line reason of a failing item: each failed gating score and its detail."""
    parts = [f"{s.name}: {s.detail}" if s.detail else s.name for s in scores if s.gating and s.passed is False]
    if not parts and answer is not None and answer.error:
        parts = [f"engine: {answer.error}"]
    text = one_line("; ".join(parts) or "failed")  # one line, whatever the details held, neutralised
    return text if len(text) <= limit else text[: limit - 3] + "..."


def failure_text(item: CaseItem, mode: str, answer: Answer | None, route: RouteResult | None, scores: Sequence[Score]) -> str:
    """What a failing item shows: the one-line reason first (pytest's ``-r`` line shows it),
    then question, role, outcomes, SQL, and a row diff."""
    case = item.case
    loc = f"{case.location}" if case.location else str(item.path)
    lines = [
        failure_reason(scores, answer),
        f"{loc}: case '{case.id}' as {item.role} ({mode} mode)",
        f"  question: {case.question}",
        f"  expected: {item.expected.value}",
    ]
    if answer is not None:
        actual = answer.status + (f" ({answer.code})" if answer.code else "")
        lines.append(f"  actual:   {actual}" + (f" -- {clip(answer.message)}" if answer.message and answer.status != "ok" else ""))
    if route is not None:
        lines.append(f"  routing:  ranked {[n for n, _ in route.ranked[:3]]}, shortlist {list(route.shortlist)}")
    for s in scores:
        if s.passed is False:
            lines.append(f"  FAILED {s.name}: {clip(s.detail)}")
        else:
            lines.append(f"  {'ok' if s.passed else 'info'} {s.name}" + (f": {clip(s.detail)}" if s.detail else ""))
    if case.sql:
        lines.append("  gold SQL:")
        lines.extend("    " + ln for ln in clip(case.sql).rstrip().splitlines())
    if answer is not None and answer.sql:
        lines.append("  generated SQL:")
        lines.extend("    " + ln for ln in clip(answer.sql).rstrip().splitlines())
    for s in scores:
        if s.name == "result_match" and s.passed is False and (s.data.get("missing") or s.data.get("unexpected")):
            if s.data.get("missing"):
                lines.append(f"  missing rows (first {min(10, len(s.data['missing']))}):")
                lines.extend(_fmt_rows(s.data["missing"][:10]))
            if s.data.get("unexpected"):
                lines.append(f"  unexpected rows (first {min(10, len(s.data['unexpected']))}):")
                lines.extend(_fmt_rows(s.data["unexpected"][:10]))
    if answer is not None and answer.error:
        lines.append(f"  engine error: {clip(answer.error)}")
    return line_safe("\n".join(lines))  # database, engine and suite text: no control character, no '::' line


def short_repr(item: CaseItem, text: str, reason: str | None = None) -> Any:
    """A failure report whose crash message is the one-line reason (by default the text's first
    line), so pytest's ``-r`` summary and junitxml's ``message`` carry it, on CI and under xdist."""
    from _pytest._code.code import ReprExceptionInfo, ReprFileLocation, ReprTracebackNative

    case = item.case
    path = str(case.location.path) if case.location else str(item.path)
    line = case.location.line if case.location else 0
    reason = reason or text.split("\n", 1)[0]
    return ReprExceptionInfo(ReprTracebackNative([ln + "\n" for ln in text.splitlines()]), ReprFileLocation(path, line, reason))


def record_reason(record: dict[str, Any], limit: int = 200) -> str:
    """The one-line reason of a failed record: its failed gating scores and their details."""
    parts = [
        f"{name}: {s['detail']}" if s.get("detail") else name
        for name, s in (record.get("scores") or {}).items()
        if s.get("gating") and s.get("passed") is False
    ]
    text = one_line("; ".join(parts) or record.get("error") or "failed")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _passed(record: dict[str, Any]) -> bool:
    return record.get("verdict") in ("passed", "xfail-fixed")


class RunReport:
    """The aggregate of a run's records: a list of them, or a ``RecordSpool`` (the plugin's:
    the summary then reads the slim views, the JSON and HTML reports the spool, one record at
    a time; ``records`` reads them all into memory, for API callers)."""

    def __init__(self, records: Sequence[dict[str, Any]] | None, meta: dict[str, Any], *, spool: RecordSpool | None = None) -> None:
        self._spool = spool
        self._records = None if spool is not None else sorted(records or (), key=lambda r: r["nodeid"])
        self._summary: dict[str, Any] | None = None
        self.meta = meta

    @property
    def records(self) -> list[dict[str, Any]]:
        if self._records is None:
            self._records = list(self._spool.records()) if self._spool is not None else []
        return self._records

    def _views(self) -> Sequence[dict[str, Any]]:
        """What the summary reads: the slim views of a spool, else the records."""
        if self._records is None and self._spool is not None:
            return self._spool.views()
        return self.records

    def items(self) -> Sequence[dict[str, Any]]:
        """The whole records in node id order; from a spool, read back one at a time."""
        if self._records is None and self._spool is not None:
            return self._spool.records()
        return self.records

    def _group(self, key: str, records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return breakdowns.group(records, key, _passed)

    _stat = staticmethod(breakdowns.stat)

    def summary(self) -> dict[str, Any]:
        if self._summary is None:
            self._summary = self._compute_summary(self._views())
        return self._summary

    def _compute_summary(self, records: Sequence[dict[str, Any]]) -> dict[str, Any]:
        ran = [r for r in records if r.get("verdict") not in ("skipped", "error")]  # error: the suite's
        answer = [r for r in ran if r["kind"] == "answer"]
        out: dict[str, Any] = {
            "items": len(records),
            "ran": len(ran),
            "skipped": sum(1 for r in records if r.get("verdict") == "skipped"),
            "passed": sum(1 for r in ran if _passed(r)),
            "failed": sum(1 for r in ran if r.get("verdict") == "failed"),
            "xfailed": sum(1 for r in ran if r.get("verdict") == "xfailed"),
            "errors": sum(1 for r in records if r.get("verdict") == "error"),
            "accuracy": self._stat([_passed(r) for r in answer]),
        }
        em = [r["scores"]["result_match"]["passed"] for r in answer if "result_match" in r["scores"]]
        out["execution_accuracy"] = self._stat([bool(x) for x in em])
        routing = [r["scores"]["routing"]["passed"] for r in ran if "routing" in r["scores"]]
        out["routing_accuracy"] = self._stat([bool(x) for x in routing])
        recalls = [r["scores"]["retrieval_recall"]["value"] for r in ran if "retrieval_recall" in r["scores"]]
        out["retrieval_recall_mean"] = round(sum(recalls) / len(recalls), 4) if recalls else None
        out["by_tag"] = self._group("tags", answer)
        out["by_difficulty"] = self._group("difficulty", answer)
        out["by_role"] = self._group("role", answer)
        out["by_datasource"] = self._group("datasources", answer)
        # per outcome: only items whose outcome was checked (not in mode retrieval)
        out["by_outcome"] = self._group("expected", [r for r in answer if "outcome" in r["scores"]])
        out["cost_usd"] = round(sum(r.get("cost_usd") or 0.0 for r in records), 6)
        out.update(breakdowns.summary_figures(records))  # checked, routing per group, confusion, leak, taxonomy
        out.update(figures.usage_figures(records, out["passed"], self.meta.get("mode")))  # tokens, latency, cache
        out.update(repeats.summary_figures(records, int(self.meta.get("repeat") or 1)))  # pass@k, pass^k, flaky
        out.update(figures.not_asked_figures(records))  # not_asked
        out.update(test_suite_summary(records))  # --nl2sql-test-suite
        out.update(clarification.summary_figures(records))  # --nl2sql-clarify
        out.update(answerability.answerability(records))  # precision/recall of "not answerable"
        out.update(answer_figures.summary_figures(records, _passed))  # by_source, lenient, faithfulness
        out.update(steps.summary_figures(records, self.meta.get("mode")))  # engine steps
        out.update(models.summary_figures(records, _passed, self.meta.get("mode")))  # --nl2sql-llm: a board per config, McNemar per pair
        out.update(self.meta.get("summary_extra") or {})  # figures of the run beyond its records (llm.failed_connects, ...)
        return out

    def to_json(self, *, lazy: bool = False) -> dict[str, Any]:
        """The JSON report as data; ``lazy``: its items read back one at a time (a spool's)."""
        return {
            "schema": REPORT_SCHEMA,
            "version": REPORT_VERSION,
            "run": {k: v for k, v in self.meta.items() if k != "summary_extra"},
            "summary": self.summary(),
            "items": self.items() if lazy else self.records,
        }

    def write_json(self, path: Path) -> None:
        """Write the JSON report, its items one a line, read back one at a time (the same schema
        and data as ``json.dumps(self.to_json())``; readers may stream the ``items`` array)."""
        write_report(path, self.to_json(lazy=True))

    # -- text --------------------------------------------------------------------------
    @staticmethod
    def _line(name: str, stat: dict[str, Any]) -> str:
        name = one_line(name)
        if not stat["total"]:
            return f"  {name:<28} -"
        lo, hi = stat["ci95"]
        return f"  {name:<28} {stat['accuracy']:6.1%}  ({stat['passed']}/{stat['total']}, 95% CI {lo:.1%}-{hi:.1%})"

    def lines(self) -> list[str]:
        s = self.summary()
        meta = self.meta
        out = [
            f"mode {meta.get('mode')}; {s['items']} items, {s['passed']} passed, {s['failed']} failed, "
            f"{s['xfailed']} known failures (baseline), {s['skipped']} skipped; cost ${s['cost_usd']:.4f}",
        ]
        if s.get("errors"):
            out.append(f"  {s['errors']} items are suite errors (not scored, not counted): fix the suite (pytest-nl2sql suite check)")
        if s["accuracy"]["total"]:
            out.append(self._line("accuracy (all items)", s["accuracy"]))
        allowed = (s.get("by_outcome") or {}).get("allowed")
        if allowed and allowed["total"] and allowed["total"] != s["accuracy"]["total"]:
            out.append(self._line("accuracy (answer cases)", allowed))  # the items expected to answer
        if s["execution_accuracy"]["total"]:
            out.append(self._line("execution accuracy", s["execution_accuracy"]))
        if s["routing_accuracy"]["total"]:
            out.append(self._line("routing accuracy", s["routing_accuracy"]))
        if s.get("test_suite"):
            ts = s["test_suite"]
            caught = len(ts["failed_on_a_neighbour"])
            line = (
                f"  {'test-suite accuracy':<28} the execution accuracy above, with {caught} of {ts['checked']} "
                "passes on the real database failed on a neighbour database"
            )
            out.append(line)
            if ts["not_checked"]:
                out.append(f"  {'':<28} {ts['not_checked']} items scored on the real database only: {'; '.join(ts['not_checked_why'])}")
            found = ts.get("gold_findings") or []
            if found:
                out.append(f"  {'gold findings':<28} {len(found)} passes where the gold is fragile on a neighbour (read the gold):")
                out += [f"  {'':<28} {g['nodeid']}: neighbour {g['neighbour']}: {g['why']}" for g in found[:10]]
                if len(found) > 10:
                    out.append(f"  {'':<28} and {len(found) - 10} more (the JSON report's summary.test_suite.gold_findings)")
        if s["retrieval_recall_mean"] is not None:
            out.append(f"  {'mean retrieval recall':<28} {s['retrieval_recall_mean']:.3f}")
        checks = s.get("checked") or []
        beyond_routing = [c for c in checks if c not in ("routing", "retrieval_recall")]
        for title, key in (
            ("per tag", "by_tag"),
            ("per difficulty", "by_difficulty"),
            ("per role", "by_role"),
            ("per datasource", "by_datasource"),
            ("per outcome", "by_outcome"),
        ):
            # a breakdown of answer items says what was checked; when the mode checked routing
            # only, the routing breakdowns below (every item) say it all
            if s[key] and beyond_routing:
                out.append(f" {title} (answer items; checked: {', '.join(checks)}):")
                out.extend(self._line(k, v) for k, v in s[key].items())
        out.extend(breakdowns.summary_lines(s))
        out.extend(clarification.summary_lines(s))
        out.extend(answerability.summary_lines(s))
        out.extend(answer_figures.summary_lines(s))
        out.extend(models.summary_lines(s))
        out.extend(figures.usage_lines(s))
        out.extend(steps.summary_lines(s))
        out.extend(repeats.summary_lines(s, self._views()))
        out.extend(figures.not_asked_lines(self._views()))
        for label in ("fixed",):
            items = meta.get(label) or []
            if items:
                out.append(f" {label}: {', '.join(items)}")
        said = provenance.summary_line(meta)
        if said:
            out.append(said)
        return out

    def markdown(self) -> str:
        s = self.summary()
        rows = ["| | accuracy | passed/total | 95% CI |", "|---|---|---|---|"]

        def row(name: str, st: dict[str, Any]) -> None:
            if st["total"]:
                rows.append(f"| {name} | {st['accuracy']:.1%} | {st['passed']}/{st['total']} | {st['ci95'][0]:.1%}-{st['ci95'][1]:.1%} |")

        row("**accuracy**", s["accuracy"])
        row("execution accuracy", s["execution_accuracy"])
        row("routing accuracy", s["routing_accuracy"])
        leak = s.get("leak") or {}
        if leak.get("should_refuse"):
            rows.append(f"| leak rate (answered, should be refused) | {leak['rate']:.1%} | {leak['leaked']}/{leak['should_refuse']} | upper {leak['upper95']:.1%} |")
        for key in ("by_tag", "by_difficulty", "by_role", "by_datasource", "by_outcome"):
            for k, v in s[key].items():
                row(f"{key[3:]}: {md_cell(k)}", v)  # tags, roles, datasources come from the suite
        for name, st in [*breakdowns.markdown_rows(s), *answerability.markdown_rows(s), *answer_figures.markdown_rows(s), *models.markdown_rows(s)]:
            row(md_cell(name), st)
        c = s.get("clarification")
        if c and c["needed"]:
            rows.append(f"| clarification resolved ({c['asked']} asked, {c['recognised']} recognised, {c['unnecessary']} unnecessary) "
                        f"| {c['resolved'] / c['needed']:.1%} | {c['resolved']}/{c['needed']} | |")
        incomplete = incomplete_line(self.meta)
        warn = f"**{md_cell(incomplete)}**\n\n" if incomplete else ""
        head = f"### pytest-nl2sql ({self.meta.get('mode')} mode)\n\n{warn}{s['passed']} passed, {s['failed']} failed, {s['xfailed']} known failures, cost ${s['cost_usd']:.4f}\n\n"
        return head + "\n".join(rows) + "\n"

    def append_github_summary(self) -> None:
        target = os.environ.get("GITHUB_STEP_SUMMARY")
        if target:
            with open(target, "a", encoding="utf-8") as fh:
                fh.write(self.markdown())


def write_report(path: Path, data: Mapping[str, Any]) -> None:
    """Write a JSON report whose ``items`` may be lazy: the keys sorted, each item on one line
    of the ``items`` array, the file replaced whole (a reader never sees half of it)."""
    from pytest_nl2sql.suitefile.lock import write_atomic_with

    head = {k: v for k, v in data.items() if k != "items"}

    def fill(fh: Any) -> None:
        fh.write('{\n  "items": [')
        first = True
        for rec in data.get("items") or ():
            fh.write("\n    " if first else ",\n    ")
            fh.write(json.dumps(rec, sort_keys=True, default=str))
            first = False
        fh.write("]" if first else "\n  ]")
        for key in sorted(head):
            body = json.dumps(head[key], indent=2, sort_keys=True, default=str).replace("\n", "\n  ")
            fh.write(f",\n  {json.dumps(key)}: {body}")
        fh.write("\n}\n")

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_atomic_with(path, fill)


def run_meta(settings: Any, suites: Iterable[Path], started: float, workers: int, fixed: list[str], crashed: list[str]) -> dict[str, Any]:
    return {
        "plugin_version": __version__,
        "mode": settings.mode,
        "suites": sorted(Path(p).name for p in suites),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "duration_s": round(time.time() - started, 3),
        "workers": workers,
        "max_cost_usd": settings.max_cost,
        "concurrency": getattr(settings, "concurrency", 1),
        "repeat": getattr(settings, "repeat", 1),
        "cache": bool(getattr(settings, "cache", False)),
        "fixed": sorted(fixed),
        "crashed": sorted(crashed),
        "shard": "{}/{}".format(*settings.shard) if getattr(settings, "shard", None) else None,
    }
