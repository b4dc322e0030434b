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
