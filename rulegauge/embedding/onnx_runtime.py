"""Run an exported sentence encoder (:mod:`rulegauge.embedding.onnx_export`) with ONNX Runtime.

:class:`OnnxEncoder` tokenises with the model folder's ``tokenizer.json`` (the file
sentence-transformers loads; special tokens added, truncated to the model's maximum
sequence length), pads each batch to its longest member, runs the graph (whose output
is already mean-pooled over the attention mask) on the CPU execution provider with
every graph optimisation enabled, and L2-normalises the rows in float32.

Threads: ``threads`` calls run side by side (rulegauge passes
:func:`rulegauge.embedding.backends.embedding_threads`, every core the process may use),
each on one ONNX Runtime thread, idle threads not spinning. Rows come back in input order; within
one call texts are run longest first (as sentence-transformers' ``encode`` does), in
runs of at most ``batch_size`` and :data:`MICRO_BATCH` texts.

Edge cases: an empty list gives a ``(0, dimension)`` array; the empty string is
``<s></s>`` (two tokens), as with sentence-transformers.

Reference: ONNX Runtime Python API, ``InferenceSession`` / ``SessionOptions``
(onnxruntime.ai/docs/api/python).
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

MICRO_BATCH = 1
"""At most this many texts per ONNX Runtime call. One: no padding at all, and int8's
per-call activation scales are then the passage's own, so its vector does not depend on
the texts embedded with it. Measured (128 SRD chunks, int8, passages per CPU-second,
load average 8-11 on 2 cores): 27.2 at 1, 25.0 at 2, 23.5 at 4, 20.7 at 8, 17.2 at 16."""


class OnnxEncoder:
    """An ONNX Runtime session over ``model_file`` with the tokenizer of ``tokenizer_file``."""

    def __init__(self, model_file: Path, tokenizer_file: Path, max_seq_length: int, threads: int) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_seq_length)
        options = ort.SessionOptions()
        # ``threads`` calls at a time, one thread each: a one-text call is too small to split
        # across cores (two intra-op threads used about one core), two texts side by side are not
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.workers = max(1, threads)
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: ORT logs kernel choices at WARNING
        # idle worker threads sleep instead of spinning: on a shared 2-core machine spinning
        # burns the CPU time other jobs need (measured: +20% passages per CPU-second)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        self.dimension = int(self.session.get_outputs()[0].shape[-1])

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, special tokens included, truncated."""
        return [list(e.ids) for e in self.tokenizer.encode_batch(list(texts))]

    def run(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        """Mean-pooled (not normalised) float32 rows of one padded batch."""
        width = max(len(row) for row in ids)
        input_ids = np.zeros((len(ids), width), np.int64)
        mask = np.zeros((len(ids), width), np.int64)
        for r, row in enumerate(ids):
            input_ids[r, :len(row)] = row
            mask[r, :len(row)] = 1
        out: Any = self.session.run(None, {"input_ids": input_ids, "attention_mask": mask})[0]
        return np.asarray(out, dtype=np.float32)

    def encode(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """L2-normalised float32 rows, one per text, in input order."""
        out = np.zeros((len(texts), self.dimension), np.float32)
        if not texts:
            return out
        ids = self.token_ids(texts)
        order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i))
        step = max(1, min(batch_size, MICRO_BATCH))
        groups = [order[start:start + step] for start in range(0, len(order), step)]
        with ThreadPoolExecutor(self.workers) as pool:  # ORT releases the GIL while it runs
            for rows, pooled in zip(groups, pool.map(lambda g: self.run([ids[i] for i in g]), groups),
                                    strict=True):
                out[rows] = pooled
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.ascontiguousarray(out / np.maximum(norms, np.float32(1e-12)), dtype=np.float32)
