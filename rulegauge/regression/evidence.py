"""The "why" of a comparison: how the relevant pages of a question moved, with every arm's rank.

:class:`SideEvidence` reads one side's ``fused`` table (a run's, or a baseline's rows of
relevant pages); :func:`page_moves` pairs two sides' evidence into one :class:`PageMove`
per relevant page, best-ranked first, then one per foreign hit ranked above the relevant
pages on either side (an id an arm read from outside that matches no chunk, kept at its
rank: :mod:`rulegauge.corpus.foreign`; at most :data:`FOREIGN_SHOWN`, best-ranked first), as
the hit that pushed a relevant page down; :func:`evidence_notes` says what a side cannot
show (configs without stored fused rows, lists cut to a depth).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from rulegauge.core.ordering import order
from rulegauge.corpus.foreign import foreign_flags
from rulegauge.corpus.records import page_key, page_keys
from rulegauge.store.baseline import Side

FOREIGN_SHOWN = 3
"""Foreign hits a question's "why" shows (those ranked above its relevant pages, best first)."""
FOREIGN_TOP = 10
"""Where no relevant page was retrieved on a side: the foreign hits within this many pages."""


@dataclass(frozen=True)
class ArmRank:
    """An arm's best rank of a page's chunks before and after (None: not ranked
    within the config's depth, or the arm is not in that side's config)."""

    arm: str
    before: int | None
    after: int | None


@dataclass(frozen=True)
class PageMove:
    """A relevant page's rank in the page list before and after, with every arm's rank.
    None: not retrieved, or unknown when the side has no ``fused`` table. ``foreign``: the
    "page" is a foreign hit (``page`` is then ``foreign <reply id>``; module docstring)."""

    page: str
    before: int | None
    after: int | None
    arms: tuple[ArmRank, ...]
    foreign: bool = False


def parse_requirements(text: str) -> tuple[str, ...]:
    """Page ids listed in a ``questions.requirements`` JSON cell (list of lists)."""
    return tuple(dict.fromkeys(str(p) for req in json.loads(text) for p in req))


def relevant_pages(base: Side, candidate: Side) -> dict[str, tuple[str, ...]]:
    """Question id -> relevant page ids, from the base's ``questions`` table (else the
    candidate's), else from the ``relevant`` rows of the ``fused`` tables."""
    for side in (base, candidate):
        if side.has_table("questions"):
            q = side.table("questions")
            return {str(i): parse_requirements(r)
                    for i, r in zip(q["question_id"], q["requirements"], strict=True)}
    out: dict[str, dict[str, None]] = {}
    for side in (base, candidate):
        if side.has_table("fused"):
            f = side.table("fused")
            f = f[f["relevant"].astype(bool)]
            for qid, doc, page in zip(f["question_id"], f["doc_id"], f["page"], strict=True):
                out.setdefault(str(qid), {})[page_key(str(doc), int(page))] = None
    return {q: tuple(sorted(p)) for q, p in out.items()}


class SideEvidence:
    """Page ranks and per-arm ranks from one side's ``fused`` table, per (question, config)."""

    def __init__(self, side: Side, config_ids: set[str]) -> None:
        self.available = side.has_table("fused")
        self.arms: tuple[str, ...] = ()
        self._fused = pd.DataFrame()
        self._rows: dict[tuple[str, str], npt.NDArray[np.intp]] = {}  # (question, config) -> row positions in _fused
        self.label = side.run_id
        self.wanted = frozenset(config_ids)
        self.stored: frozenset[str] = frozenset()
        # fused rows cut to a depth per question (rulegauge run --fused-depth); 0 = whole lists
        self.depth = int((side.manifest.get("fused_rows") or {}).get("depth", 0) or 0)
        if self.available:
            f = side.table("fused")
            f = f[f["config_id"].isin(config_ids)]
            self.stored = frozenset(str(c) for c in f["config_id"].unique())
            self.arms = tuple(c[len("rank_"):] for c in f.columns if c.startswith("rank_"))
            f = f.assign(page_id=page_keys(f["doc_id"].astype(str), f["page"]), is_foreign=foreign_flags(f))
            # positions only: a (question, config) group is cut from the frame when asked for
            # (the changes of a comparison ask for few of them; a 200-config grid has ~12,000)
            self._fused = f
            groups: dict[Any, Any] = f.groupby(["question_id", "config_id"], sort=False).indices
            self._rows = {(str(k[0]), str(k[1])): np.asarray(rows) for k, rows in groups.items()}

    def _group(self, question_id: str, config_id: str) -> pd.DataFrame | None:
        rows = self._rows.get((question_id, config_id))
        return None if rows is None else self._fused.iloc[rows]

    def ranks(self, question_id: str, config_id: str
              ) -> tuple[dict[str, tuple[int, dict[str, int]]], set[str]]:
        """(page id -> (page rank, {arm: best rank of the page's chunks}), arms that
        ranked any chunk of the question); arms that did not rank a page are absent."""
        g = self._group(question_id, config_id)
        if g is None:
            return {}, set()
        voting = {a for a in self.arms if g[f"rank_{a}"].notna().any()}
        out = {}
        # each page's best ranks in one aggregation (a frame per page was most of a report's time)
        best = g.groupby("page_id", sort=False)[["page_rank", *(f"rank_{a}" for a in self.arms)]].min()
        for pid, (page_rank, *by_arm) in zip(best.index, best.itertuples(index=False, name=None), strict=True):
            out[str(pid)] = (int(page_rank), {a: int(v) for a, v in zip(self.arms, by_arm, strict=True)
                                              if pd.notna(v)})
        return out, voting

    def foreign(self, question_id: str, config_id: str) -> dict[str, tuple[int, dict[str, int]]]:
        """Reply id -> (page rank, {arm: rank}) of the question's foreign hits in the config."""
        g = self._group(question_id, config_id)
        if g is None or not g["is_foreign"].any():
            return {}
        g = g[g["is_foreign"]]
        return {str(r["chunk_id"]): (int(r["page_rank"]), {a: int(r[f"rank_{a}"]) for a in self.arms
                                                            if pd.notna(r[f"rank_{a}"])})
                for _, r in g.iterrows()}


