"""``on_unmatched``: keep (the default), error, drop; ``warn`` refused; ids a foreign hit may have."""

from __future__ import annotations

import pytest

from rulegauge.arms.base import ArmContext
from rulegauge.arms.external import ExternalArm
from rulegauge.arms.foreign import UNMATCHED, ForeignCount, apply_rule, bad_foreign_ids, check_unmatched
from rulegauge.arms.http import HttpArm
from rulegauge.arms.results import Hit
from rulegauge.core.errors import ConfigError, ValidationError
from rulegauge.corpus.foreign import MAX_FOREIGN_ID, foreign_id_problem, foreign_page_key
from tests.helpers.common import q

# (id, matches no chunk, score): x1 and x2 are foreign, a..d chunks of the corpus
LIST = [("x1", True, 9.0), ("a", False, 8.0), ("x2", True, 7.0), ("a", False, 6.5), ("b", False, 6.0),
        ("c", False, 5.0), ("d", False, 4.0)]


def test_keep_holds_every_hit_at_its_rank_and_names_the_foreign_ones() -> None:
    got = apply_rule(LIST, 10, "keep")
    assert got.hits == (Hit("x1", 1, 9.0), Hit("a", 2, 8.0), Hit("x2", 3, 7.0), Hit("b", 4, 6.0),
                        Hit("c", 5, 5.0), Hit("d", 6, 4.0))  # the repeated "a" is kept once, at its first place
    assert got.foreign == {"x1", "x2"} and (got.dropped, got.moved) == (0, 0)
    assert apply_rule(LIST, 3, "keep").hits == (Hit("x1", 1, 9.0), Hit("a", 2, 8.0), Hit("x2", 3, 7.0))
    assert apply_rule(LIST, 0, "keep").hits == ()


def test_drop_leaves_them_out_and_counts_every_hit_that_moved_up() -> None:
    got = apply_rule(LIST, 10, "drop")
    assert got.hits == (Hit("a", 1, 8.0), Hit("b", 2, 6.0), Hit("c", 3, 5.0), Hit("d", 4, 4.0))
    assert got.foreign == frozenset() and got.dropped == 2 and got.moved == 4
    # at depth 2: "a" and "b" are kept (both moved up: "b" into the list); "c", "d" are cut
    cut = apply_rule(LIST, 2, "drop")
    assert cut.hits == (Hit("a", 1, 8.0), Hit("b", 2, 6.0)) and (cut.dropped, cut.moved) == (2, 2)
    # nothing above a hit: it did not move
    assert apply_rule([("a", False, 2.0), ("x", True, 1.0)], 5, "drop").moved == 0


def test_a_hit_without_a_score_scores_one_over_its_rank_under_each_rule() -> None:
    items = [("x", True, None), ("a", False, None), ("b", False, None)]
    assert apply_rule(items, 5, "keep").hits == (Hit("x", 1, 1.0), Hit("a", 2, 0.5), Hit("b", 3, 1 / 3))
    assert apply_rule(items, 5, "drop").hits == (Hit("a", 1, 1.0), Hit("b", 2, 0.5))


def test_the_rules_and_warn_refused_with_the_way_out() -> None:
    assert UNMATCHED == ("keep", "error", "drop")
    for rule in UNMATCHED:
        assert check_unmatched(rule, "arm") == rule
    with pytest.raises(ConfigError, match='on_unmatched = "warn" is no longer accepted: it left ids that match no '
                                          'chunk out of the ranked list and moved the hits below them up; use "keep"'):
        check_unmatched("warn", "external arm")
    with pytest.raises(ConfigError, match="must be one of keep, error, drop, got 'ignore'"):
        check_unmatched("ignore", "external arm")


def test_the_arms_default_to_keep_and_refuse_warn(tmp_path) -> None:
    ranked = tmp_path / "r.trec"
    ranked.write_text("q Q0 a#1 1 1.0 t\n")
    assert ExternalArm(str(ranked)).on_unmatched == "keep"
    assert HttpArm(url="http://127.0.0.1:9/s", chunk="id").on_unmatched == "keep"
    with pytest.raises(ConfigError, match='external arm: on_unmatched = "warn" is no longer accepted'):
        ExternalArm(str(ranked), on_unmatched="warn")
    with pytest.raises(ConfigError, match=r'http arm: on_unmatched = "warn" is no longer accepted.*"drop"'):
        HttpArm(url="http://127.0.0.1:9/s", chunk="id", on_unmatched="warn")


