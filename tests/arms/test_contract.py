"""The arm contract: every way a result can break it is named, with the question."""

import numpy as np
import pytest

from rulegauge.arms.contract import ArmContractError, check_results, order_rule, result_problems
from rulegauge.arms.results import ArmResult, Hit, HitColumns
from rulegauge.corpus.chunk_columns import ChunkColumns

IDS = np.array(["c1", "c2", "c3", "c4"], dtype=object)
CHUNKS = ChunkColumns(IDS, np.array(["d"] * 4, dtype=object), np.arange(1, 5, dtype=np.int32))


def _r(*hits: tuple[str, int, float], q: str = "q1") -> ArmResult:
    return ArmResult(q, "a", tuple(Hit(c, r, s) for c, r, s in hits))


@pytest.mark.parametrize(("result", "rule", "why"), [
    (_r(("c1", 0, 3.0), ("c2", 1, 2.0)), "score", "hit 1 has rank 0"),
    (_r(("c1", 1, 3.0), ("c2", 3, 2.0)), "score", "hit 2 has rank 3"),
    (_r(("c1", 1, 3.0), ("c1", 2, 2.0)), "score", "'c1' is ranked more than once"),
    (_r(("c1", 1, 3.0), ("zz", 2, 2.0)), "score", "not in the corpus: 'zz'"),
    (_r(("c1", 1, float("nan"))), "score", "not finite"),
    (_r(("c1", 1, 1.0), ("c2", 2, 2.0)), "score", "breaks the order rule 'score'"),
    (_r(("c2", 1, 1.0), ("c1", 2, 1.0)), "score", "breaks the order rule 'score'"),  # a tie not by id
    (_r(("c1", 1, 1.0), ("c2", 2, 1.0), ("c3", 3, 1.0), ("c4", 4, 1.0)), "score", "more than the depth asked (3)"),
    (_r(("c1", 2, 1.0), ("c2", 1, 1.0)), "observed", "never go down"),
    (_r(("c1", 0, 1.0)), "observed", "hit 1 has rank 0"),
    (_r(("c1", -1, 1.0)), "observed", "hit 1 has rank -1"),
    (_r(("c1", 1, "high")), "score", "hit 1 has score 'high' (a str), not a number"),  # type: ignore[arg-type]
    (_r(("c1", 1, True)), "given", "hit 1 has score True (a bool), not a number"),  # type: ignore[arg-type]
    (_r(("c1", "1", 1.0)), "score", "hit 1 has rank '1' (a str), not an integer"),  # type: ignore[arg-type]
    (_r((3, 1, 1.0)), "score", "hit 1 has chunk id 3 (an int), not a str"),  # type: ignore[arg-type]
    (ArmResult("q1", "a", (("c1", 1, 1.0),)), "score", "hit 1 is ('c1', 1, 1.0) (a tuple), not a Hit"),  # type: ignore[arg-type]
    (ArmResult("q1", "a", "c1"), "score", "hits are 'c1' (a str), not a tuple of Hit"),  # type: ignore[arg-type]
    (ArmResult("q1", "a", HitColumns(CHUNKS, np.array([0, 1]), np.array([1], np.int32), np.array([2.0, 1.0]))),
     "score", "HitColumns of 2 rows, 1 ranks and 2 scores"),
    (ArmResult("q1", "a", HitColumns(CHUNKS, np.array([0]), np.array([1.0]), np.array([2.0]))),
     "score", "rows and ranks must be integers, scores real"),
    ({"question_id": "q1"}, "score", "a result is {'question_id': 'q1'} (a dict), not an ArmResult"),
])
def test_each_broken_result_is_named(result, rule, why):
    problems = result_problems(result, CHUNKS, 3, rule)
    assert any(why in p for p in problems), problems


@pytest.mark.parametrize(("result", "rule"), [
    (_r(("c2", 1, 2.0), ("c1", 2, 1.0), ("c3", 3, 1.0)), "score"),
    (_r(("c2", 1, 1.0), ("c1", 2, 2.0)), "given"),  # the source's order, scores informational
    (_r(("c2", 1, 1.0), ("c1", 3, 2.0), ("c3", 3, 0.5)), "observed"),  # gaps and ties of observed ranks
    (_r(), "score"),
    (ArmResult("q1", "a", HitColumns(CHUNKS, np.array([3, 0]), np.array([1, 2], np.int32), np.array([2.0, 1.0]))),
     "score"),
])
def test_results_that_keep_the_contract_pass(result, rule):
    assert result_problems(result, CHUNKS, 3, rule) == []


