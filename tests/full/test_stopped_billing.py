"""Ctrl-C in mode full (issue 27 B.5): the report's cost counts every call the server billed,
the prefetched ones answered after the run stopped included, and says how many those were;
``llm_calls`` counts only calls that reached the server, failed connects apart. Against the
real test LLM HTTP server, with a real SIGINT."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.full.conftest import FULL, KEY, use_server
from tests.sigint import sigint_as_a_terminal_gives_it

# tell the test when the fourth item runs (calls for the next items are in flight by then)
MARK_CONFTEST = """
import time
seen = []
def pytest_runtest_call(item):
    seen.append(item.nodeid)
    if len(seen) == 4:
        open("in-item", "w").close()
        time.sleep(60)
"""


def test_ctrl_c_bills_every_answered_call_in_the_report(pytester: pytest.Pytester, project: Path, serve) -> None:
    pytester.makeconftest(MARK_CONFTEST)
    server, plans = serve(hold_s=1.0)  # each call $0.01 (1,000 prompt tokens at $0.01 per 1k)
    with sigint_as_a_terminal_gives_it():
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", *FULL, "--nl2sql-concurrency", "4", "-p", "no:randomly", "-v", "--nl2sql-out", "r.json"],
            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ),
        )
    while not (project / "in-item").exists():
        assert proc.poll() is None, proc.communicate()[0]
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out = proc.communicate(timeout=120)[0]
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    report = json.loads((project / "r.json").read_text())
    s = report["summary"]
    billed = plans.calls * 0.01
    recorded = sum(i["cost_usd"] or 0 for i in report["items"])
    assert plans.calls > sum(1 for i in report["items"] if i.get("status")), "no call was in flight at Ctrl-C"
    assert s["cost_usd"] == pytest.approx(billed), out  # every billed call counted
    assert s["after_stop"]["cost_usd"] == pytest.approx(billed - recorded)
    assert s["after_stop"]["calls"] >= 1
    assert "billed after the run stopped" in out
    assert s["llm_calls"] <= plans.calls  # calls that reached the server, never more


def test_calls_that_never_connect_are_counted_apart(pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    use_server(project, f"http://127.0.0.1:{port}/v1")
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-concurrency", "1", "--nl2sql-out", "r.json")
    assert result.ret == 1
    s = json.loads((project / "r.json").read_text())["summary"]
    assert s["llm_calls"] == 0
    assert s["llm_failed_connects"] >= 1
    assert any("never reached the server" in line for line in result.outlines)