def evidence_notes(ev: SideEvidence) -> list[str]:
    """What the "why" of a comparison cannot show on one side: configs scored without
    stored fused rows (their pages show as not retrieved) and lists cut to a depth."""
    out = []
    missing = sorted(ev.wanted - ev.stored)
    if missing:
        out.append(f"{ev.label}: no fused rows stored for {', '.join(missing)}, so the why of its changes "
                   f"shows no page ranks (store them: rulegauge run --from {ev.label} -c GRID "
                   f"--fused-config ID)")
    if ev.depth > 0 and ev.stored:
        out.append(f"{ev.label}: fused rows stored to depth {ev.depth} per question: a page ranked "
                   f"deeper shows as not retrieved")
    return out


def page_moves(question_id: str, pages: Sequence[str], base: SideEvidence, base_config: str,
               candidate: SideEvidence, candidate_config: str,
               renamed: Mapping[str, str] | None = None) -> tuple[PageMove, ...]:
    """Every listed page's move, best-ranked first (by the better of before/after; never
    retrieved last), ties by page id. Arms shown: those that ranked any chunk of the
    question on either side (a baseline keeps relevant rows only, so there: any relevant page).
    ``renamed``: the base's page id -> the candidate's, where a migrated gold set carried
    the label to another page (shown ``old -> new``)."""
    rb, vb = base.ranks(question_id, base_config)
    rc, vc = candidate.ranks(question_id, candidate_config)
    voting = vb | vc
    arm_names = [a for a in dict.fromkeys(base.arms + candidate.arms) if a in voting]
    moves = []
    for pid in pages:
        new = (renamed or {}).get(pid, pid)
        b, c = rb.get(pid), rc.get(new)
        arms = tuple(ArmRank(a, b[1].get(a) if b else None, c[1].get(a) if c else None)
                     for a in arm_names)
        moves.append(PageMove(pid if new == pid else f"{pid} -> {new}", b[0] if b else None,
                              c[0] if c else None, arms))
    best = [min([r for r in (m.before, m.after) if r is not None], default=np.nan) for m in moves]
    shown = tuple(moves[i] for i in order(-np.asarray(best, float), [m.page for m in moves]))
    return shown + foreign_moves(question_id, shown, base, base_config, candidate, candidate_config, arm_names)


def foreign_moves(question_id: str, pages: Sequence[PageMove], base: SideEvidence, base_config: str,
                  candidate: SideEvidence, candidate_config: str, arm_names: Sequence[str]) -> tuple[PageMove, ...]:
    """The foreign hits ranked above the question's relevant ``pages`` on either side (within
    :data:`FOREIGN_TOP` pages where a side retrieved none), best-ranked first, at most
    :data:`FOREIGN_SHOWN` (module docstring)."""
    fb = base.foreign(question_id, base_config)
    fc = candidate.foreign(question_id, candidate_config)
    if not fb and not fc:
        return ()
    limit_b = min([m.before for m in pages if m.before is not None], default=FOREIGN_TOP + 1)
    limit_c = min([m.after for m in pages if m.after is not None], default=FOREIGN_TOP + 1)
    above = sorted({i for i, (r, _) in fb.items() if r < limit_b} | {i for i, (r, _) in fc.items() if r < limit_c})
    moves = []
    for rid in above:
        b, c = fb.get(rid), fc.get(rid)
        arms = tuple(ArmRank(a, b[1].get(a) if b else None, c[1].get(a) if c else None) for a in arm_names)
        moves.append(PageMove(f"foreign {rid}", b[0] if b else None, c[0] if c else None, arms, foreign=True))
    best = [min([r for r in (m.before, m.after) if r is not None], default=np.nan) for m in moves]
    return tuple(moves[i] for i in order(-np.asarray(best, float), [m.page for m in moves])[:FOREIGN_SHOWN])
