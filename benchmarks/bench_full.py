"""Mode full at scale: concurrency, xdist and the response cache, as ratios of one run.

    python benchmarks/bench_full.py [--delay 0.25]

A local OpenAI-compatible server (tests/llm/openai_server.py) answers every request of the
demo's Chinook suite (183 items) with that case's reviewed plan after a fixed delay. Measured,
each as a fresh ``python -m pytest`` subprocess in a demo project (wall times include start-up):

1. mode plans (the same suite, no LLM): the run's cost without a model, ``T_plans``;
2. mode full at ``--nl2sql-concurrency`` 1, 4, 16 and 32, and with ``-n 2`` (concurrency 1,
   then 16): concurrency 16 at least 10x faster than 1, and within 1.3x of the ideal
   ``items x delay / 16 + T_plans`` (the ideal itself is under 10x faster than concurrency 1
   when ``T_plans`` is a few seconds, so the 10x is also shown on the time beyond ``T_plans``);
3. a cached rerun (``--nl2sql-cache``, filled by a first run): 0 calls, and at most
   ``T_plans x 1.2``;
4. peak memory (max RSS) of the run at concurrency 32, against the run at concurrency 1.

Every run must give the same verdicts. Prints each number with its target and PASS/FAIL;
always exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pytest_nl2sql.suitefile.loader import load_suite  # noqa: E402
from pytest_nl2sql.upkeep.init import init_demo  # noqa: E402
from tests.llm.openai_server import OpenAITestServer  # noqa: E402


class Plans:
    """Answer each question with its case's plan, after ``delay`` seconds."""

    def __init__(self, suite: Path, delay: float) -> None:
        self.delay = delay
        self.calls = 0
        self._lock = threading.Lock()
        self.by_question = {c.question.strip(): c.plan for c in load_suite(suite).cases if c.plan}

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.calls += 1
        time.sleep(self.delay)
        question = request["messages"][-1]["content"].rsplit("Question:", 1)[-1].strip()
        plan = self.by_question.get(question)
        return plan if plan is not None else {"kind": "not_answerable", "reason": "no plan"}


def run(cwd: Path, *args: str) -> tuple[float, int, dict[str, Any]]:
    """Wall time, peak RSS (KiB) and the JSON report of one pytest run."""
    out = cwd / "r.json"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--nl2sql-suite", "evals/chinook.yaml",
           "--nl2sql-out", str(out), *args]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ))
    output = proc.stdout.read() if proc.stdout is not None else b""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):
        print(output.decode()[-3000:])
        raise SystemExit(f"pytest failed ({proc.returncode}): {' '.join(args)}")
    return elapsed, usage.ru_maxrss, json.loads(out.read_text())


def verdicts(report: dict[str, Any]) -> list[tuple[str, str]]:
    return [(i["nodeid"], i["verdict"]) for i in report["items"]]


def check(label: str, value: str, ok: bool, target: str) -> None:
    print(f"{label:<44} {value:>16}   target {target:<26} {'PASS' if ok else 'FAIL'}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--delay", type=float, default=0.25)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        demo = Path(tmp) / "demo"
        init_demo(demo)
        plans = Plans(demo / "evals" / "chinook.yaml", args.delay)
        with OpenAITestServer(plans, prompt_tokens=1000, completion_tokens=100) as server:
            cfg = demo / "nl2sql.yaml"
            cfg.write_text(cfg.read_text().replace("base_url: https://api.openai.com/v1", f"base_url: {server.base_url}"))
            os.environ["OPENAI_API_KEY"] = "sk-bench"
            os.environ["NL2SQL_CACHE_DIR"] = str(Path(tmp) / "suite-cache")
            t_plans, _, base = run(demo, "--nl2sql-mode", "plans")
            items = len(base["items"])
            full = ("--nl2sql-mode", "full")
            times: dict[str, float] = {}
            rss: dict[str, int] = {}
            same = True
            for label, extra in (("c1", ["--nl2sql-concurrency", "1"]), ("c4", ["--nl2sql-concurrency", "4"]),
                                 ("c16", ["--nl2sql-concurrency", "16"]), ("c32", ["--nl2sql-concurrency", "32"]),
                                 ("n2c1", ["-n", "2", "--nl2sql-concurrency", "1"]),
                                 ("n2c16", ["-n", "2", "--nl2sql-concurrency", "16"])):
                before = plans.calls
                times[label], rss[label], report = run(demo, *full, *extra)
                same = same and verdicts(report) == verdicts(base) and plans.calls - before == items
                print(f"  mode full {' '.join(extra):<28} {times[label]:7.2f} s  ({plans.calls - before} calls)", flush=True)
            run(demo, *full, "--nl2sql-concurrency", "16", "--nl2sql-cache")  # fills the cache
            before = plans.calls
            t_cached, _, cached = run(demo, *full, "--nl2sql-concurrency", "16", "--nl2sql-cache")
            cached_calls = plans.calls - before
            same = same and verdicts(cached) == verdicts(base)
    ideal = items * args.delay / 16 + t_plans
    print(f"\nChinook suite: {items} items, server delay {args.delay} s; mode plans {t_plans:.2f} s")
    for label in ("c1", "c4", "c16", "c32", "n2c1", "n2c16"):
        print(f"  {label:<6} {times[label]:7.2f} s   {times['c1'] / times[label]:5.1f}x faster than c1   peak RSS {rss[label] / 1024:6.1f} MiB")
    print(f"  cached rerun {t_cached:.2f} s, {cached_calls} calls\n")
    check("concurrency 16 vs 1", f"{times['c1'] / times['c16']:.1f}x", times["c1"] / times["c16"] >= 10, ">= 10x")
    print(f"{'':<4}(the ideal itself is {times['c1'] / ideal:.1f}x faster than c1: the {t_plans:.1f} s of mode plans do not shrink)")
    beyond = (times["c1"] - t_plans) / max(times["c16"] - t_plans, 1e-9)
    check("concurrency 16 vs 1, time beyond mode plans", f"{beyond:.1f}x", beyond >= 10, ">= 10x")
    check("concurrency 16 vs ideal (items x delay/16 + plans)", f"{times['c16'] / ideal:.2f}x", times["c16"] / ideal <= 1.3, "<= 1.3x")
    check("cached rerun: calls", str(cached_calls), cached_calls == 0, "0")
    check("cached rerun vs mode plans", f"{t_cached / t_plans:.2f}x", t_cached / t_plans <= 1.2, "<= 1.2x")
    check("peak RSS, concurrency 32 vs 1", f"{rss['c32'] / rss['c1']:.2f}x", rss["c32"] / rss["c1"] <= 1.5, "<= 1.5x (reported)")
    check("same verdicts in every run", str(same), same, "True")
    return 0


if __name__ == "__main__":
    sys.exit(main())
