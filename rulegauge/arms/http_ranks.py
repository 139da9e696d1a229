"""The ``http-ranks`` arm: an ``http`` arm's per-arm ranks, as an arm of their own.

A live service fuses its own arms and shows the fused list; this arm turns what
the reply says about each hit's per-arm ranks into a ranked list, so the fusion
grid, bands and compare's "why" work on the service's own arms. It reads the
replies of the ``http`` arm named by ``of`` (same requests, same journal: each
question is asked once however many ``http-ranks`` arms read it; ``request_depth``
must then equal that arm's depth, which it does by default), two ways:

* ``disclosed = "bm25"``: the rank the reply gives under that name in each hit's
  ``arm_ranks`` object (a service's debug mode);
* ``decoded = n``: the rank recovered from the hit's fused score
  (:func:`rulegauge.arms.rrf_decode.decode_score` with ``k``, ``arms``, optional
  ``weights``, ``decimals`` the score is rounded to, half up, and ``depth``). With equal
  weights the arms are interchangeable, so ``decoded = n`` is the n-th smallest of the
  hit's ranks (1 = the best arm's vote); with unequal weights it is the n-th arm of
  ``weights``. A hit whose remaining candidates disagree on that rank is left out
  and counted as ambiguous, with its candidate count, in the manifest.

Ranks are kept as decoded or disclosed (never renumbered: a hit the fused list
dropped leaves a gap); only ranks up to the search depth are kept. A hit whose id matches no
chunk follows the ``http`` arm's ``on_unmatched`` rule: kept at its rank as a foreign hit
(``keep``, :mod:`rulegauge.arms.foreign`), or left out (``drop``: a gap, nothing moves up). The manifest
entry says ``decoded`` or ``disclosed`` and counts hits, unique decodes, ambiguous
hits (first 100 listed with their candidate counts) and scores without candidates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, ClassVar

from rulegauge.arms.base import ARMS, ArmContext, make_arm
from rulegauge.arms.http import HttpArm
from rulegauge.arms.http_reply import ReplyError, ReplyHit
from rulegauge.arms.results import ArmResult, Hit
from rulegauge.arms.rrf_decode import Decoding, decode_score
from rulegauge.core.errors import ConfigError
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question


@dataclass
class HttpRanksArm:
    """Per-arm ranks of an ``http`` arm's hits (module docstring)."""

    name: ClassVar[str] = "http-ranks"
    order_rule: ClassVar[str] = "observed"  # per-arm ranks seen in a fused list: gaps, ties (arms/contract)
    of: str = ""
    disclosed: str | None = None
    decoded: int | None = None
    k: float = 60.0
    arms: int = 3
    weights: list[float] | None = None
    decimals: int = 6
    depth: int = 100
    request_depth: int | None = None
    _parent: HttpArm | None = field(default=None, init=False, repr=False)
    stats: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        p = []
        if not self.of:
            p.append('name the http arm whose replies it reads: of = "live"')
        if (self.disclosed is None) == (self.decoded is None):
            p.append('give exactly one of disclosed = "<arm name in the reply>" or decoded = <n>')
        if self.decoded is not None and not 1 <= self.decoded <= self.arms:
            p.append(f"decoded must be within 1..arms ({self.arms}), got {self.decoded}")
        if self.weights is not None and len(self.weights) != self.arms:
            p.append(f"weights has {len(self.weights)} entries for arms = {self.arms}")
        if not 0 <= self.decimals <= 15 or self.depth < 1 or self.arms < 1:
            p.append("decimals must be within 0..15, depth and arms >= 1")
        if p:
            raise ConfigError("http-ranks arm: " + "; ".join(p))

    def _source(self, context: ArmContext) -> HttpArm:
        params = context.arm_params.get(self.of)
        if params is None or params.get("kind") != "http":
            http_arms = [a for a, v in context.arm_params.items() if v.get("kind") == "http"]
            raise ConfigError(f"http-ranks arm: of = {self.of!r} names no http arm of the config "
                              f"(its http arms: {', '.join(http_arms) or 'none'})")
        parent = make_arm(self.of, params)
        if not isinstance(parent, HttpArm):
            raise ConfigError(f"http-ranks arm: arm {self.of} is not an http arm")
        needs = "arm_ranks" if self.disclosed is not None else "score"
        if getattr(parent, needs) is None:
            raise ConfigError(f"http-ranks arm: arm {self.of} reads no {needs} field from its "
                              f"replies; set {needs} = \"...\" there")
        return parent

    def preflight(self, corpus: Corpus, questions: Sequence[Question],
                  context: ArmContext) -> str | None:
        parent = self._source(context)
        return parent.preflight(corpus, questions, replace(context, name=self.of))

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        self._parent = self._source(context)
        self._parent.prepare(corpus, replace(context, name=self.of))

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        if self._parent is None:
            raise RuntimeError("http-ranks arm: prepare() must run before search()")
        parent = self._parent
        asked = self.request_depth or depth
        parent.search(questions, asked)  # the parent's checks: error rate, unmatched ids, empty
        records = parent.replies(questions, asked)  # now all journaled: nothing is asked
        memo: dict[float, Decoding] = {}
        self.stats = {"source": self.of, "mode": "disclosed" if self.disclosed else "decoded",
                      "hits": 0, "ranked": 0, "unique": 0, "ambiguous": 0, "no_candidates": 0,
                      "ambiguous_hits": []}
        out = []
        for q in questions:
            try:
                hits = parent.hits_of(records[q.question_id])
            except ReplyError as exc:
                out.append(ArmResult(q.question_id, self.name, (), f"call failed: {exc}"))
                continue
            keep = parent.on_unmatched == "keep"
            ranked = self._ranks(q.question_id, _first(hits, keep=keep), depth, memo)
            ranked.sort(key=lambda cr: cr[1])  # stable: equal ranks keep the reply's order
            foreign = frozenset(c for c, _ in ranked) & frozenset(h.reply_id for h in hits if h.chunk_id is None)
            out.append(ArmResult(q.question_id, self.name, tuple(Hit(c, r, 1.0 / r) for c, r in ranked),
                                 None if ranked else f"no hit carries a {self.stats['mode']} rank", foreign))
        return out

    def _ranks(self, qid: str, hits: list[ReplyHit], depth: int,
               memo: dict[float, Decoding]) -> list[tuple[str, int]]:
        out = []
        for h in hits:
            self.stats["hits"] += 1
            rank = h.arm_ranks.get(self.disclosed) if self.disclosed is not None else \
                self._decoded(qid, h, memo)
            if rank is not None and rank <= depth:
                out.append((h.chunk_id if h.chunk_id is not None else h.reply_id, rank))
                self.stats["ranked"] += 1
        return out

    def _decoded(self, qid: str, h: ReplyHit, memo: dict[float, Decoding]) -> int | None:
        if h.score is None or self.decoded is None:
            return None
        d = memo.get(h.score)
        if d is None:
            printed = Decimal(repr(h.score)).quantize(Decimal(1).scaleb(-self.decimals), ROUND_HALF_UP)
            d = memo[h.score] = decode_score(str(printed), k=self.k, arms=self.arms, depth=self.depth,
                                             decimals=self.decimals, weights=self.weights)
        if not d.candidates:
            self.stats["no_candidates"] += 1
            return None
        values = {c[self.decoded - 1] for c in d.candidates}
        if len(d.candidates) == 1:
            self.stats["unique"] += 1
        if len(values) > 1:
            self.stats["ambiguous"] += 1
            if len(self.stats["ambiguous_hits"]) < 100:
                self.stats["ambiguous_hits"].append({"question_id": qid, "chunk_id": h.chunk_id or h.reply_id,
                                                     "candidates": len(d.candidates)})
            return None
        return values.pop()

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "of": self.of, "disclosed": self.disclosed, "decoded": self.decoded,
                "k": self.k, "arms": self.arms, "weights": self.weights, "decimals": self.decimals,
                "decode_depth": self.depth, **self.stats}

    def close(self) -> None:
        self._parent = None


def _first(hits: Sequence[ReplyHit], *, keep: bool) -> list[ReplyHit]:
    """The first occurrence of each chunk (as the ``http`` arm ranks them): matched hits, and
    with ``keep`` the unmatched ones too, each under its reply id."""
    seen: set[str] = set()
    out = []
    for h in hits:
        key = h.chunk_id if h.chunk_id is not None else (h.reply_id if keep else None)
        if key is not None and key not in seen:
            seen.add(key)
            out.append(h)
    return out


ARMS.add("http-ranks", HttpRanksArm)