def test_ids_a_foreign_hit_may_have() -> None:
    assert foreign_id_problem("other-game#p0003.c001") is None
    assert foreign_page_key("other-game#p0003.c001") == "other-game#p0003.c001#0"
    assert "is empty" in (foreign_id_problem("") or "") and "is empty" in (foreign_id_problem("  ") or "")
    assert f"(at most {MAX_FOREIGN_ID})" in (foreign_id_problem("x" * (MAX_FOREIGN_ID + 1)) or "")
    assert "U+0000" in (foreign_id_problem("a\x00") or "") and "U+200B" in (foreign_id_problem("a\u200bb") or "")
    bad = bad_foreign_ids([("r.trec:3", "ok"), ("r.trec:4", "tab\there")])
    assert [str(p) for p in bad] == ["r.trec:4: id 'tab\\there' holds invisible or control characters "
                                     "(U+0009 control character): it matches no chunk and cannot be kept as a "
                                     "foreign hit"]


def test_what_the_run_says_of_each_rule() -> None:
    keep = ForeignCount("keep")
    for listed in (apply_rule(LIST, 10, "keep"), apply_rule(LIST[1:2], 10, "keep")):
        keep.add(listed)
    assert keep.manifest() == {"foreign_hits": 2, "foreign_questions": 1, "dropped_hits": 0, "moved_up": 0}
    assert keep.warning() == ("2 hit(s) in 1 of 2 questions have ids that match no chunk of the corpus (e.g. "
                              "'x1', 'x2'): kept at their ranks as non-relevant foreign hits; foreign@k says how "
                              "much of the top k they hold (docs/arms.md, Foreign hits)")
    drop = ForeignCount("drop")
    drop.add(apply_rule(LIST, 10, "drop"))
    assert drop.manifest()["moved_up"] == 4
    assert (drop.warning() or "").startswith('on_unmatched = "drop" left out 2 hit(s) in 1 of 1 questions whose '
                                             "ids match no chunk of the corpus, so 4 hit(s) below them moved up")
    assert ForeignCount("keep").warning() is None


def test_the_external_arm_under_each_rule(tiny_corpus, tmp_path) -> None:
    """Rows re-ranked by score (ties by id, a foreign row's id its own), then the rule; a
    foreign id that cannot be one is refused with its file and line only when it is kept."""
    ranked = tmp_path / "r.jsonl"
    rows = [("q1", "elsewhere#9", 3, 9.0), ("q1", "rb#2", 1, 5.0), ("q1", "rb#p0001.c000", 2, 5.0),
            ("q1", "zz\u0007#1", 4, 0.5), ("qx", "rb#1", 1, 1.0)]
    ranked.write_text("".join(f'{{"question_id": "{q}", "page_id": "{i}", "rank": {r}, "score": {s}}}\n'
                              .replace("\u0007", "\\u0007") for q, i, r, s in rows))
    ctx = ArmContext(tmp_path)
    questions = [q("q1", "boat")]

    def search(rule: str, depth: int):  # type: ignore[no-untyped-def]
        arm = ExternalArm(str(ranked), on_unmatched=rule)
        arm.prepare(tiny_corpus, ctx)
        return arm, arm.search(questions, depth)

    arm, (kept,) = search("keep", 3)
    assert kept.hits == (Hit("elsewhere#9", 1, 9.0), Hit("rb#p0001.c000", 2, 5.0), Hit("rb#p0002.c000", 3, 5.0))
    assert kept.foreign == {"elsewhere#9"} and arm.describe()["unmatched_count"] == 3  # 2 ids, 1 question
    with pytest.raises(ValidationError, match=r"r\.jsonl:4: id 'zz\\x07#1' holds invisible or control characters"):
        search("keep", 4)
    arm, (dropped,) = search("drop", 4)
    assert dropped.hits == (Hit("rb#p0001.c000", 1, 5.0), Hit("rb#p0002.c000", 2, 5.0))
    assert arm.describe()["moved_up"] == 2 and "left out 2 hit(s) in 1 of 1 questions" in arm.describe()["warning"]
    with pytest.raises(ValidationError) as info:
        search("error", 4)
    assert [p.where.rsplit(":", 1)[1] for p in info.value.problems] == ["1", "4", "5"]
