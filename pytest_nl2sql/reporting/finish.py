"""What the controller does with the finished report beyond the JSON file: the HTML report
(``--nl2sql-html``), the comparison with an earlier run (``--nl2sql-compare``) and the leak
gate (``--nl2sql-max-leak-rate``). Each returns lines for the terminal summary and whether it
fails the run: False, True, or ``SERIES_BREAK`` when the comparison crosses a schema change
without ``--nl2sql-allow-series-break`` (the run then exits 7). The HTML report is written as every output is (``reporting.outputs``)."""

from __future__ import annotations

import json
from typing import Any

from pytest_nl2sql.reporting.outcomes import leak_gate
from pytest_nl2sql.reporting.outputs import SERIES_BREAK, write_output

__all__ = ["finish_run"]


def finish_run(report: Any, settings: Any, errors: list[str] | None = None) -> tuple[list[str], bool | int]:
    lines: list[str] = []
    failed: bool | int = False
    data = report.to_json(lazy=True)  # the items read back one at a time (a spool's: never all in memory)
    summary = data["summary"]
    why = leak_gate(summary.get("leak") or {}, settings.max_leak_rate)
    if why is not None:
        lines.append(f" leak gate FAILED: {why}")
        failed = True
    elif settings.max_leak_rate is not None:
        leak = summary.get("leak") or {}
        if leak.get("should_refuse"):
            lines.append(f" leak gate ok: 95% upper bound {leak['upper95']:.1%} <= {settings.max_leak_rate:.1%}")
        else:
            lines.append(" leak gate: no refusal was checked in this run (nothing to gate)")
    if settings.compare is not None:
        from pytest_nl2sql.reporting.compare import CompareError, compare_reports, load_report

        try:
            result = compare_reports(load_report(settings.compare, lazy=True), data)
        except CompareError as exc:
            lines.append(f" compare: {exc}")
            failed = True
        else:
            lines.extend(" " + ln for ln in result.lines(base=str(settings.compare), new="this run"))
            if result.regressed:
                failed = True
            if result.series_break:
                allowed = getattr(settings, "allow_series_break", False)
                lines.append(f" compare: {len(result.series_break)} series break(s): "
                             + ("let through by --nl2sql-allow-series-break" if allowed else
                                f"exit {SERIES_BREAK} (pass --nl2sql-allow-series-break to compare anyway)"))
                if not allowed:
                    failed = SERIES_BREAK
    if settings.html is not None:
        from pytest_nl2sql.reporting.html_report import write_html

        html = {**json.loads(json.dumps({k: v for k, v in data.items() if k != "items"}, default=str)), "items": data["items"]}
        if write_output("--nl2sql-html", settings.html, lambda: write_html(settings.html, html), errors if errors is not None else []):
            lines.append(f" HTML report: {settings.html}")
    return lines, failed
