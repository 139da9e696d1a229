"""Export a packaged BERT sentence encoder to ONNX, optimise it for ONNX Runtime, quantise it.

:func:`ensure_onnx` builds, once per model files and recipe, the ONNX file the
``onnx-*`` backends run (:mod:`rulegauge.embedding.onnx_runtime`), offline, in
``<cache>/models/onnx/<model>-<backend>-<key[:12]>/model.onnx``. The key
(:func:`build_key`) hashes the SHA-256 of the model's weights and tokenizer, the
backend, :data:`EXPORTER_VERSION` and the torch / onnx / onnxruntime versions, so a
changed model file or recipe builds a new folder and a second use re-exports nothing.

Steps:

1. The sentence-transformers folder's ``BertModel`` is wrapped in :class:`PlainBert`:
   the same weights and arithmetic (embeddings + LayerNorm, 12 post-norm encoder
   layers, exact erf GELU) written in the textbook form whose subgraphs ONNX Runtime's
   BERT fusions recognise, followed by mean pooling over the attention mask (what the
   sentence-transformers ``Pooling`` module does). ``transformers`` 5's own forward
   builds its attention mask through code the fusions do not match (no ``Attention``
   node would be fused). The export uses torch's TorchScript exporter (opset 17;
   torch is pinned), traced on a padded batch so the mask is a real input.
2. ``onnxruntime.transformers.optimizer`` fuses the graph: ``EmbedLayerNormalization``,
   one ``Attention`` per layer, ``SkipLayerNormalization``, ``BiasGelu``.
3. ``onnx-int8`` only: :func:`quantise` (dynamic int8, per-channel weights; see there).

Edge cases: only ``bert`` configurations are exported (others raise); a folder whose
build record is missing is rebuilt; a finished folder is never modified (atomic
rename, :func:`rulegauge.core.atomic.atomic_dir`).

Reference: ONNX Runtime, "Transformer Model Optimization Tool" and "Quantize ONNX
models" (onnxruntime.ai/docs/performance); Devlin et al. 2019 (BERT).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import math
import warnings
from contextlib import suppress
from pathlib import Path
from typing import Any

from rulegauge.core.atomic import TargetExists, atomic_dir
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import RulegaugeError
from rulegauge.embedding import convert

EXPORTER_VERSION = 1
"""Bump when the export, optimisation or quantisation recipe changes (new cache folder)."""

BUILD_RECORD = "rulegauge-onnx.json"
MODEL_FILE = "model.onnx"
OPSET = 17
INT8_NODES_KEPT_FLOAT: tuple[str, ...] = ()
"""Weight MatMuls of the optimised graph left in float32 by :func:`quantise` (by name)."""


def build_key(provenance: dict[str, Any], backend: str) -> str:
    """SHA-256 of what the ONNX file is built from: model weights and tokenizer hashes,
    the backend, :data:`EXPORTER_VERSION` and the exporting libraries' versions."""
    version = importlib.metadata.version
    ident = json.dumps({"weights": provenance["weights_sha256"],
                        "tokenizer": provenance["tokenizer_sha256"], "backend": backend,
                        "exporter": EXPORTER_VERSION, "torch": version("torch"),
                        "onnx": version("onnx"), "onnxruntime": version("onnxruntime")},
                       sort_keys=True)
    return hashlib.sha256(ident.encode()).hexdigest()


def onnx_folder(cache: Path, name: str, backend: str, provenance: dict[str, Any]) -> Path:
    """Where :func:`ensure_onnx` keeps model ``name``'s ONNX file for ``backend``."""
    return Path(cache) / "models" / "onnx" / f"{name}-{backend}-{build_key(provenance, backend)[:12]}"


def ensure_onnx(source: Path, target: Path, backend: str, provenance: dict[str, Any],
                base: Path | None = None) -> dict[str, Any]:
    """The build record of ``target`` (a folder from :func:`onnx_folder`), exporting the
    sentence-transformers folder ``source`` first if ``target`` is not built yet.

    ``backend``: ``onnx-fp32`` (optimised float32 graph) or ``onnx-int8`` (quantised
    from ``base``, the ``onnx-fp32`` file, when given; else exported afresh). The record
    holds the key, the recipe, the versions and the file's SHA-256.
    """
    target = Path(target)
    if not (target / BUILD_RECORD).exists():
        with suppress(TargetExists), atomic_dir(target) as tmp:  # kept if another process finished first
            recipe = build(Path(source), tmp / MODEL_FILE, backend, base)
            record = {"build_key": build_key(provenance, backend), "backend": backend,
                      "exporter_version": EXPORTER_VERSION, "source_folder": str(source),
                      "weights_sha256": provenance["weights_sha256"],
                      "tokenizer_sha256": provenance["tokenizer_sha256"], **recipe,
                      "file_sha256": file_sha256(tmp / MODEL_FILE)}
            (tmp / BUILD_RECORD).write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")
    return read_record(target)


def read_record(target: Path) -> dict[str, Any]:
    """The build record of the ONNX folder ``target`` (raises naming the file)."""
    return convert.read_record(target, BUILD_RECORD)


