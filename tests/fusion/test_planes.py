"""Dense planes: each arm's lists in rank order round-trip to the planes, and the shared
LRU of per-list work keeps at most its budget, computes each key once, hands out read-only
arrays."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from rulegauge.fusion.fuse import RankMatrix
from rulegauge.fusion.kernel import planes_of
from rulegauge.fusion.planes import Memo
from tests.fusion.test_kernel import ARMS, arm_ranks, cfg


def test_planes_lists_and_spread_round_trip():
    m = RankMatrix.from_arm_ranks(arm_ranks(7, False), [f"q{i:02d}" for i in range(15)], ARMS)
    planes, _ = planes_of(m)
    c = cfg("combsum", (), depths=(5, 20, 1))
    for j in range(3):
        r, s, v = planes.arm(c, j)
        lr, ls, lv = planes.listed(c, j)
        assert (lr[:, 0] == 0).all() and (np.diff(np.where(lv, lr, 10**6)[:, 1:], axis=1) >= 0).all()
        np.testing.assert_array_equal(planes.spread(c, j, lr), r)
        np.testing.assert_array_equal(planes.spread(c, j, ls), s)
        np.testing.assert_array_equal(planes.voted(c, j), v)
        np.testing.assert_array_equal(lv.sum(axis=1), v.sum(axis=1))


def test_lists_keep_duplicate_ranks_apart():
    """Two chunks one arm ranked equally (an imported run) take two list slots."""
    import pandas as pd

    df = pd.DataFrame([("q", "a", "x1", 1, 3.0), ("q", "a", "x2", 1, 2.0), ("q", "a", "x3", 2, 1.0)],
                      columns=["question_id", "arm", "chunk_id", "rank", "score"])
    planes, _ = planes_of(RankMatrix.from_arm_ranks(df, ["q"], ("a",)))
    c = cfg("combsum", (), arms=("a",))
    lr, ls, _ = planes.listed(c, 0)
    assert lr.tolist() == [[0, 1, 1, 2]] and ls.tolist() == [[0.0, 3.0, 2.0, 1.0]]
    np.testing.assert_array_equal(planes.spread(c, 0, ls), planes.arm(c, 0)[1])


def test_memo_is_bounded_read_only_and_computes_a_key_once():
    memo = Memo(budget=3 * 800)  # three arrays of 100 float64
    calls: list[str] = []

    def make(name: str):
        def f():
            calls.append(name)
            time.sleep(0.05)
            return np.zeros(100)
        return f

    threads = [threading.Thread(target=memo.get, args=("a", make("a"))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["a"]  # the other threads waited for the first
    out = memo.get("a", make("a"))
    with pytest.raises(ValueError):
        out[0] = 1.0
    for name in "bcd":
        memo.get(name, make(name))
    assert memo.size <= memo.budget and "a" not in memo.items  # least recently used left first
    memo.get("a", make("a"))
    assert calls.count("a") == 2


def test_fused_scores_are_checked_where_they_enter():
    """A method's fuse must give (Q, U) real numbers, finite wherever an arm of the config voted:
    a wrong shape, a non-array or a NaN on a voted candidate names the method, config and
    question (exit 2 in a run); a NaN where nothing voted is ignored, as the planes say."""
    from rulegauge.fusion.method import FUSION_METHODS, FusionContractError, fused_scores

    m = RankMatrix.from_arm_ranks(arm_ranks(3, False), [f"q{i:02d}" for i in range(15)], ARMS)
    planes, _ = planes_of(m)
    c = cfg("combsum", ())
    real = FUSION_METHODS.get("combsum")
    good = fused_scores(real, planes, c)
    assert good.shape == planes.shape and planes.question(2) == "q02"

    class Gives:
        def __init__(self, out: object) -> None:
            self.out = out

        def fuse(self, planes: object, config: object) -> object:
            return self.out

    votes = planes.votes(c)
    q, u = (int(i[0]) for i in np.nonzero(votes[4:]))
    voted_nan, unvoted_nan = good.copy(), good.copy()
    voted_nan[4 + q, u] = np.nan
    unvoted_nan[~votes] = np.nan
    np.testing.assert_array_equal(fused_scores(Gives(unvoted_nan), planes, c), unvoted_nan)  # type: ignore[arg-type]
    assert fused_scores(Gives(good.astype(np.float32)), planes, c).dtype == np.float64  # type: ignore[arg-type]
    for out, why in ((good[:, :1], rf"fuse returned shape \(15, 1\), not a \(15, {planes.shape[1]}\) array"),
                     (good.tolist(), "fuse returned .* \\(a list\\), not a"),
                     (good.astype(str), "fuse returned .*, not a"),
                     (voted_nan, f"config {c.name}, question q{4 + q:02d}: fused score nan for a candidate an arm "
                                 f"voted for \\(column {u}\\)")):
        head = r"fusion method 'combsum' \(rulegauge.fusion, from builtin\) broke the fusion contract"
        with pytest.raises(FusionContractError, match=f"{head} .*{why}"):
            fused_scores(Gives(out), planes, c)  # type: ignore[arg-type]
