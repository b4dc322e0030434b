"""MiniLMEmbedder computes all-MiniLM-L6-v2's sentence embeddings, as sentence-transformers does."""

from __future__ import annotations

import numpy as np

from pytest_nl2sql.demo.catalog import DEMO_DATASOURCES
from pytest_nl2sql.engine.rerank import MiniLMEmbedder, embedding_reranker

from .conftest import NEEDS_MODEL

pytestmark = NEEDS_MODEL

# Published all-MiniLM-L6-v2 embeddings (sentence-transformers, mean pooling, normalised): the
# first six of 384 values. The first row's leading values (0.0676569, 0.063...) are also those of
# Spark NLP's all-MiniLM-L6-v2 example output; all four rows are the expected prefixes of a public
# R package's integration test that checks its ONNX port against SentenceTransformers to 1e-6.
REFERENCE = {
    "This is an example sentence": [
        0.06765693, 0.06349593, 0.04871314, 0.07930495, 0.03744806, 0.00265273,
    ],
    "Each sentence is converted.": [
        0.07853645, 0.08856265, -0.00209270, -0.00717247, -0.01252624, 0.01881747,
    ],
    "": [-0.11883835, 0.04829856, -0.00254805, -0.01101118, 0.05195070, 0.01029179],
    "Café déjà vu — 東京": [
        0.05083271, 0.00967685, 0.09635572, -0.00997369, -0.01987603, 0.01692343,
    ],
}  # fmt: skip


def test_embeddings_match_published_reference_values(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(list(REFERENCE))
    for text, vector in zip(REFERENCE, vectors, strict=True):
        np.testing.assert_allclose(vector[:6], REFERENCE[text], atol=2e-5, err_msg=repr(text))


def test_embeddings_are_unit_length_384_floats(embedder: MiniLMEmbedder) -> None:
    texts = ["Which support tickets are still open?", "x", "word " * 400]  # the last is truncated
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)


def test_embeddings_are_deterministic_and_the_same_alone_or_in_a_padded_batch() -> None:
    fresh = MiniLMEmbedder(cache_size=0, batch_size=4)  # no cache: every call computes
    text = "How many tickets did each agent resolve?"
    alone = fresh.embed([text])[0]
    again = fresh.embed([text])[0]
    batch = fresh.embed(
        [
            "A much longer sentence that pads the short one with many positions of padding "
            "when they share a batch, so attention must ignore them.",
            text,
            "Short.",
            *[f"filler sentence number {i} for a second batch" for i in range(5)],
        ]
    )
    np.testing.assert_array_equal(alone, again)
    np.testing.assert_allclose(batch[1], alone, atol=1e-5)


def test_a_cached_text_gives_the_same_vector_as_a_computed_one() -> None:
    small = MiniLMEmbedder(cache_size=2)
    texts = ["open tickets", "music genres", "web sessions by device"]
    first = small.embed(texts)  # three texts through a cache of two: one is evicted
    second = small.embed(list(reversed(texts)))[::-1]
    np.testing.assert_allclose(first, second, atol=1e-6)


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


def test_a_support_question_is_closer_to_the_support_desk_than_to_the_music_catalogue(
    embedder: MiniLMEmbedder,
) -> None:
    question, support, chinook = embedder.embed(
        [
            "How many support tickets are still open?",
            DEMO_DATASOURCES["support"].description,
            DEMO_DATASOURCES["chinook"].description,
        ]
    )
    assert _cos(question, support) > _cos(question, chinook) + 0.05


def test_paraphrases_are_closer_than_unrelated_sentences(embedder: MiniLMEmbedder) -> None:
    a, b, unrelated = embedder.embed(
        [
            "Which customers spent the most money?",
            "Who are our biggest spenders among the clients?",
            "How long is the average rock track?",
        ]
    )
    assert _cos(a, b) > 0.5
    assert _cos(a, b) > _cos(a, unrelated) + 0.2


def test_the_reranker_scores_each_text_by_cosine_similarity(embedder: MiniLMEmbedder) -> None:
    rerank = embedding_reranker(embedder)
    texts = [DEMO_DATASOURCES[name].description for name in ("chinook", "support", "webanalytics")]
    scores = rerank("Which marketing campaign brought the most website sessions?", texts)
    assert len(scores) == 3 and all(isinstance(score, float) for score in scores)
    assert all(-1.0 <= score <= 1.0 for score in scores)
    assert max(range(3), key=scores.__getitem__) == 2  # webanalytics
    assert rerank("x", []) == []