def build(source: Path, out: Path, backend: str, base: Path | None = None) -> dict[str, Any]:
    """Export ``source`` to ``out`` for ``backend`` (int8: quantise ``base`` if given);
    returns the recipe for the record."""
    if backend not in ("onnx-fp32", "onnx-int8"):
        raise RulegaugeError(f"no ONNX recipe for backend {backend!r}")
    import tempfile

    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "bert":
        raise RulegaugeError(f"{source}: model_type {config.get('model_type')!r}; only bert is exported to ONNX")
    heads, hidden = int(config["num_attention_heads"]), int(config["hidden_size"])
    with tempfile.TemporaryDirectory(prefix="rulegauge-onnx-", dir=out.parent) as tmp:
        raw, fused = Path(tmp) / "raw.onnx", Path(tmp) / "fused.onnx"
        fusions: dict[str, Any]
        if base is not None and backend == "onnx-int8":
            fused = Path(base)
            fusions = {"from": str(base)}
        else:
            export(source, raw)
            fusions = dict(optimise(raw, fused, heads, hidden))
        recipe: dict[str, Any] = {"opset": OPSET, "fusions": fusions}
        if backend == "onnx-int8":
            recipe["quantisation"] = quantise(fused, out)
        else:
            fused.replace(out)
    version = importlib.metadata.version
    return {**recipe, "torch": version("torch"), "onnx": version("onnx"),
            "onnxruntime": version("onnxruntime")}


def plain_bert(hf: Any) -> Any:
    """:class:`PlainBert` around a loaded ``transformers`` ``BertModel``."""
    import torch

    class PlainBert(torch.nn.Module):
        """BERT encoder + mask-weighted mean pooling, in the form ORT's fusions match."""

        def __init__(self, model: Any) -> None:
            super().__init__()
            cfg = model.config
            self.heads = int(cfg.num_attention_heads)
            self.head_dim = int(cfg.hidden_size) // self.heads
            self.embeddings = model.embeddings
            self.layers = model.encoder.layer

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            e = self.embeddings
            batch, seq = input_ids.shape[0], input_ids.shape[1]
            positions = torch.arange(seq, dtype=torch.long).unsqueeze(0)  # e5 / BERT: from 0
            x = e.LayerNorm(e.word_embeddings(input_ids) + e.position_embeddings(positions)
                            + e.token_type_embeddings(torch.zeros_like(input_ids)))
            # the additive mask of BERT's reference code; exp(-10000) is 0 in float32
            bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
            scale = math.sqrt(self.head_dim)
            for layer in self.layers:
                att = layer.attention

                def split(t: Any) -> Any:
                    return t.view(batch, seq, self.heads, self.head_dim).permute(0, 2, 1, 3)

                q, k, v = split(att.self.query(x)), split(att.self.key(x)), split(att.self.value(x))
                probs = torch.softmax(torch.matmul(q, k.transpose(-1, -2)) / scale + bias, dim=-1)
                ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
                x = att.output.LayerNorm(att.output.dense(ctx.view(batch, seq, self.heads * self.head_dim)) + x)
                inner = torch.nn.functional.gelu(layer.intermediate.dense(x))
                x = layer.output.LayerNorm(layer.output.dense(inner) + x)
            weights = attention_mask.unsqueeze(-1).to(x.dtype)
            return (x * weights).sum(1) / weights.sum(1).clamp(min=1e-9)

    return PlainBert(hf).eval()


def export(source: Path, out: Path) -> None:
    """Trace :class:`PlainBert` on ``source``'s weights into the ONNX file ``out``."""
    import torch
    from transformers import AutoModel

    hf = AutoModel.from_pretrained(str(source), local_files_only=True).eval()
    model = plain_bert(hf)
    ids = torch.ones((2, 16), dtype=torch.long)
    mask = torch.ones((2, 16), dtype=torch.long)
    mask[1, 9:] = 0  # a padded row: the mask must stay an input of the traced graph
    dynamic = {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
               "pooled": {0: "batch"}}
    with warnings.catch_warnings(), torch.no_grad():
        # torch 2.13's TorchScript exporter announces its own deprecation and traces shapes
        # (TracerWarning); the exported graph is checked against torch in the tests
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (ids, mask), str(out), input_names=["input_ids", "attention_mask"],
                          output_names=["pooled"], dynamic_axes=dynamic, opset_version=OPSET,
                          dynamo=False)


def optimise(raw: Path, out: Path, heads: int, hidden: int) -> dict[str, int]:
    """ONNX Runtime's BERT fusions on ``raw``, written to ``out``; the fused op counts."""
    from onnxruntime.transformers import optimizer

    model = optimizer.optimize_model(str(raw), model_type="bert", num_heads=heads,
                                     hidden_size=hidden, opt_level=0)
    stats = {k: int(v) for k, v in model.get_fused_operator_statistics().items() if v}
    if not stats.get("Attention"):
        raise RulegaugeError(f"{raw}: ONNX Runtime fused no attention ({stats}); the export changed")
    model.save_model_to_file(str(out))
    return stats


def quantise(fused: Path, out: Path) -> dict[str, Any]:
    """Dynamic int8 quantisation of ``fused``'s MatMul and Attention weights, per output
    channel (signed int8 weights, unsigned int8 activations quantised per call; VNNI's
    u8 x s8 dot product), into ``out``. Returns the settings for the build record."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    settings: dict[str, Any] = {"method": "dynamic", "per_channel": True, "weight_type": "int8",
                                "activation_type": "uint8", "op_types": ["MatMul", "Attention"],
                                "nodes_kept_float": list(INT8_NODES_KEPT_FLOAT)}
    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # the quantiser logs a pre-processing advice at WARNING on root
    try:
        quantize_dynamic(str(fused), str(out), per_channel=True, weight_type=QuantType.QInt8,
                         op_types_to_quantize=settings["op_types"],
                         nodes_to_exclude=list(INT8_NODES_KEPT_FLOAT) or None,
                         extra_options={"DefaultTensorType": 1})  # FLOAT: the fused ops have no shape inference
    finally:
        quiet.setLevel(level)
    return settings
