"""The fusion contract probed where a method enters a run (rulegauge.fusion.contract) and kept at
every call (fused_scores): the ceiling reached, weights counted, no score above the ceiling."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

from rulegauge.fusion.contract import (
    Probes,
    ceiling_problem,
    check_configs,
    config_problems,
    probe_planes,
    weights_problem,
)
from rulegauge.fusion.kernel import planes_of
from rulegauge.fusion.method import FUSION_METHODS, FusionContractError, fused_scores
from rulegauge.testing.synthetic import config, synthetic_ranks

RRF = type(FUSION_METHODS.get("rrf"))


def _every_builtin_config() -> list[tuple[str, object]]:
    out = []
    for name in FUSION_METHODS.names():
        m = FUSION_METHODS.get(name)
        choices = [[(p.name, c) for c in p.choices] for p in m.params if p.choices]
        for combo in itertools.product(*choices) if choices else [()]:
            for arms in (("a",), ("a", "b"), ("a", "b", "c")):
                for w in ((1.0,) * len(arms), tuple(float(i + 1) for i in range(len(arms)))):
                    c = config(name, tuple(sorted(combo)), arms=arms, weights=w, depths=(1,) * len(arms))
                    out.append((name, c))
    return out


@pytest.mark.parametrize(("name", "c"), _every_builtin_config(), ids=lambda x: getattr(x, "config_id", x))
def test_every_builtin_method_keeps_its_ceiling_and_weights_on_the_probes(name, c):
    assert config_problems(FUSION_METHODS.get(name), c) == []


def test_the_rrf_probe_reaches_its_ceiling_exactly():
    c = config("rrf", arms=("a", "b", "c"), weights=(1.0, 0.5, 2.0))
    top = fused_scores(FUSION_METHODS.get("rrf"), Probes().top(c.arms), c)[0, 0]
    assert top == 1 / 61 + 0.5 / 61 + 2 / 61 == FUSION_METHODS.get("rrf").ceiling(c)


class TenfoldCeiling(RRF):
    def ceiling(self, c):  # type: ignore[no-untyped-def]
        return 10 * super().ceiling(c)


class IgnoresWeights(RRF):
    def fuse(self, planes, c):  # type: ignore[no-untyped-def]
        return super().fuse(planes, dataclasses.replace(c, weights=(1.0,) * len(c.weights)))


class TakesNoWeights(IgnoresWeights):
    takes_weights = False


def test_a_ceiling_out_of_reach_and_weights_that_do_not_count_are_named():
    c = config("rrf", arms=("a", "b"))
    assert ceiling_problem(TenfoldCeiling(), c) == (
        f"a chunk ranked first by every arm scores {2 / 61!r}, not the declared ceiling {10 * (2 / 61)!r}: "
        "the ceiling is the largest score a chunk can get, and that chunk gets it")
    assert weights_problem(IgnoresWeights(), c).startswith(
        "its fused order does not change with the weights: chunk x (first by a) and chunk y (first by b) keep "
        "their order when weights a=3, b=1 are swapped")
    assert weights_problem(IgnoresWeights(), config("rrf", arms=("a",))) is None  # one arm: nothing to weigh
    assert config_problems(TakesNoWeights(), c) == []  # declared: not probed for weights
    refused = config_problems(TakesNoWeights(), config("rrf", arms=("a", "b"), weights=(1.0, 2.0)))
    assert len(refused) == 1 and "takes no weights (it declares takes_weights = False); remove the weights b=2" \
        in refused[0]


def test_check_configs_raises_every_problem_naming_method_and_package(monkeypatch):
    monkeypatch.setitem(FUSION_METHODS._items, "x-high", TenfoldCeiling())
    monkeypatch.setitem(FUSION_METHODS._items, "x-flat", IgnoresWeights())
    grid = [config("x-high", arms=("a", "b"), k=float(k)) for k in range(1, 6)]
    grid += [config("x-flat", arms=("a", "b"), k=60.0), config("rrf", arms=("a", "b"), k=60.0)]
    with pytest.raises(FusionContractError) as err:
        check_configs(grid)
    lines = str(err.value).splitlines()
    assert lines[0].startswith("fusion method 'x-high' (rulegauge.fusion, from builtin) broke the fusion contract "
                               "(docs/plugins.md): config x-high-a+b-1-1-40-40: a chunk ranked first by every arm")
    assert lines[3] == "... and 2 more configs of fusion method 'x-high'"  # three shown per method
    assert "fusion method 'x-flat'" in lines[4] and "does not change with the weights" in lines[4]
    assert len(lines) == 5  # rrf keeps its contract
    check_configs([config("rrf", arms=("a", "b"), k=float(k)) for k in range(1, 100)])  # the good pass


class Overshoot(RRF):
    """Reaches its ceiling on the probe, then scores a chunk ranked 3 or deeper 20 times over."""

    def fuse(self, planes, c):  # type: ignore[no-untyped-def]
        out = super().fuse(planes, c)
        deep = np.zeros(planes.shape, bool)
        for j in range(len(c.arms)):
            r, _, votes = planes.arm(c, j)
            deep |= votes & (r >= 3)
        return np.where(deep, 20 * out, out)


def test_fused_scores_above_the_ceiling_at_run_time_are_refused_naming_the_question():
    planes, _ = planes_of(synthetic_ranks(3).matrix)
    c = config("rrf", arms=("a", "b", "c"))
    assert config_problems(Overshoot(), c) == []  # the entry probe cannot see it
    with pytest.raises(FusionContractError, match=r"config rrf-a\+b\+c-1-1-1-40-40-40, question q000: fused score "
                                                  r"[0-9.e-]+ exceeds the declared ceiling 0.04918"):
        fused_scores(Overshoot(), planes, c)
    # a cell no arm voted for may hold anything, above the ceiling too
    unvoted = probe_planes(("a", "b"), [(1, 0), (1, 0)], [(1.0, 0.0), (1.0, 0.0)])

    class Anything(RRF):
        def fuse(self, planes, c):  # type: ignore[no-untyped-def]
            out = super().fuse(planes, c)
            out[0, 1] = 1e9  # column 1: no arm voted
            return out

    assert fused_scores(Anything(), unvoted, config("rrf", arms=("a", "b")))[0, 1] == 1e9
