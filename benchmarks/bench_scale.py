"""Memory and time of a large run, against plain pytest measured in the same run.

    python benchmarks/bench_scale.py [--items 40000] [--workers 2] [--trace]

A generated suite of ``items / 3`` cases x 3 roles runs in mode retrieval with ``-n WORKERS``
(a stub engine that routes at once and misroutes every tenth case, so one item in ten fails
with a failure report). The baseline is a plain parametrized pytest test with the same number
of items and workers. Each run is a fresh ``python -m pytest`` subprocess; a sampler reads the
peak RSS (``VmHWM``) of the controller and of each worker every 0.05 s.

Printed: time per item (ours and the baseline's), peak RSS of the controller and of the
largest worker (ours and the baseline's), the controller's memory per item above the
baseline's (target <= 8 KB per item) and the largest worker's, the JSON and HTML report sizes, and the peak RSS of
``pytest-nl2sql report merge`` and ``report compare`` of the 40k-item report.
``--trace`` adds the controller's top tracemalloc allocations at the end of the run.
Always exits 0.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

STUB_CONFTEST = '''
from pytest_nl2sql.engine.protocol import Answer, RouteResult

class Stub:
    def route(self, question, role):
        wrong = question.endswith("0?")  # every tenth case is misrouted: a failure report
        db = "other" if wrong else "db"
        return RouteResult(ranked=[(db, 1.0)], shortlist=[db], tables=[f"{db}.T"], columns=[f"{db}.T.x"])

    def answer(self, question, role, llm):
        return Answer(status="ok")

def pytest_nl2sql_make_engine(config, project):
    return Stub()
'''

TRIVIAL_TEST = '''
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_item(i):
    assert i % 10
'''

# loaded into the controller only (``-p nl2sql_memprobe``) with --trace
PROBE = '''
import os, tracemalloc

def pytest_configure(config):
    if not hasattr(config, "workerinput"):
        tracemalloc.start(8)

PHASES = []

def _rss():
    with open("/proc/self/status") as fh:
        fields = dict(line.split(":", 1) for line in fh)
    return f"RSS {int(fields['VmRSS'].split()[0]) / 1e3:.1f} MB (peak {int(fields['VmHWM'].split()[0]) / 1e3:.1f} MB)"

def _phase(name):
    if tracemalloc.is_tracing():
        current, peak = tracemalloc.get_traced_memory()
        PHASES.append(f"{name}: {_rss()}; traced {current / 1e6:.1f} MB, peak since the last phase {peak / 1e6:.1f} MB")
        tracemalloc.reset_peak()

def pytest_collection_finish(session):
    _phase("collected")

import pytest

@pytest.hookimpl(wrapper=True)
def pytest_runtestloop(session):
    _phase("before the items")
    try:
        return (yield)
    finally:
        _phase("items done")

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    _phase("before sessionfinish")
    try:
        return (yield)
    finally:
        _phase("sessionfinish (reports written)")

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter):
    try:
        return (yield)
    finally:
        _phase("terminal summary")

def pytest_unconfigure(config):
    if hasattr(config, "workerinput") or not tracemalloc.is_tracing():
        return
    _phase("unconfigure")
    snap = tracemalloc.take_snapshot()
    current, peak = tracemalloc.get_traced_memory()
    with open(os.environ["NL2SQL_MEMPROBE_OUT"], "w") as fh:
        fh.write("\\n".join(PHASES) + "\\n")
        for stat in snap.statistics("lineno")[:25]:
            fh.write(f"{stat.size / 1e6:8.1f} MB {stat.count:9d} blocks  {stat.traceback[0]}\\n")
        fh.write("-- by traceback (top 8) --\\n")
        for stat in snap.statistics("traceback")[:8]:
            fh.write(f"{stat.size / 1e6:8.1f} MB {stat.count:9d} blocks\\n")
            for frame in stat.traceback.format()[-8:]:
                fh.write(f"      {frame}\\n")
'''

NL2SQL_YAML = (
    "version: 1\ndatasources:\n  db: {url: 'sqlite:///db.sqlite'}\n  other: {url: 'sqlite:///db.sqlite'}\n"
    "roles:\n  admin: {datasources: '*'}\n  analyst: {datasources: '*'}\n  viewer: {datasources: '*'}\n"
)


def suite(cases: int) -> str:
    out = ["version: 1", "cases:"]
    for i in range(cases):
        out += [
            f"- id: c{i:06d}",
            f"  question: How many things are there in group {i}?",
            "  datasources: [db]",
            "  status: approved",
            "  origin: hand",
            f"  tags: [bench, t{i % 7}]",
            "  outcome: {admin: allowed, analyst: allowed, viewer: refused}",
            "  tables: [T]",
            "  columns: [T.x]",
            f"  sql: SELECT x FROM T WHERE x = {i}",
            "  rows: []",
        ]
    return "\n".join(out) + "\n"


def _status(pid: int, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
    except OSError:
        pass
    return out


class Sampler(threading.Thread):
    """Peak RSS of a process and of its descendants (each by pid), read every 0.05 s."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peaks: dict[int, int] = {}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.is_set():
            todo = [self.pid]
            while todo:
                pid = todo.pop()
                self.peaks[pid] = max(self.peaks.get(pid, 0), _status(pid, "VmHWM"))
                todo.extend(_children(pid))
            self.done.wait(0.05)

    def controller(self) -> int:
        return self.peaks.get(self.pid, 0)

    def workers(self) -> int:
        return max((v for k, v in self.peaks.items() if k != self.pid), default=0)


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int, int, subprocess.CompletedProcess]:
    """Run ``cmd``; its wall time, the peak RSS of the process and of its largest descendant."""
    t = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=err)
        sampler = Sampler(proc.pid)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        sampler.done.set()
        sampler.join()
        elapsed = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out.read().decode(errors="replace"), err.read().decode(errors="replace"))
    # wait4's ru_maxrss is the largest of the process and the children it waited for (the xdist
    # workers), so it is not the controller's own figure: the sampled VmHWM is (the high-water
    # mark, so only the last 0.05 s before exit go unseen); wait4 only when nothing was sampled.
    controller = sampler.controller() or usage.ru_maxrss * 1024
    return elapsed, controller, sampler.workers(), done


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=40_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--trace", action="store_true", help="the controller's top tracemalloc allocations")
    args = ap.parse_args()
    cases = args.items // 3
    items = cases * 3
    pytest_cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-n", str(args.workers)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        base = root / "trivial"
        base.mkdir()
        (base / "test_trivial.py").write_text(TRIVIAL_TEST.format(n=items))
        ours = root / "plugin"
        ours.mkdir()
        (ours / "conftest.py").write_text(STUB_CONFTEST)
        (ours / "suite.yaml").write_text(suite(cases))
        (ours / "nl2sql.yaml").write_text(NL2SQL_YAML)
        (ours / "db.sqlite").write_bytes(b"")
        env = dict(os.environ, NL2SQL_CACHE_DIR=str(root / "cache"), PYTHONPATH=str(ours) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        probe: list[str] = []
        if args.trace:
            (ours / "nl2sql_memprobe.py").write_text(PROBE)
            env["NL2SQL_MEMPROBE_OUT"] = str(root / "trace.txt")
            probe = ["-p", "nl2sql_memprobe"]

        subprocess.run([*pytest_cmd[:6], "--co", "--nl2sql-suite", "suite.yaml", "--nl2sql-mode", "retrieval"], cwd=ours, env=env, capture_output=True)  # warm the suite cache
        b_time, b_ctl, b_wrk, b_proc = measure(pytest_cmd, base, env)
        o_time, o_ctl, o_wrk, o_proc = measure(
            [*pytest_cmd, *probe, "--nl2sql-suite", "suite.yaml", "--nl2sql-mode", "retrieval",
             "--nl2sql-out", "r.json", "--nl2sql-html", "r.html"],
            ours, env,
        )
        if o_proc.returncode not in (0, 1) or not (ours / "r.json").is_file():
            print(o_proc.stdout[-3000:], o_proc.stderr[-3000:])
            raise SystemExit(f"pytest failed ({o_proc.returncode})")
        tail = [ln for ln in o_proc.stdout.splitlines() if " passed" in ln or " failed" in ln][-1:]
        print(f"{items:,} items, -n {args.workers}: {' '.join(tail)}")
        print(f"{'time per item':<44} ours {o_time / items * 1e3:6.2f} ms, plain pytest {b_time / items * 1e3:6.2f} ms  ({o_time / b_time:.2f}x)")
        print(f"{'controller peak RSS':<44} ours {mb(o_ctl):>10}, plain pytest {mb(b_ctl):>10}  ({o_ctl / b_ctl:.2f}x)")
        print(f"{'largest worker peak RSS':<44} ours {mb(o_wrk):>10}, plain pytest {mb(b_wrk):>10}  ({o_wrk / max(b_wrk, 1):.2f}x)")
        per_item = o_ctl / items
        print(f"{'controller peak RSS per item':<44} {per_item / 1e3:6.2f} KB (target <= 8 KB)  {'PASS' if per_item <= 8000 else 'FAIL'}")
        print(f"{'  of which above plain pytest per item':<44} {(o_ctl - b_ctl) / items / 1e3:6.2f} KB")
        print(f"{'largest worker above plain pytest per item':<44} {(o_wrk - b_wrk) / items / 1e3:6.2f} KB")
        size_json, size_html = (ours / "r.json").stat().st_size, (ours / "r.html").stat().st_size
        print(f"{'report sizes':<44} JSON {mb(size_json)}, HTML {mb(size_html)}")

        cli = [sys.executable, "-m", "pytest_nl2sql", "report"]
        m_time, m_rss, _, m_proc = measure([*cli, "merge", "r.json", "-o", "merged.json"], ours, env)
        c_time, c_rss, _, c_proc = measure([*cli, "compare", "r.json", "merged.json"], ours, env)
        for name, proc in (("merge", m_proc), ("compare", c_proc)):
            if proc.returncode not in (0, 1):
                print(f"report {name} exited {proc.returncode}: {proc.stderr[-1000:]}")
        print(f"{'report merge of the report: peak RSS':<44} {mb(m_rss):>10} ({m_rss / size_json:.2f}x the JSON size), {m_time:.1f} s")
        print(f"{'report compare of two reports: peak RSS':<44} {mb(c_rss):>10} ({c_rss / size_json:.2f}x the JSON size), {c_time:.1f} s")
        if args.trace and (root / "trace.txt").is_file():
            print("-- controller tracemalloc at the end of the run --")
            print((root / "trace.txt").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
