"""Per-arm rank decoding of rounded fused RRF scores (rulegauge.arms.rrf_decode, .joint)."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from typer.testing import CliRunner

from rulegauge.arms.rrf_decode import decode_score
from rulegauge.arms.rrf_rounding import fused_value, parse_score, rounds_to
from rulegauge.cli.rulings import register
from rulegauge.rulings.joint import ScoredRow, decode_ranking
from tests.helpers.common import typer_app


def p6(x: float) -> str:
    """Print a score the way production does: 6 decimals."""
    return f"{x:.6f}"


def brute_force(score: str, k: int, arms: int, depth: int, rounding: str = "half_up") -> set:
    """Every sorted tuple of ranks 1..depth or None (all-None excluded) that rounds to score."""
    found = set()
    values = [*range(1, depth + 1), None]
    for combo in itertools.combinations_with_replacement(values, arms):
        if all(r is None for r in combo):
            continue
        v = sum((Fraction(1, k + r) for r in combo if r is not None), Fraction(0))
        if rounds_to(v, score, 6, rounding):
            found.add(tuple(sorted(combo, key=lambda r: float("inf") if r is None else r)))
    return found


def test_two_firsts_and_a_second_print_as_0_048916():
    assert p6(1 / 61 + 1 / 61 + 1 / 62) == "0.048916"
    d = decode_score(0.048916)
    assert d.candidates == ((1, 1, 2),)
    assert d.unique and not d.flags
    assert d.ceiling == pytest.approx(3 / (60 + 1))


@pytest.mark.parametrize("ranks", [(1, 3, 3), (2, 2, 8), (5, 5, 6), (3, 7, 7), (1, 1, 1)])
def test_top_scores_of_a_three_arm_list_decode_uniquely(ranks):
    score = p6(sum(1 / (60 + r) for r in ranks))
    assert decode_score(score).candidates == (ranks,)


def test_every_candidate_reproduces_the_score_and_matches_brute_force():
    for score in ("0.03125", "0.030303", "0.029412", p6(1 / 64), p6(1 / 70 + 1 / 75)):
        d = decode_score(score, depth=40)
        assert set(d.candidates) == brute_force(score, 60, 3, 40)
        assert all(rounds_to(fused_value(c), score) for c in d.candidates)


def test_random_rank_tuples_are_always_recovered():
    def draw(seed: int) -> list[tuple]:
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(40):
            ranks = [int(r) for r in rng.integers(1, 60, size=3)]
            ranks[2] = None if rng.random() < 0.3 else ranks[2]
            out.append(tuple(sorted(ranks, key=lambda r: float("inf") if r is None else r)))
        return out

    tuples = draw(7)
    assert tuples == draw(7)
    for t in tuples:
        assert t in decode_score(p6(float(fused_value(t))), depth=60).candidates


def test_carried_by_size_narrows_to_one_tuple():
    d = decode_score(p6(1 / 68 + 1 / 68))
    assert len(d.candidates) > 1
    assert d.with_voters(2) == ((8, 8, None),)
    assert (42, 42, 42) in d.candidates  # 3/102 == 2/68 exactly: only carried-by can tell


def test_rounding_rules_differ_only_on_midpoints():
    assert Fraction(1, 60 + 68) == Fraction("0.0078125")  # a midpoint at the 7th decimal
    up = decode_score("0.007813", arms=1, rounding="half_up")
    even = decode_score("0.007812", arms=1, rounding="half_even")
    assert up.candidates == even.candidates == ((68,),)
    assert up.tie and even.tie
    assert decode_score("0.007812", arms=1, rounding="half_up").candidates == ()
    assert decode_score("0.007813", arms=1, rounding="half_even").candidates == ()
    assert decode_score("0.048916", rounding="half_even").candidates == ((1, 1, 2),)


def test_above_the_ceiling_is_flagged_impossible():
    d = decode_score(p6(3 / 61 + 1e-6))
    assert d.above_ceiling and d.impossible and d.candidates == ()
    two = decode_score("0.04", arms=2)
    assert two.above_ceiling and two.impossible
    assert decode_score(p6(2 / 61), arms=2).candidates == ((1, 1),)


def test_a_gap_between_two_ranks_is_impossible_at_any_depth():
    assert p6(1 / 62) < "0.016300" < p6(1 / 61)
    d = decode_score("0.0163", arms=1)
    assert d.impossible and not d.beyond_depth and d.candidates == ()


def test_non_positive_and_beyond_depth_flags():
    assert "non_positive" in decode_score(0.0).flags
    shallow = decode_score("0.03125", depth=100)
    deep = decode_score("0.03125", depth=1000)
    assert shallow.beyond_depth
    assert set(shallow.candidates) < set(deep.candidates)
    assert (1, 49, 116) in deep.candidates  # 1/61 + 1/109 + 1/176 rounds to 0.031250
    assert p6(1 / 61 + 1 / 109 + 1 / 176) == "0.031250"


def test_unequal_weights_give_ordered_tuples():
    score = p6(1 / (60 + 3) + 0.5 / (60 + 7))
    d = decode_score(score, arms=2, weights=[1, 0.5])
    assert d.ordered
    assert (3, 7) in d.candidates
    assert all(rounds_to(fused_value(c, 60, [1, 0.5]), score) for c in d.candidates)
    assert d.ceiling == pytest.approx(1 / 61 + 0.5 / 61)


def test_candidate_limit_stops_the_search():
    d = decode_score("0.01", depth=300, max_candidates=5)
    assert len(d.candidates) == 5 and "candidate_limit" in d.flags


@pytest.mark.parametrize("kwargs, message", [
    ({"arms": 0}, "arms"), ({"depth": 0}, "depth"), ({"weights": [1, 1]}, "weights"),
    ({"k": -1}, "k must"), ({"max_candidates": 0}, "max_candidates")])
def test_bad_arguments_raise(kwargs, message):
    with pytest.raises(ValueError, match=message):
        decode_score("0.03", **kwargs)


def test_scores_with_too_many_decimals_or_no_number_raise():
    with pytest.raises(ValueError, match="more than 6 decimals"):
        decode_score(1 / 61)
    with pytest.raises(ValueError, match="not a number"):
        parse_score("abc", 6)
    assert parse_score(0.048916, 6) == Fraction(48916, 10**6)


def test_unknown_rounding_lists_the_choices():
    with pytest.raises(KeyError, match="half_up, half_even"):
        decode_score("0.03", rounding="banker")


def scores_of(*tuples: tuple) -> list[float]:
    return [float(p6(float(fused_value(t)))) for t in tuples]


def test_ranking_uses_carried_by_and_one_rank_per_arm():
    truth = [(1, 1, 2), (1, 3, 3), (2, 2, 8), (5, 5, 6), (3, 7, 7), (4, 4, None),
             (5, 9, None), (8, 8, None)]
    voters = [3, 3, 3, 3, 3, None, 2, 2]
    rows = [ScoredRow(i + 1, s, v) for i, (s, v) in enumerate(zip(scores_of(*truth), voters,
                                                                  strict=True))]
    out = decode_ranking(rows)
    assert [r.ranks for r in out[:5]] == truth[:5]
    assert [r.ranks for r in out[6:]] == truth[6:]
    row6 = out[5]
    assert row6.ranks is None and (4, 4, None) in row6.consistent
    assert len(row6.consistent) < len(row6.decoding.candidates)  # ranks 1-3 are all used up
    assert all(1 not in c for c in row6.consistent)


def test_ranking_flags_mismatch_conflict_and_order():
    s = scores_of((1, 1, 1), (2, 2, 2))
    out = decode_ranking([ScoredRow(1, s[1]), ScoredRow(2, s[0], 1)])
    assert "order_violation" in out[1].flags
    assert "carried_by_mismatch" in out[1].flags  # 3/61 needs three voters
    twice = decode_ranking([ScoredRow(1, s[0]), ScoredRow(2, s[0])], depth=5)
    assert twice[0].ranks == twice[1].ranks == (1, 1, 1)  # unique each, yet they collide
    assert all("rank_conflict" in r.flags for r in twice)
    fine = decode_ranking([ScoredRow(1, s[0]), ScoredRow(2, s[1])])
    assert not any(r.flags for r in fine)


@pytest.fixture
def cli():
    return typer_app(register)


def test_cli_decode_prints_the_candidates(cli):
    res = CliRunner().invoke(cli, ["rulings", "decode", "0.048916", "--k", "60", "--arms", "3"])
    assert res.exit_code == 0, res.output
    assert "(1, 1, 2)" in res.output and "unique" in res.output
    res = CliRunner().invoke(cli, ["rulings", "decode", p6(2 / 68), "--carried-by", "2"])
    assert res.exit_code == 0 and "(8, 8, -)" in res.output


@pytest.mark.parametrize("args", [["abc"], ["0.03", "--arms", "0"], ["0.03", "--rounding", "x"],
                                  ["0.0312345"], ["0.03", "--weights", "1,a,1"]])
def test_cli_decode_bad_input_exits_2(cli, args):
    res = CliRunner().invoke(cli, ["rulings", "decode", *args])
    assert res.exit_code == 2, res.output
