"""The HTML page is written in pieces (issue 27 G.20): the file ``--nl2sql-html`` and
``report merge --html`` write is the page ``render_html`` returns, byte for byte, with the
items read one at a time (twice: before the table and for its rows), never all in memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_nl2sql.reporting.html_report import render_html, write_html
from pytest_nl2sql.reporting.spool import LazyRecords
from tests.report.test_html import _report


def _variants(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    items = data["items"]
    many = [dict(items[i % len(items)], nodeid=f"evals/mini.yaml::c{i:03d}[admin]") for i in range(80)]  # past the 30 links
    lost = [{"nodeid": f"evals/mini.yaml::m{i:03d}[admin]", "why": "its worker crashed"} for i in range(250)]
    return {
        "the run": data,
        "no items": {**data, "items": []},
        "many failures": {**data, "items": many},
        "incomplete": {**data, "run": {**data["run"], "missing": lost, "complete": False}},
        "no run data": {"run": {}, "summary": {}, "items": items},
    }


def test_the_streamed_page_is_the_page(pytester: pytest.Pytester, project: Path, tmp_path: Path) -> None:
    page, data = _report(pytester, project)
    assert "2 failed of 7 items" in page.read_text(encoding="utf-8")  # written by --nl2sql-html, streamed
    for name, report in _variants(data).items():
        items = list(report["items"])
        reads: list[int] = []

        def read(items: list[dict[str, Any]] = items, reads: list[int] = reads) -> Any:
            reads.append(1)
            yield from (dict(r) for r in items)  # a fresh record each read, as a spool's

        target = tmp_path / f"{name}.html"
        write_html(target, {**report, "items": LazyRecords(len(items), read)})
        assert target.read_text(encoding="utf-8") == render_html(report), name
        assert len(reads) == (2 if items else 0), name  # once for what precedes the table, once for its rows
