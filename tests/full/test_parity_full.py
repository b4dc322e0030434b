"""Issue 30's figures in mode full, against the real local OpenAI-compatible test server:
answerability, per-source accuracy (a verified question asks no model), the answer text's
faithfulness, and the engine's steps with the tokens and cost the server reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.full.conftest import FULL

VERIFIED = """\
- id: customers_by_country
  datasource: chinook
  questions: ["How many customers do we have, by country?"]
  sql: SELECT Country, COUNT(CustomerId) AS customer_count FROM Customer GROUP BY Country
"""


def test_mode_full_reports_answerability_sources_faithfulness_and_steps(pytester: pytest.Pytester, project: Path, serve) -> None:
    (project / "nl2sql.yaml").write_text((project / "nl2sql.yaml").read_text() + VERIFIED)  # after the demo's verified: list
    _, plans = serve(prompt_tokens=1000, completion_tokens=10)
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-out", "r.json", "--nl2sql-html", "r.html")
    data = json.loads((project / "r.json").read_text())
    s = data["summary"]
    assert result.ret == 0, result.stdout.str()
    # mini_001 (admin, analyst, viewer) is answered by the curated query: 3 fewer model calls
    assert plans.calls == s["llm_calls"] == 5
    assert s["by_source"]["verified"]["total"] == 2 and s["by_source"]["generated"]["total"] == 2
    assert s["answerability"]["recall"]["passed"] == s["answerability"]["recall"]["total"] == 2
    assert s["faithfulness"]["passed"] == s["faithfulness"]["total"] == 4
    planner = s["steps"]["planner"]
    assert (planner["runs"], planner["input_tokens"], planner["output_tokens"]) == (5, 5000, 50)
    assert planner["cost_usd"] == pytest.approx(0.05) and planner["latency_p95_s"] > 0
    assert s["steps"]["verified_query"]["runs"] == 3
    result.stdout.fnmatch_lines(["*answerability*precision 100.0% (2/2*", "*verified *100.0%  (2/2*", "*planner *5 *5000 *50 *0.050000*"])
    page = (project / "r.html").read_text()
    assert all(f'id="{x}"' in page for x in ("answerability", "answers", "steps", "provenance"))


LLMS = """\
llms:
  good: {model: good-model}
  poor: {model: poor-model, price_input_per_1k: 0.02}
