"""`routing.reranker: minilm` in nl2sql.yaml turns the re-ranker on in the reference engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_nl2sql.config import ConfigError, load_config
from pytest_nl2sql.engine.reference import ReferenceEngine
from pytest_nl2sql.suitefile.loader import load_suite
from pytest_nl2sql.upkeep.init import init_demo

from .conftest import NEEDS_MODEL

ROUTING = "routing: {candidates: 3, max_datasources: 2}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rerank-demo")
    init_demo(root)
    return root


def _config_with(demo: Path, routing: str, tmp_path: Path) -> Path:
    text = (demo / "nl2sql.yaml").read_text().replace(ROUTING, routing)
    assert routing in text
    path = demo / f"nl2sql-{tmp_path.name}.yaml"
    path.write_text(text)
    return path


def test_an_unknown_reranker_is_a_config_error_with_its_line(demo: Path, tmp_path: Path) -> None:
    path = _config_with(demo, "routing: {candidates: 3, max_datasources: 2, reranker: bert}", tmp_path)
    with pytest.raises(ConfigError, match=r"routing.reranker: unknown re-ranker 'bert' \(use one of: none, minilm\)"):
        load_config(path)


def test_without_the_setting_routing_is_bm25_only(demo: Path) -> None:
    config = load_config(demo / "nl2sql.yaml")
    assert config.routing.reranker is None
    assert ReferenceEngine(config).router.route("Which tickets are open?").top == "support"


@NEEDS_MODEL
def test_minilm_reranker_routes_the_routing_suite_at_least_as_well(demo: Path, tmp_path: Path) -> None:
    plain = ReferenceEngine(load_config(demo / "nl2sql.yaml"))
    reranked = ReferenceEngine(load_config(_config_with(demo, "routing: {candidates: 3, max_datasources: 2, reranker: minilm}", tmp_path)))
    suite = load_suite(demo / "evals" / "routing.yaml")

    def right(engine: ReferenceEngine) -> int:
        hits = 0
        for case in suite.cases:
            r = engine.route(case.question, "admin")
            hits += r.top in case.datasources and set(case.datasources) <= set(r.shortlist)
        return hits

    a, b = right(plain), right(reranked)
    print(f"routing suite: BM25 {a}/{len(suite)}, with the MiniLM re-ranker {b}/{len(suite)}")
    assert b >= a
