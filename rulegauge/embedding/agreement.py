"""Which backend ``auto`` may use: the fastest whose retrieval agrees with the exact one, per CPU kind.

A faster backend (int8, bf16, an ONNX graph) computes slightly different vectors, and a cosine
of 0.995 per passage says nothing about ranks: on real gold sets int8 moved recall@5 by one to
three questions. So ``dense.backend = auto`` (:func:`rulegauge.embedding.backends.resolve_backend`)
takes the backends the CPU can run fast in the order they were measured fastest
(:data:`rulegauge.embedding.backends.AUTO_RULES`, ``benchmarks/bench_embed.py``) and picks the
first one whose *retrieval* was measured to agree with the exact backend, ``torch-fp32``, on this
*CPU kind* and for this model (:data:`MEASURED`); when none was, it picks ``torch-fp32``.

Definitions:

* *CPU kind* (:func:`cpu_kind`): the features that select the kernels int8 and bf16 run on
  (:data:`KIND_FLAGS`: AMX tiles, AVX-512 VNNI, AVX-VNNI, AVX-512 BF16, AVX2), joined; two
  CPUs of one kind run the same kernels.
* *Agreement* (``benchmarks/bench_backends.py``, which prints the row to add): the user's
  command, ``rulegauge run`` with the dense arm alone and ``-p dense.backend=B``, against the
  same with ``torch-fp32``, on every check set: the sample gold set (57 questions, 11 in
  Russian, Persian, German or Spanish), the same set carried to the sample rulebook's German
  edition (English questions on German pages), the Secret Hitler gold set (../shared; 5 of 40
  cross-lingual) and a parallel AisleRiot set (../shared; English rules asked in German, French,
  Spanish and Russian). A backend agrees when on every set at most :data:`MAX_CHANGED` of the
  questions change recall@5 or recall@10 of ``arm-dense`` and the mean overlap of the two top-10
  chunk lists is at least :data:`MIN_OVERLAP`.

Why a measured table shipped in the package, not a check at run time: the check needs the
exact backend to embed the check sets (minutes of CPU on a machine's first run, and the ONNX
export), its real sets live in ../shared, which a package cannot ship, and a table makes every
machine of one kind resolve alike (a run-time check near the tolerance could flip between two
machines). A CPU kind nobody measured gets the exact backend until someone runs the benchmark
there and adds its row (tested: ``tests/embedding/test_agreement.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

EXACT = "torch-fp32"
MAX_CHANGED = 0.01
"""The share of a check set's questions whose recall@5 or recall@10 may change (0 on sets under 100)."""
MIN_OVERLAP = 0.95
"""The least mean overlap of a backend's top-10 chunks with the exact backend's."""
KIND_FLAGS = ("amx_int8", "amx_bf16", "avx512_vnni", "avx_vnni", "avx512_bf16", "avx2")


def cpu_kind(flags: Iterable[str]) -> str:
    """The CPU kind of a CPU listing ``flags``: the :data:`KIND_FLAGS` it lists, joined by ``+``
    (``none`` for none)."""
    listed = frozenset(flags)
    return "+".join(f for f in KIND_FLAGS if f in listed) or "none"


@dataclass(frozen=True)
class Measurement:
    """One backend's agreement with ``torch-fp32`` on one CPU kind, for one model, and its
    speed there (passages per CPU-second, x ``torch-fp32``; ``benchmarks/bench_embed.py``)."""

    agrees: bool
    speed: float
    measured: str
    """When, on which CPU, and the figures per check set."""


ZEN4 = "avx512_vnni+avx512_bf16+avx2"
MEASURED: dict[tuple[str, str], dict[str, Measurement]] = {
    (ZEN4, "e5-small"): {
        "onnx-int8": Measurement(False, 5.19, "AMD EPYC (Zen 4), 2026-12-07, load 9-12: DISAGREES; "
                                 "questions changing recall@5 or @10 / mean top-10 overlap: sample 2 of 57 / "
                                 "0.900, sample-de2 5 of 47 / 0.911, secret-hitler 0 of 40 / 0.928, "
                                 "AisleRiot parallel 20 of 208 / 0.754"),
        "torch-bf16": Measurement(False, 1.68, "AMD EPYC (Zen 4), 2026-12-07, load 9-12: DISAGREES; "
                                  "sample 0 of 57 / 0.993, sample-de2 1 of 47 / 0.992, secret-hitler 0 of 40 / "
                                  "0.995, AisleRiot parallel 4 of 208 / 0.976"),
        "onnx-fp32": Measurement(True, 2.99, "AMD EPYC (Zen 4), 2026-12-07, load 9-12: agrees; sample 0 "
                                 "of 57 / 1.000, sample-de2 0 of 47 / 1.000, secret-hitler 0 of 40 / 1.000, "
                                 "AisleRiot parallel 0 of 208 / 1.000"),
    },
}
"""(CPU kind, model) -> backend -> its measured agreement and speed (``benchmarks/bench_backends.py``,
``benchmarks/bench_embed.py``; figures in docs/dense.md and benchmarks/README.md)."""


def choose(kind: str, model: str, candidates: Sequence[str],
           measured: dict[tuple[str, str], dict[str, Measurement]] | None = None) -> tuple[str, str]:
    """``(backend, why)``: the fastest of ``candidates`` measured to agree on CPU kind ``kind``
    for ``model`` (faster first by the speed measured on this kind, else in the given order);
    else :data:`EXACT`, saying why."""
    table = (MEASURED if measured is None else measured).get((kind, model), {})
    candidates = sorted(candidates, key=lambda b: -table[b].speed if b in table else 0.0)
    for backend in candidates:
        m = table.get(backend)
        if m is not None and m.agrees:
            skipped = [f"{b}: {table[b].measured}" for b in candidates[:candidates.index(backend)] if b in table]
            return backend, m.measured + (f" (faster, not taken: {'; '.join(skipped)})" if skipped else "")
    if not candidates:
        return EXACT, "no faster backend for this CPU's features"
    why = [f"{b}: {table[b].measured}" for b in candidates if b in table]
    return EXACT, ("no faster backend measured to agree with torch-fp32 on this CPU kind "
                   f"({kind}) for {model}" + (f": {'; '.join(why)}" if why else
                                               ": none measured here (benchmarks/bench_backends.py)"))
