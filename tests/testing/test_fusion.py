"""The fusion-method conformance suite over every registered method (built-in or plug-in)."""

import pytest

from rulegauge.fusion.method import FUSION_METHODS
from rulegauge.testing.fusion import check_fusion_method


@pytest.mark.parametrize("name", FUSION_METHODS.names())
def test_every_registered_method_equals_the_reference_and_keeps_its_ceiling(name, monkeypatch):
    # ranx parity is the slow test below (numba compiles its kernels on first use)
    monkeypatch.setattr(FUSION_METHODS.get(name), "ranx_equivalent", lambda config: None)
    result = check_fusion_method(name)
    assert result.problems == ()


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in FUSION_METHODS.names()
                                  if FUSION_METHODS.get(n).ranx_equivalent is not None])
def test_every_method_with_a_ranx_equivalent_equals_ranx(name):
    pytest.importorskip("ranx")
    assert check_fusion_method(name).problems == ()


def test_a_ceiling_below_the_fused_scores_and_a_kernel_that_disagrees_are_caught():
    rrf = type(FUSION_METHODS.get("rrf"))

    class LowCeiling(rrf):
        def ceiling(self, config):
            return 0.5 * super().ceiling(config)

        def ranx_equivalent(self, config):
            return None

    low = check_fusion_method(LowCeiling())
    assert low.problems and all("exceeds the declared ceiling" in p for p in low.problems)

    combsum = type(FUSION_METHODS.get("combsum"))

    class Reversed(combsum):
        def fuse(self, planes, config):  # the kernel and fuse read the same scores: they agree
            return -super().fuse(planes, config)

        def ceiling(self, config):  # negated scores never reach the sum of the weights
            return None

        def ranx_equivalent(self, config):
            return None

    assert check_fusion_method(Reversed()).problems == ()  # negated scores: a valid, if odd, method


def test_the_entry_probes_of_every_run_are_in_the_suite():
    """The suite runs the probes a run makes where a method enters it (rulegauge.fusion.contract):
    a ceiling out of reach and weights that do not count are reported; a method declaring it takes
    no weights is given none."""
    import dataclasses

    combsum = type(FUSION_METHODS.get("combsum"))

    class HighCeiling(combsum):
        def ceiling(self, config):
            return 10 * super().ceiling(config)

        def ranx_equivalent(self, config):
            return None

    class Unweighted(combsum):
        def fuse(self, planes, config):
            return super().fuse(planes, dataclasses.replace(config, weights=(1.0,) * len(config.weights)))

        def ranx_equivalent(self, config):
            return None

    class DeclaredUnweighted(Unweighted):
        takes_weights = False

    high = check_fusion_method(HighCeiling()).problems
    assert high and any("(entry probe)" in p or "not the declared ceiling" in p for p in high)
    flat = check_fusion_method(Unweighted()).problems
    assert any("its fused order does not change with the weights" in p for p in flat)
    assert check_fusion_method(DeclaredUnweighted()).problems == ()
