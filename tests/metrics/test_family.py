"""The metric object: one family + cutoff value type, canonical names that round-trip, needs."""

import pytest

from rulegauge.core.errors import RegistryError
from rulegauge.metrics.family import METRICS, NEEDS, Metric, declare, implement
from rulegauge.metrics.info import resolve
from rulegauge.metrics.ranking import DEFAULT_METRICS

NAMES = ["hit@5", "recall@10", "P@3", "MRR@10", "nDCG@10", "MAP@5", "Judged@10", "first_rel_rank",
         "top_score", "nDCG(judged_only=True)@10", "MAP(judged_only=True)@5", "recall(judged_only=True)@3",
         "fence_pass", "latency_ms", "RBP@10", "RBP(p=0.95)@20", "RBP(p=0.5,judged_only=True)@5",
         *DEFAULT_METRICS]


@pytest.mark.parametrize("name", NAMES)
def test_canonical_names_round_trip_and_equal_themselves(name):
    m = resolve(name)
    assert str(m) == m.name == name
    assert resolve(str(m)) == m and hash(resolve(str(m))) == hash(m)


def test_family_at_cutoff_and_keyword_parameters_follow_ir_measures():
    ndcg = METRICS.get("nDCG")
    assert ndcg @ 10 == resolve("ndcg_cut@10") == Metric(ndcg, 10)
    assert ndcg(judged_only=True) @ 10 == resolve("nDCG(judged_only=True)@10")
    assert ndcg @ 10 != ndcg(judged_only=True) @ 10 and ndcg @ 10 != ndcg @ 5
    assert resolve("nDCG(judged_only=False)@10") == ndcg @ 10  # the default is left out of the name
    assert resolve("AP(judged_only=True)@10").name == "MAP(judged_only=True)@10"
    assert len({resolve("RR@10"), resolve("MRR@10"), resolve("mrr@10")}) == 1


def test_ir_measures_prints_the_same_names():
    import ir_measures

    assert str(ir_measures.parse_measure("nDCG(judged_only=True)@10")) == resolve("nDCG(judged_only=True)@10").name
    assert str(ir_measures.parse_measure("Judged@10")) == resolve("judged@10").name


def test_needs_are_declared_with_the_computation():
    assert resolve("first_rel_rank").needs == {"whole_list"}
    assert resolve("nDCG@10").needs == {"grades"}
    assert resolve("nDCG(judged_only=True)@10").needs == {"grades", "judgments"}
    assert resolve("Judged@5").needs == {"judgments"} and resolve("hit@5").needs == frozenset()
    assert all(f.needs <= set(NEEDS) for _, f in METRICS.items())


def test_bad_names_and_parameters_are_refused():
    with pytest.raises(RegistryError, match="has no parameter 'rel'; it takes: judged_only"):
        resolve("nDCG(rel=2)@10")
    with pytest.raises(RegistryError, match="no condensed-list"):
        resolve("top_score(judged_only=True)")
    with pytest.raises(RegistryError, match="no condensed-list"):
        resolve("Judged(judged_only=True)@10")
    with pytest.raises(RegistryError, match="unknown metric"):
        resolve("nDCG@10/condensed")


def test_declarations_and_computations_are_bound_once():
    with pytest.raises(RegistryError, match="need 'corpus' is not one of"):
        declare("x_needs", kind="ranking", direction="higher", scope="all", description="x", needs=("corpus",))
    with pytest.raises(RegistryError, match="computed twice"):
        implement("hit", lambda p, k: p)
    with pytest.raises(RegistryError, match="unknown metric 'no_such'"):
        implement("no_such", lambda p, k: p)


def test_parameters_are_declared_per_family_typed_checked_and_in_the_name():
    rbp = METRICS.get("RBP")
    assert [(p.name, p.type, p.default) for p in rbp.params] == [("p", float, 0.8), ("judged_only", bool, False)]
    assert resolve("RBP(p=0.8)@10") == rbp @ 10 and resolve("RBP(p=0.8)@10").name == "RBP@10"  # default left out
    m = resolve("rbp(judged_only=True, p=.9)@10")
    assert m.name == "RBP(p=0.9,judged_only=True)@10"  # declared order, ir_measures' spelling
    assert m == rbp(p=0.9, judged_only=True) @ 10 and m.compute_params == {"p": 0.9} and m.judged_only
    assert str(rbp(p=0.9) @ 10) == "RBP(p=0.9)@10" and (rbp(p=0.9) @ 10).value("p") == 0.9
    for bad, why in (("RBP(p=1)@10", r"p=1.0 is outside \(0.0, 1.0\)"), ("RBP(p=0)@10", "outside"),
                     ("RBP(p=nan)@10", "finite"), ("RBP(p=x)@10", "p must be float, not 'x'"),
                     ("RBP(p=0.5,p=0.6)@10", "each once"), ("RBP(p)@10", "name=value"),
                     ("RBP(judged_only=yes)@10", "must be bool")):
        with pytest.raises(RegistryError, match=why):
            resolve(bad)
    with pytest.raises(RegistryError, match="must be a finite float"):
        rbp(p=float("inf"))


def test_a_family_declares_its_parameters_with_valid_defaults():
    from rulegauge.metrics.family import MetricParam

    with pytest.raises(RegistryError, match="the default of q"):
        declare("x_bad_default", kind="ranking", direction="higher", scope="all", description="x",
                params=(MetricParam("q", float, 2.0, "q", low=0.0, high=1.0),))
    with pytest.raises(RegistryError, match="declared twice"):
        declare("x_twice", kind="ranking", direction="higher", scope="all", description="x",
                params=(MetricParam("q", int, 1, "q"), MetricParam("q", int, 2, "q")))
    assert "x_bad_default" not in METRICS and "x_twice" not in METRICS
