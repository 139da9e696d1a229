"""Embedding backends: how a sentence-transformers model computes its vectors.

:data:`BACKENDS` maps a name to a :class:`Backend`; :func:`resolve_backend` turns the
dense arm's ``backend`` parameter into a concrete backend (``auto`` picks one from
the CPU). The backend's name is part of the model id (:mod:`rulegauge.embedding.models`),
so vectors from different backends never share an embedding-cache folder.

Backends
--------
``torch-fp32``
    The reference: float32 weights and activations (the vectors before this module
    existed, up to the ~1e-7 batch-composition noise documented in docs/dense.md).
``torch-bf16``
    Weights cast to bfloat16 once at load; torch (oneDNN) runs the matrix products on
    the CPU's AMX tiles, or with the AVX-512 BF16 dot-product instructions
    (``avx512_bf16``) where there is no AMX; pooling and L2 normalisation are done in
    float32 on the bf16 token states. Measured on the SRD chunks: cosine to the fp32
    vectors >= 0.9999 per passage; about 2.2x the fp32 passages/s on an AMX CPU
    (Intel), about 1.6x on AMD Zen 4 (``avx512_bf16``, no AMX). Without either, bf16
    is emulated and slower than fp32.
``onnx-fp32``, ``onnx-int8``
    The model exported to ONNX at first use and run by ONNX Runtime
    (:mod:`rulegauge.embedding.onnx_export`, :mod:`rulegauge.embedding.onnx_runtime`):
    the fused float32 graph, or int8 weights quantised per output channel with
    activations quantised per call, one text per call (VNNI's u8 x s8 dot products).
``auto`` (the dense arm's default)
    The fastest backend this CPU runs whose retrieval was measured to agree with
    ``torch-fp32`` on this CPU kind for the model (:mod:`rulegauge.embedding.agreement`:
    recall@5, recall@10 and the top-10 overlap on check sets with cross-lingual questions);
    else ``torch-fp32``. The candidates, fastest first, are the backends of the rules of
    :data:`AUTO_RULES` whose CPU feature ``/proc/cpuinfo`` lists (:func:`candidates`):
    ``avx512_vnni`` -> ``onnx-int8`` (fastest where measured, AMX Xeons and AMD Zen 4),
    ``amx_bf16`` and ``avx512_bf16`` -> ``torch-bf16``, ``avx2`` -> ``onnx-fp32``. On AMD Zen 4
    int8 and bf16 were measured to move ranks and onnx-fp32 not (``auto`` = ``onnx-fp32``
    there; :data:`rulegauge.embedding.agreement.MEASURED`); a CPU kind nobody measured gets
    ``torch-fp32``. The resolved name, the CPU kind, the reason and the features seen go into
    the manifest, so two machines that resolved differently are visible there (and use
    different cache folders).

Threads: :func:`embedding_threads`, the CPUs this process may run on
(``os.sched_getaffinity``: taskset, cgroup cpusets), capped by ``OMP_NUM_THREADS`` when it
is set (Ray sets it to an actor's CPUs): torch gets that many threads, ONNX Runtime that many
one-thread calls side by side.

Edge cases: on systems without ``/proc/cpuinfo`` no flag is found and ``auto``
resolves to ``torch-fp32``. Detection reads the flags only (no torch import), so a
run whose embeddings are all cached never imports torch.

Reference: Intel, "Intel Advanced Matrix Extensions (AMX)" (ISA extensions
reference, ch. 3); Kalamkar et al. 2019, "A Study of BFLOAT16 for Deep Learning
Training" (arXiv:1905.12322).
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.registry import Registry
from rulegauge.embedding import agreement

AUTO = "auto"
AMX_FLAG = "amx_bf16"
FEATURES = ("amx_bf16", "avx512_bf16", "avx512_vnni", "avx2")
"""The CPU features the ``auto`` rules and the manifest look at."""
CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class Backend:
    """A registered backend. ``dtype`` names the weights' type (a torch dtype for the
    torch engine; ``None`` for ``auto``, which only picks another backend)."""

    name: str
    description: str
    dtype: str | None
    engine: str = "torch"
    """``torch`` (sentence-transformers on torch) or ``onnx`` (:mod:`rulegauge.embedding.onnx_runtime`)."""
    extra: str = "dense"
    """The optional dependencies every backend needs (:mod:`rulegauge.core.extras`)."""


BACKENDS: Registry[Backend] = Registry("embedding backend")
BACKENDS.add("torch-fp32", Backend("torch-fp32", "torch, float32 (reference)", "float32"))
BACKENDS.add("torch-bf16", Backend("torch-bf16", "torch, bfloat16 weights (fast on AMX CPUs)",
                                   "bfloat16"))
BACKENDS.add("onnx-fp32", Backend("onnx-fp32", "ONNX Runtime, optimised float32 graph", "float32", "onnx"))
BACKENDS.add("onnx-int8", Backend("onnx-int8", "ONNX Runtime, int8 weights per channel (VNNI)", "int8", "onnx"))
BACKENDS.add(AUTO, Backend(AUTO, "the fastest backend this CPU runs whose retrieval was measured to "
                           "agree with torch-fp32 on its CPU kind (embedding.agreement), else torch-fp32",
                           None))


@functools.lru_cache(maxsize=1)
def cpu_flags() -> frozenset[str]:
    """The CPU feature flags of ``/proc/cpuinfo`` (empty when it cannot be read)."""
    try:
        text = CPUINFO.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def has_amx() -> bool:
    """True when the CPU (and the kernel, which hides the flag otherwise) offers AMX bf16."""
    return AMX_FLAG in cpu_flags()


AUTO_RULES: tuple[tuple[str, str, str], ...] = (
    ("avx512_vnni", "onnx-int8", "AVX-512 VNNI, with or without AMX: Intel Xeon with AMX (2026-12-03, "
     "load average 6-16 on 2 cores, two runs): 3.42-3.69x fp32 passages/s by wall time, 3.51-3.62x per "
     "CPU-second, torch-bf16 2.09-2.18x / 1.96-2.00x in the same rotations; AMD EPYC Zen 4 without AMX "
     "(2026-12-01, load 3-4): 6.18x fp32 passages/s by wall time, 5.70x per CPU-second (load 8-12: int8 "
     "5.97x, torch-bf16 2.29x beside it); min cosine 0.9949"),
    ("amx_bf16", "torch-bf16", "AMX tiles where VNNI is not listed (e.g. a VM hiding the flag): torch-bf16 "
     "3.06x fp32 passages/s (Intel AMX, 2026-11-30)"),
    ("avx512_bf16", "torch-bf16", "AVX-512 BF16 without AMX or VNNI: 1.6x fp32 passages/s (torch-bf16 "
     "measured on AMD Zen 4)"),
    ("avx2", "onnx-fp32", "the fused ONNX float32 graph, one text per call: AMD EPYC Zen 4 (2026-12-07, load "
     "11-12) 2.9x torch-fp32 passages per CPU-second, faster than torch-bf16 there (1.6x); Intel AMX "
     "(2026-12-04, load 1.5) 1.52x, slower than torch-bf16 (2.52x)"),
)
"""The speed order of ``auto``'s candidates: (CPU feature, backend, the speed measurement behind
the rule), fastest first; :func:`candidates` keeps the rules whose feature the CPU lists. Which
candidate ``auto`` takes is decided by retrieval agreement (:mod:`rulegauge.embedding.agreement`).
The figures and the reasons are in docs/dense.md ("Rules")."""

DEFAULT_RULE = ("none", "torch-fp32", "no faster backend measured at the quality guard")


def rule_for(flags: Iterable[str]) -> tuple[str, str, str]:
    """The fastest rule of :data:`AUTO_RULES` on a CPU listing ``flags`` (:data:`DEFAULT_RULE`
    when none matches, e.g. no flags at all): ``auto``'s first candidate."""
    listed = frozenset(flags)
    return next((rule for rule in AUTO_RULES if rule[0] in listed), DEFAULT_RULE)


