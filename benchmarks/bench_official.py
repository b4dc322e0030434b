"""The plugin against the official Spider evaluator and against pytest's own floor, in one go.

    python benchmarks/bench_official.py [--out DIR] [--repeat 3] [--plugins installed|only|both]

On Spider dev (the 972 questions whose database is in ../shared/data/spider) with C3SQL's
predictions, each measured as a fresh subprocess on this machine, interleaved ``--repeat``
times (the median is kept):

* ``official``: test-suite-sql-eval's ``eval_exec_match`` (vendored, benchmarks/spider/
  test_suite_sql_eval) on every (prediction, gold) pair, one pass, as its evaluation.py calls it
  (``plug_value`` off, ``keep_distinct`` off);
* ``sqlite3``: each prediction and gold executed once with ``sqlite3``, nothing compared (the
  physical floor);
* ``pytest floor``: pytest with 972 trivial parametrized tests, ``-p no:nl2sql``, serial and
  ``-n 2``;
* ``plugin``: ``pytest --nl2sql-suite spider_dev.yaml --nl2sql-predictions c3sql.jsonl``, serial
  and ``-n 2``, each three times: **cold** (an empty cache folder, ``NL2SQL_CACHE_DIR``: the
  suite is read from its YAML and every guard and validator verdict is computed), **suite
  cached** (the folder holds the suite cache entry only: every verdict is computed; what this
  script called "plugin" before verdicts were remembered across runs) and **warm** (the folder
  a previous run filled: the suite cache and the remembered verdicts, datasources.memo.STORE).
  A cold figure is never a warm one: each line says which it is. One more serial cold run with
  ``--nl2sql-second-core off`` (pytest's process checks every prediction itself) shows what the
  second core gives (the default, ``auto``: a forked helper checks them ahead of the items).

Every pytest run is measured twice over (``--plugins both``, the default): with **installed**
plugins, every pytest plugin this environment installs loads, as it would in a developer's
virtualenv (the project's test extra brings Hypothesis, pytest-postgresql, allure, testmon,
rerunfailures, timeout: about 0.5 s of imports per process, paid by the floors and the plugin
alike); with **only**, pytest loads xdist and pytest-nl2sql alone (``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``
and ``-p``), as in an environment made for the job. The official evaluator pays neither.

Prints each time (wall and CPU: user + system of the process and its children, which other
processes on a loaded machine disturb far less) and, for cold, suite-cached and warm runs, the line
``plugin/official serial X.XXx; plugin/pytest-floor serial X.XXx, -n 2 X.XXx`` (wall), then the
same ratios on CPU time; with the machine's load before and after, Python's, sqlglot's and the
package's versions (and whether sqlglot is the compiled ``sqlglotc`` build). Goals: serial <= 1.0x official, ``-n 2`` <= 1.2x the xdist floor.
Python may write bytecode in these runs (``PYTHONDONTWRITEBYTECODE`` is dropped), as on a
developer's machine. Exits 0 with a message when the shared data or sqlparse is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

TRIVIAL = """
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_item(i):
    assert i >= 0
"""

OFFICIAL = """
import json, sys
sys.path.insert(0, {root!r})
from benchmarks.spider.test_suite_sql_eval.exec_eval import eval_exec_match
pairs = json.load(open({pairs!r}))
right = sum(eval_exec_match(db, pred, gold, False, False, False) for db, gold, pred in pairs)
print(right, len(pairs))
"""

RAW = """
import json, sqlite3
pairs = json.load(open({pairs!r}))
for db, gold, pred in pairs:
    con = sqlite3.connect(db)
    for sql in (gold, pred):
        try:
            con.execute(sql).fetchall()
        except Exception:
            pass
    con.close()
