"""``auto``'s rule: the fastest candidate measured to agree with torch-fp32 on this CPU kind and
model, else torch-fp32; the shipped table holds together (embedding/agreement.py)."""

from __future__ import annotations

import pytest

from rulegauge.embedding import agreement as ag
from rulegauge.embedding import backends as be

ZEN4 = {"avx2", "avx512f", "avx512_vnni", "avx512_bf16"}
SAPPHIRE_RAPIDS = {"avx2", "avx512f", "avx512_vnni", "avx512_bf16", "avx_vnni", "amx_bf16", "amx_int8", "amx_tile"}
AGREE = ag.Measurement(True, 2.0, "planted: agrees")
DISAGREE = ag.Measurement(False, 5.0, "planted: 2 questions changed")


def test_the_cpu_kind_is_the_features_that_pick_the_kernels() -> None:
    assert ag.cpu_kind(ZEN4) == ag.ZEN4 == "avx512_vnni+avx512_bf16+avx2"
    assert ag.cpu_kind(ZEN4 | {"sha_ni", "avx512ifma"}) == ag.ZEN4  # flags no kernel choice reads
    assert ag.cpu_kind(SAPPHIRE_RAPIDS) == "amx_int8+amx_bf16+avx512_vnni+avx_vnni+avx512_bf16+avx2"
    assert ag.cpu_kind([]) == "none"


@pytest.mark.parametrize(("table", "expected"), [
    ({"onnx-int8": AGREE, "torch-bf16": AGREE}, "onnx-int8"),  # the fastest that agrees
    ({"onnx-int8": DISAGREE, "torch-bf16": AGREE}, "torch-bf16"),  # int8 moved ranks: the next one
    ({"onnx-int8": DISAGREE, "torch-bf16": DISAGREE}, "torch-fp32"),  # none agrees: the exact one
    ({"torch-bf16": AGREE}, "torch-bf16"),  # int8 never measured here: not taken
    ({}, "torch-fp32"),  # this CPU kind never measured
])
def test_auto_takes_the_fastest_backend_measured_to_agree(table, expected) -> None:
    backend, why = ag.choose(ag.ZEN4, "e5-small", ("onnx-int8", "torch-bf16"), {(ag.ZEN4, "e5-small"): table})
    assert backend == expected
    if expected == "torch-fp32":
        assert why.startswith("no faster backend measured to agree with torch-fp32 on this CPU kind")
    if table.get("onnx-int8") is DISAGREE and expected == "torch-bf16":
        assert "not taken: onnx-int8: planted: 2 questions changed" in why
    # another model or CPU kind than the one measured: the exact backend
    assert ag.choose(ag.ZEN4, "minilm-en", ("onnx-int8",), {(ag.ZEN4, "e5-small"): table})[0] == "torch-fp32"
    assert ag.choose("avx2", "e5-small", ("onnx-int8",), {(ag.ZEN4, "e5-small"): table})[0] == "torch-fp32"


def test_no_candidate_is_the_exact_backend() -> None:
    assert ag.choose("avx2", "e5-small", ()) == ("torch-fp32", "no faster backend for this CPU's features")


def test_the_shipped_table_names_registered_backends_and_its_measurement() -> None:
    for (kind, model), rows in ag.MEASURED.items():
        assert kind == ag.cpu_kind(kind.split("+")) and model in ("e5-small", "minilm-en")
        for backend, m in rows.items():
            assert be.BACKENDS.get(backend).dtype is not None and backend != ag.EXACT
            assert "2026" in m.measured and ("agrees" in m.measured) is m.agrees


def test_on_amd_zen_4_auto_is_within_the_tolerance_or_exact() -> None:
    """This machine's kind: int8 was measured to move ranks, so auto is not int8 there."""
    kind, backend, _ = be.auto_for(ZEN4)
    assert kind == ag.ZEN4 and backend != "onnx-int8"
    assert backend == ag.EXACT or ag.MEASURED[(ag.ZEN4, "e5-small")][backend].agrees


def test_the_fastest_is_the_fastest_measured_on_this_cpu_kind() -> None:
    """The rules' order is a default; a candidate measured faster on this kind is tried first
    (on AMD Zen 4 the ONNX float32 graph beats torch-bf16, on Intel AMX the reverse)."""
    table = {"torch-bf16": ag.Measurement(True, 1.6, "planted: agrees"),
             "onnx-fp32": ag.Measurement(True, 2.9, "planted: agrees")}
    assert ag.choose(ag.ZEN4, "e5-small", ("torch-bf16", "onnx-fp32"), {(ag.ZEN4, "e5-small"): table})[0] == "onnx-fp32"