def candidates(flags: Iterable[str]) -> tuple[str, ...]:
    """The faster backends a CPU listing ``flags`` runs, fastest first (:data:`AUTO_RULES`)."""
    listed = frozenset(flags)
    return tuple(dict.fromkeys(rule[1] for rule in AUTO_RULES if rule[0] in listed))


def auto_for(flags: Iterable[str], model: str = "e5-small") -> tuple[str, str, str]:
    """``(CPU kind, backend, why)``: what ``auto`` resolves to for ``model`` on a CPU listing
    ``flags`` (:mod:`rulegauge.embedding.agreement`)."""
    listed = frozenset(flags)
    kind = agreement.cpu_kind(listed)
    return (kind, *agreement.choose(kind, model, candidates(listed)))


def auto_rule(model: str = "e5-small") -> tuple[str, str, str]:
    """What ``auto`` resolves to on this CPU for ``model``: ``(CPU kind, backend, why)``."""
    return auto_for(cpu_flags(), model)


def usable_cores() -> int:
    """CPUs this process may run on: ``os.sched_getaffinity`` (which taskset, cgroup
    cpusets and container limits on the CPU set narrow), else ``os.cpu_count()``, at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def embedding_threads() -> int:
    """Threads the embedding runs on: :func:`usable_cores`, capped by ``OMP_NUM_THREADS``
    when that is a positive integer (the OpenMP convention; Ray sets it to an actor's CPUs)."""
    cores = usable_cores()
    omp = os.environ.get("OMP_NUM_THREADS", "").strip()
    return min(cores, int(omp)) if omp.isdigit() and int(omp) > 0 else cores


def resolve_backend(name: str, model: str = "e5-small") -> Backend:
    """The concrete backend for ``name`` (``auto`` is resolved for ``model``: :func:`auto_rule`;
    unknown names raise, listing the choices)."""
    backend = BACKENDS.get(name)
    if backend.dtype is not None:
        return backend
    return BACKENDS.get(auto_rule(model)[1])


def apply(backend: Backend, network: Any) -> Any:
    """Cast a loaded ``SentenceTransformer`` to the backend's dtype (in place)."""
    import torch

    if backend.dtype is None or backend.engine != "torch":
        raise RulegaugeError(f"backend {backend.name!r} is not a resolved torch backend")
    return network.to(getattr(torch, backend.dtype))


def describe(backend: Backend, model: str = "e5-small") -> dict[str, Any]:
    """Provenance of a resolved backend for the manifest: name, dtype, library
    versions, the CPU features :data:`FEATURES` and what ``auto`` resolves to here for ``model``
    (the CPU kind, the backend and why)."""
    flags = cpu_flags()
    kind, target, why = auto_rule(model)
    return {"backend": backend.name, "dtype": backend.dtype, "engine": backend.engine,
            "torch": importlib.metadata.version("torch"), "cpu_amx_bf16": has_amx(),
            "cpu_features": {f: f in flags for f in FEATURES},
            "auto_rule": {"cpu_kind": kind, "backend": target, "measured": why},
            "threads": embedding_threads()}
