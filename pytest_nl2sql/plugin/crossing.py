"""How an item's record crosses from an xdist worker to the controller: as one JSON string.

A worker attaches the item's record to its report (``report.nl2sql``) and xdist sends the
report's fields with execnet, whose serializer walks every nested dict, list and string of the
record in Python, on the worker and again on the controller (~85 and ~110 us a record on
Spider's records). The record is plain JSON data, so a worker sends it as one string
(``json.dumps``, in C) and the controller reads it back with ``json.loads``: the same record,
a tenth of the work. The same goes for the ``keywords`` of an nl2sql item's setup, call and
teardown reports (a dozen names each: the case's tags, role and outcome are markers). Only
reports a worker sends are changed; a report serialized on the controller (pytest-reportlog)
keeps its fields as they are.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

__all__ = ["RecordCrossing"]

#: The report fields a worker sends the record and an nl2sql item's keywords under.
KEY = "nl2sql_json"
KEYWORDS_KEY = "nl2sql_keywords_json"


class RecordCrossing:
    """Registered by ``session.start`` on workers and on the controller of an xdist run;
    ``is_ours(nodeid)`` tells an nl2sql item's node id."""

    def __init__(self, is_ours: Any) -> None:
        self.is_ours = is_ours

    @pytest.hookimpl(wrapper=True)
    def pytest_report_to_serializable(self, config: pytest.Config, report: Any) -> Any:
        data = yield
        if hasattr(config, "workerinput") and isinstance(data, dict):
            if isinstance(data.get("nl2sql"), dict):
                data[KEY] = json.dumps(data.pop("nl2sql"), default=str, ensure_ascii=False)
            nodeid = data.get("nodeid")
            keywords = data.get("keywords")
            if isinstance(keywords, dict) and isinstance(nodeid, str) and "[" in nodeid and self.is_ours(nodeid):
                try:
                    data[KEYWORDS_KEY] = json.dumps(keywords, ensure_ascii=False)
                except (TypeError, ValueError):
                    pass  # not plain data: sent as it is
                else:
                    del data["keywords"]
        return data

    @pytest.hookimpl(wrapper=True)
    def pytest_report_from_serializable(self, config: pytest.Config, data: Any) -> Any:
        text = keywords = None
        if isinstance(data, dict):
            text = data.pop(KEY, None)
            keywords = data.pop(KEYWORDS_KEY, None)
            if isinstance(keywords, str):
                data["keywords"] = json.loads(keywords)
        report = yield
        if isinstance(text, str) and report is not None:
            report.nl2sql = json.loads(text)
        return report