"""


def test_several_llm_configs_in_one_run(pytester: pytest.Pytester, project: Path, serve) -> None:
    from tests.full.conftest import WRONG_PLAN, question_of

    (project / "nl2sql.yaml").write_text((project / "nl2sql.yaml").read_text().replace("feedback: {store: feedback.sqlite}", LLMS + "feedback: {store: feedback.sqlite}"))
    server, plans = serve(prompt_tokens=1000, completion_tokens=0)
    answer = server.plan_producer

    def poor_on_tracks(request: dict) -> dict:  # the poor model gets the tracks question (mini_002) wrong
        plan = answer(request)
        return WRONG_PLAN if request.get("model") == "poor-model" and question_of(request).startswith("How many tracks") else plan

    server.plan_producer = poor_on_tracks
    args = (*FULL, "--nl2sql-llm", "good", "--nl2sql-llm", "poor", "--nl2sql-cache")
    result = pytester.runpytest_subprocess(*args, "--nl2sql-out", "r.json", "--nl2sql-html", "r.html")
    data = json.loads((project / "r.json").read_text())
    ids = {r["nodeid"] for r in data["items"]}
    assert {"evals/mini.yaml::mini_002[admin-good]", "evals/mini.yaml::mini_002[admin-poor]"} <= ids and len(ids) == 16
    assert plans.calls == 16  # each config asks every item once
    board, pairs = data["summary"]["by_llm"], data["summary"]["llm_pairs"]
    assert board["good"]["accuracy"]["passed"] == 8 and board["poor"]["accuracy"]["passed"] == 6
    assert board["good"]["cost_usd"] == pytest.approx(0.08) and board["poor"]["cost_usd"] == pytest.approx(0.16)
    assert board["poor"]["cost_per_passed_usd"] == pytest.approx(0.16 / 6, abs=1e-6) and board["good"]["latency_p95_s"] > 0
    assert pairs == [{"a": "good", "b": "poor", "shared": 8, "a_only": 2, "b_only": 0, "mcnemar_p": 0.5}]
    result.stdout.fnmatch_lines(["*per LLM config (--nl2sql-llm)*", "  good *100.0% (8/8*", "  poor *75.0% (6/8*",
                                 "  good vs poor: 2 passed only with good, 0 only with poor (of 8); exact McNemar p = 0.5"])
    page = (project / "r.html").read_text()
    assert 'id="llm-board"' in page and 'id="llm-pairs"' in page

    # -k NAME selects one config; each config has its own response cache folder
    again = pytester.runpytest_subprocess(*args, "-k", "poor", "--nl2sql-out", "poor.json")
    assert plans.calls == 16  # all answered from poor's cache
    assert {r["llm_config"] for r in json.loads((project / "poor.json").read_text())["items"]} == {"poor"}
    assert again.ret == pytest.ExitCode.TESTS_FAILED
    assert sorted(p.name for p in (project / ".nl2sql-cache" / "llm").iterdir() if p.is_dir()) == ["good", "poor"]

    # --nl2sql-max-cost: each config gets an equal share (and the total holds)
    capped = pytester.runpytest_subprocess(*FULL, "--nl2sql-llm", "good", "--nl2sql-llm", "poor", "--nl2sql-max-cost", "0.05",
                                           "--nl2sql-concurrency", "1", "-k", "poor", "--nl2sql-out", "cap.json")
    capped_data = json.loads((project / "cap.json").read_text())
    reasons = {r["skipped"] for r in capped_data["items"] if r.get("skipped")}
    assert reasons == {"cost cap reached for --nl2sql-llm poor (its share $0.0250)"}  # $0.02 a call: 2 calls, then its share is gone
    assert capped_data["summary"]["by_llm"]["poor"]["cost_usd"] == pytest.approx(0.04) and capped.ret == pytest.ExitCode.OK

    unknown = pytester.runpytest_subprocess(*FULL, "--nl2sql-llm", "huge")
    unknown.stderr.fnmatch_lines(["ERROR: --nl2sql-llm huge: *nl2sql.yaml has no llms.huge (known: good, poor; docs/config.md)"])


def test_the_baseline_keys_failures_by_llm_config(pytester: pytest.Pytester, project: Path, serve) -> None:
    """A known failure of one --nl2sql-llm config excuses neither another config nor a run without one."""
    from pytest_nl2sql.cli import main
    from tests.full.conftest import WRONG_PLAN, question_of

    (project / "nl2sql.yaml").write_text((project / "nl2sql.yaml").read_text().replace("feedback: {store: feedback.sqlite}", LLMS + "feedback: {store: feedback.sqlite}"))
    server, _ = serve(prompt_tokens=10, completion_tokens=0)
    answer, wrong = server.plan_producer, {"poor-model"}

    def tracks_wrong(request: dict) -> dict:  # the configs in `wrong` answer the tracks question (mini_002) wrong
        plan = answer(request)
        return WRONG_PLAN if request.get("model") in wrong and question_of(request).startswith("How many tracks") else plan

    server.plan_producer = tracks_wrong
    both = (*FULL, "--nl2sql-llm", "good", "--nl2sql-llm", "poor")
    recorded = pytester.runpytest_subprocess(*both, "--nl2sql-update-baseline")
    assert "+ mini.yaml::mini_002[admin-poor] full result_match: " in recorded.stdout.str() + recorded.stderr.str()
    baseline = json.loads((project / "evals" / "mini.baseline.json").read_text())
    assert baseline["failures"] and {f.get("llm") for f in baseline["failures"]} == {"poor"}
    assert all(f["case"] == "mini_002" for f in baseline["failures"])

    # the same items fail again under poor: known; now good fails them too: new failures, not excused
    wrong.add("good-model")
    gated = pytester.runpytest_subprocess(*both, "--nl2sql-out", "r.json")
    assert gated.ret == pytest.ExitCode.TESTS_FAILED
    items = {r["nodeid"]: r["verdict"] for r in json.loads((project / "r.json").read_text())["items"] if "mini_002" in r["nodeid"]}
    assert {v for n, v in items.items() if n.endswith("-poor]")} == {"xfailed"}
    assert {v for n, v in items.items() if n.endswith("-good]")} == {"failed"}
    gated.stdout.fnmatch_lines(["*FAILED evals/mini.yaml::mini_002*-good]*"])
    assert "-poor] " not in "\n".join(line for line in gated.stdout.lines if line.startswith("FAILED"))

    # `report gate` reads the same keys: good's failures are new, poor's are known
    code = main(["report", "gate", str(project / "r.json"), "--baseline", str(project / "evals" / "mini.baseline.json")])
    assert code == 1

    # an item run without a config is not excused by poor's entries either (the baseline says
    # nothing about it: a plain failure)
    wrong.add("gpt-4o-mini")
    plain = pytester.runpytest_subprocess(*FULL, "--nl2sql-out", "plain.json")
    assert plain.ret == pytest.ExitCode.TESTS_FAILED
    plain_items = [r for r in json.loads((project / "plain.json").read_text())["items"] if r["case_id"] == "mini_002"]
    assert plain_items and {r["verdict"] for r in plain_items} == {"failed"} and not any(r.get("baseline") for r in plain_items)


def test_estimate_prices_each_llm_config_at_its_own_prices(pytester: pytest.Pytester, project: Path, serve) -> None:
    import re

    (project / "nl2sql.yaml").write_text((project / "nl2sql.yaml").read_text().replace("feedback: {store: feedback.sqlite}", LLMS + "feedback: {store: feedback.sqlite}"))
    _, plans = serve()
    result = pytester.runpytest_subprocess(*FULL, "--nl2sql-llm", "good", "--nl2sql-llm", "poor", "--nl2sql-estimate")
    assert result.ret == 0 and plans.calls == 0
    result.stdout.fnmatch_lines([
        "16 items x 1 attempt = 16 LLM calls: 0 answered from the cache, 16 to ask; ~$* in all, each --nl2sql-llm config at its own prices:",
        " good: 8 LLM calls: 0 answered from the cache, 8 to ask (model good-model at *)",
        "    ~* input tokens, ~1,200 output tokens (150 a call, a guess: no cached answer to go by)",
        "    ~$* at $0.01 / $0 per 1k tokens in / out",
        " poor: 8 LLM calls: 0 answered from the cache, 8 to ask (model poor-model at *)",
        "    ~* input tokens, ~1,200 output tokens (150 a call, a guess: no cached answer to go by)",
        "    ~$* at $0.02 / $0 per 1k tokens in / out",
    ])
    total, good, poor = (float(x) for x in re.findall(r"~\$([0-9.]+)", result.stdout.str()))
    assert poor == pytest.approx(2 * good, rel=0.01) and total == pytest.approx(good + poor, abs=1e-4) and good > 0
