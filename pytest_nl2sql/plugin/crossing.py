"""How an item's record crosses from an xdist worker to the controller: as one JSON string.

A worker attaches the item's record to its report (``report.nl2sql``) and xdist sends the
report's fields with execnet, whose serializer walks every nested dict, list and string of the
record in Python, on the worker and again on the controller (~85 and ~110 us a record on
Spider's records). The record is plain JSON data, so a worker sends it as one string
(``json.dumps``, in C) and the controller reads it back with ``json.loads``: the same record,
a tenth of the work. Only reports a worker sends are changed; a report serialized on the
controller (pytest-reportlog) keeps the record as it is.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

__all__ = ["RecordCrossing"]

#: The report field a worker sends the record under.
KEY = "nl2sql_json"


class RecordCrossing:
    """Registered by ``session.start`` on workers and on the controller of an xdist run."""

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: Any) -> Any:
        data = yield
        if hasattr(config, "workerinput") and isinstance(data, dict) and isinstance(data.get("nl2sql"), dict):
            data[KEY] = json.dumps(data.pop("nl2sql"), default=str, ensure_ascii=False)
        return data

    @pytest.hookimpl(wrapper=True)
    def pytest_report_from_serializable(self, config: pytest.Config, data: Any) -> Any:
        text = data.pop(KEY, None) if isinstance(data, dict) else None
        report = yield
        if isinstance(text, str) and report is not None:
            report.nl2sql = json.loads(text)
        return report