"""


def measure(
    cmd: list[str], cwd: Path, cache: Path | None = None, env: dict[str, str] | None = None
) -> tuple[float, float, str]:
    """(wall s, CPU s, stdout) of one subprocess and everything it waited for; ``cache`` is the
    cache folder it uses (default: the warm one, ``cwd/.nl2sql-cache``); ``env`` is added to this
    process's environment."""
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, **(env or {})}
    env["NL2SQL_CACHE_DIR"] = str(cache or cwd / ".nl2sql-cache")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=None, help="where the converted suite goes (default: a temporary folder)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--plugins", choices=("installed", "only", "both"), default="both",
        help="which pytest plugins the pytest runs load: every one this environment installs, only "
        "xdist and pytest-nl2sql, or both sets one after the other (default)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    try:
        import sqlparse  # noqa: F401  (the official code's parse.py needs it)
    except ImportError:
        print("skipped: the official evaluator needs sqlparse: pip install -e '.[bench]'")
        return 0
    from benchmarks.spider.convert import convert, db_path, default_spider_dir, write_predictions

    spider = default_spider_dir()
    if not (spider / "dev.json").is_file():
        print(f"skipped: the Spider data is not at {spider} (set NL2SQL_SPIDER_DIR)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = (args.out or Path(tmp) / "spider").resolve()
        out.mkdir(parents=True, exist_ok=True)
        conv = convert(spider, out)
        predicted = (spider / "predictions" / "C3SQL" / "predicted_sql.txt").read_text(encoding="utf-8").splitlines()
        write_predictions(conv.items, predicted, out / "c3sql.jsonl")
        pairs = [(str(db_path(spider, it.db_id)), it.gold, predicted[it.index].strip()) for it in conv.items]
        (out / "pairs.json").write_text(json.dumps(pairs))
        n = len(pairs)
        (out / "test_trivial.py").write_text(TRIVIAL.format(n=n))
        (out / "pytest.ini").write_text("[pytest]\n")
        py = [sys.executable]
        choices = ("installed", "only") if args.plugins == "both" else (args.plugins,)
        for which in choices:
            _run_set(which, py, out, n, args.repeat)
    return 0


#: ``--plugins only``: pytest with xdist and this plugin alone, as in an environment made for the job.
ONLY = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def _run_set(which: str, py: list[str], out: Path, n: int, repeat: int) -> None:
    """Measure every run with one set of pytest plugins and print its table (module doc)."""
    only = which == "only"
    pytest_cmd = [*py, "-m", "pytest", "-q", "--no-header", "-rN", "-p", "no:cacheprovider"]
    if only:
        pytest_cmd += ["-p", "xdist.plugin"]
    plugin = [*pytest_cmd, *(["-p", "pytest_nl2sql.plugin"] if only else []), "--nl2sql-suite", "spider_dev.yaml",
              "--nl2sql-config", "nl2sql.yaml", "--nl2sql-predictions", "c3sql.jsonl"]  # fmt: skip
    env = ONLY if only else {}
    runs = {
        "official eval_exec_match": [*py, "-c", OFFICIAL.format(root=str(ROOT), pairs=str(out / "pairs.json"))],
        "sqlite3, each query once": [*py, "-c", RAW.format(pairs=str(out / "pairs.json"))],
        "pytest floor, serial": [*pytest_cmd, "test_trivial.py", "-p", "no:nl2sql", "-n", "0"],
        "pytest floor, -n 2": [*pytest_cmd, "test_trivial.py", "-p", "no:nl2sql", "-n", "2"],
        "plugin, serial, cold": [*plugin, "-n", "0"],
        "plugin, serial, suite cached": [*plugin, "-n", "0"],
        "plugin, serial, warm": [*plugin, "-n", "0"],
        "plugin, serial, one core, cold": [*plugin, "-n", "0", "--nl2sql-second-core", "off"],
        "plugin, -n 2, cold": [*plugin, "-n", "2"],
        "plugin, -n 2, suite cached": [*plugin, "-n", "2"],
        "plugin, -n 2, warm": [*plugin, "-n", "2"],
    }
    load_before = os.getloadavg()
    for cmd in runs.values():  # warm: bytecode, the suite cache and the verdicts of the warm folder
        measure(cmd, out, env=env)
    walls: dict[str, list[float]] = {k: [] for k in runs}
    cpus: dict[str, list[float]] = {k: [] for k in runs}
    official_right = ""
    plugin_lines: set[str] = set()
    cold = out / ".nl2sql-cache-cold"
    for _ in range(repeat):
        for name, cmd in runs.items():
            cache = None
            if name.endswith("cold"):
                shutil.rmtree(cold, ignore_errors=True)  # an empty cache folder: nothing remembered
                cache = cold
            elif name.endswith("suite cached"):  # the suite cache only, no remembered verdict
                shutil.rmtree(cold, ignore_errors=True)
                shutil.copytree(out / ".nl2sql-cache", cold, ignore=shutil.ignore_patterns("verdicts-*"))
                cache = cold
            wall, cpu, stdout = measure(cmd, out, cache, env=env)
            walls[name].append(wall)
            cpus[name].append(cpu)
            if name.startswith("official"):
                official_right = stdout.strip()
            if name.startswith("plugin"):
                plugin_lines.add(_summary(stdout))
    load = os.getloadavg()
    wall = {k: statistics.median(v) for k, v in walls.items()}
    cpu = {k: statistics.median(v) for k, v in cpus.items()}
    print(f"{n} Spider dev pairs (C3SQL); median of {repeat} interleaved runs; {_versions()}")
    print(f"pytest plugins: {_plugins(only)}")
    print(f"load average before {load_before[0]:.1f} {load_before[1]:.1f} {load_before[2]:.1f}, "
          f"after {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} CPUs")
    print(f"  official: {official_right.split()[0] if official_right else '?'} of {n} pairs match; "
          f"plugin: {' | '.join(sorted(plugin_lines))}")
    for name in runs:
        print(f"  {name:<28} wall {wall[name]:6.2f}s   CPU {cpu[name]:6.2f}s")
    for temp in ("cold", "suite cached", "warm"):
        for label, t in (("wall", wall), ("CPU", cpu)):
            serial, xdist = t[f"plugin, serial, {temp}"], t[f"plugin, -n 2, {temp}"]
            print(f"{which}, {temp} {label}: plugin/official serial {serial / t['official eval_exec_match']:.2f}x; "
                  f"plugin/pytest-floor serial {serial / t['pytest floor, serial']:.2f}x, "
                  f"-n 2 {xdist / t['pytest floor, -n 2']:.2f}x  (goals: <= 1.00x official; -n 2 <= 1.20x)")
    one, two = wall["plugin, serial, one core, cold"], wall["plugin, serial, cold"]
    print(f"{which}, the second core (--nl2sql-second-core auto against off), serial cold wall: "
          f"{one:.2f}s -> {two:.2f}s ({two / one:.2f}x)")


def _summary(stdout: str) -> str:
    """The plugin run's pytest summary line ("189 failed, 783 passed"), without its time."""
    lines = [line for line in stdout.splitlines() if " passed" in line or " failed" in line]
    return lines[-1].split(" in ")[0].strip("= ") if lines else "?"


def _plugins(only: bool) -> str:
    """The pytest plugins a run loads besides pytest's own (the entry points of group pytest11)."""
    import importlib.metadata as md

    if only:
        return "xdist, nl2sql only (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1, -p xdist.plugin -p pytest_nl2sql.plugin)"
    names = sorted({f"{ep.dist.name if ep.dist else '?'}" for ep in md.entry_points(group="pytest11")})
    return f"every installed one ({', '.join(names)})"


def _versions() -> str:
    import importlib.metadata as md

    def version(name: str) -> str:
        try:
            return md.version(name)
        except md.PackageNotFoundError:
            return "-"

    return (f"Python {sys.version.split()[0]}, sqlglot {version('sqlglot')} (sqlglotc {version('sqlglotc')}), "
            f"pytest-nl2sql {version('pytest-nl2sql')}, pytest-xdist {version('pytest-xdist')}")


if __name__ == "__main__":
    raise SystemExit(main())
