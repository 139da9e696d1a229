"""Embedding backends: how a sentence-transformers model computes its vectors.

:data:`BACKENDS` maps a name to a :class:`Backend`; :func:`resolve_backend` turns the
dense arm's ``backend`` parameter into a concrete backend (``auto`` picks one from
the CPU). The backend's name is part of the model id (:mod:`harness.embedding.models`),
so vectors from different backends never share an embedding-cache folder.

Backends
--------
``torch-fp32``
    The reference: float32 weights and activations (the vectors before this module
    existed, up to the ~1e-7 batch-composition noise documented in docs/dense.md).
``torch-bf16``
    Weights cast to bfloat16 once at load; torch runs the matrix products on the
    CPU's AMX tiles (oneDNN), pooling and L2 normalisation are done in float32 on the
    bf16 token states. Measured on the SRD chunks: cosine to the fp32 vectors
    >= 0.9999 per passage, about 2.2x the fp32 passages/s on an AMX CPU. Without
    AMX it still works but bf16 is emulated and slower than fp32.
``auto`` (the dense arm's default)
    ``torch-bf16`` when the CPU reports AMX (``amx_bf16`` in ``/proc/cpuinfo``), else
    ``torch-fp32``. The resolved name goes into the manifest, so two machines that
    resolved differently are visible there (and use different cache folders).

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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.errors import HarnessError
from harness.core.registry import Registry

AUTO = "auto"
AMX_FLAG = "amx_bf16"
CPUINFO = Path("/proc/cpuinfo")


@dataclass(frozen=True)
class Backend:
    """A registered backend. ``dtype`` is the torch dtype name the weights are cast
    to (``None`` for ``auto``, which only picks another backend)."""

    name: str
    description: str
    dtype: str | None


BACKENDS: Registry[Backend] = Registry("embedding backend")
BACKENDS.add("torch-fp32", Backend("torch-fp32", "torch, float32 (reference)", "float32"))
BACKENDS.add("torch-bf16", Backend("torch-bf16", "torch, bfloat16 weights (fast on AMX CPUs)",
                                   "bfloat16"))
BACKENDS.add(AUTO, Backend(AUTO, "torch-bf16 when the CPU has AMX, else torch-fp32", None))


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


AUTO_RULES: tuple[tuple[Callable[[], bool], str], ...] = ((has_amx, "torch-bf16"),)
"""``auto``: the first rule whose test holds names the backend; none: ``torch-fp32``."""


def resolve_backend(name: str) -> Backend:
    """The concrete backend for ``name`` (``auto`` is resolved; unknown names raise,
    listing the choices)."""
    backend = BACKENDS.get(name)
    if backend.dtype is not None:
        return backend
    chosen = next((target for test, target in AUTO_RULES if test()), "torch-fp32")
    return BACKENDS.get(chosen)


def apply(backend: Backend, network: Any) -> Any:
    """Cast a loaded ``SentenceTransformer`` to the backend's dtype (in place)."""
    import torch

    if backend.dtype is None:
        raise HarnessError(f"backend {backend.name!r} must be resolved before use")
    return network.to(getattr(torch, backend.dtype))


def describe(backend: Backend) -> dict[str, Any]:
    """Provenance of a resolved backend for the manifest: name, dtype, library
    versions and whether the CPU reports AMX."""
    return {"backend": backend.name, "dtype": backend.dtype,
            "torch": importlib.metadata.version("torch"), "cpu_amx_bf16": has_amx()}