def test_check_results_names_the_arm_and_the_question_and_extra_results():
    good, bad = _r(("c1", 1, 1.0)), _r(("c1", 0, 1.0), q="q2")
    check_results("a", [good], ["q1", "q2"], CHUNKS, 5)
    with pytest.raises(ArmContractError, match=r"arm mine broke the arm contract .*question q2: ranks must be 1..1"):
        check_results("mine", [good, bad], ["q1", "q2"], CHUNKS, 5)
    with pytest.raises(ArmContractError, match="question q9: a result for a question the arm was not asked"):
        check_results("mine", [_r(q="q9")], ["q1"], CHUNKS, 5)
    with pytest.raises(ArmContractError, match="question q1: a second result"):
        check_results("mine", [good, good], ["q1"], CHUNKS, 5)
    with pytest.raises(ArmContractError, match=r"arm mine broke the arm contract \(docs/plugins.md\): search returned "
                       r"None \(a NoneType\), not a list of ArmResult$"):
        check_results("mine", None, ["q1"], CHUNKS, 5)  # type: ignore[arg-type]
    with pytest.raises(ArmContractError, match=r"contract \(docs/plugins.md\): a result is 7 \(an int\)"):
        check_results("mine", [good, 7], ["q1"], CHUNKS, 5)  # type: ignore[list-item]


def test_order_rule_is_declared_or_score():
    class Plain:
        pass

    class Odd:
        order_rule = "random"

    assert order_rule(Plain()) == "score"
    with pytest.raises(ArmContractError, match="order_rule 'random'"):
        order_rule(Odd())


def _foreign(*hits: tuple[str, int, float], foreign: frozenset[str] = frozenset(), q: str = "q1") -> ArmResult:
    return ArmResult(q, "a", tuple(Hit(c, r, s) for c, r, s in hits), foreign=foreign)


def test_declared_foreign_hits_keep_the_contract_over_the_columns_they_extend():
    """A foreign hit (an id matching no chunk, declared in ``ArmResult.foreign``) is read over
    the corpus columns with a row per foreign id (ChunkColumns.with_foreign); ties by id."""
    ok = _foreign(("zz#9", 1, 3.0), ("c1", 2, 2.0), ("a-other", 3, 2.0), foreign=frozenset({"zz#9", "a-other"}))
    over = CHUNKS.with_foreign(["zz#9", "a-other"])
    assert over.n_corpus == 4 and len(over) == 6 and over.base is CHUNKS and CHUNKS.with_foreign([]) is CHUNKS
    assert over.pages[4:].tolist() == [0, 0] and over.doc_ids[4:].tolist() == ["zz#9", "a-other"]
    assert result_problems(ok, over, 5, "given") == []
    # a tie at 2.0 where 'a-other' sorts before 'c1'
    assert any("breaks the order rule 'score'" in p for p in result_problems(ok, over, 5, "score"))
    cols = ArmResult("q1", "a", HitColumns(CHUNKS, np.array([3, 0]), np.array([1, 2], np.int32), np.array([2.0, 1.0])))
    assert result_problems(cols, over, 3, "score") == []  # columns over the corpus read over its extension


@pytest.mark.parametrize(("result", "why"), [
    (_foreign(("zz#9", 1, 3.0)), "chunk ids not in the corpus: 'zz#9'"),  # not declared: not even read over
    (_foreign(("c1", 1, 3.0), foreign=frozenset({"c1"})), "declares foreign the chunk id(s) 'c1' of the corpus"),
    (_foreign(("", 1, 3.0), foreign=frozenset({""})), "id '' is empty"),
    (_foreign(("a\tb", 1, 3.0), foreign=frozenset({"a\tb"})), "holds invisible or control characters (U+0009"),
    (ArmResult("q1", "a", (), foreign={"zz"}), "foreign is {'zz'} (a set), not a frozenset of ids"),  # type: ignore[arg-type]
])
def test_each_broken_foreign_declaration_is_named(result, why):
    over = CHUNKS.with_foreign(["", "a\tb", "zz"])
    problems = result_problems(result, over, 3, "given")
    assert any(why in p for p in problems), problems


def test_a_foreign_row_another_result_declared_is_not_this_ones():
    over = CHUNKS.with_foreign(["zz#9"])
    problems = result_problems(_foreign(("zz#9", 1, 1.0)), over, 3, "given")
    assert problems == ["chunk ids not in the corpus: 'zz#9' (declare them in ArmResult.foreign to keep them "
                        "as foreign hits)"]
