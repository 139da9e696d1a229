"""The ``extractive`` answerer: deterministic, model-free baseline (what CI uses).

It splits the read passages into sentences, scores each sentence against the
question and outputs the best ones (at most ``max_sentences``) with their
passage's ``[n]`` marker; below ``threshold`` it abstains.

Definition
----------
Question terms ``Q`` are the distinct tokens of the question
(:class:`rulegauge.core.text.Tokenizer`, Snowball-stemmed in the question's language
when ``stem`` is on) minus a question-word stop list for that language. Every
sentence with at least ``min_tokens`` tokens is a candidate; over the ``N``
candidates of this read, ``df(t)`` counts the sentences containing ``t`` and
``idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))`` (the BM25 idf, always
positive; a term no sentence has gets the largest weight). A sentence ``S``
scores the share of the question's idf mass it covers::

    score(S) = sum(idf(t) for t in Q & S) / sum(idf(t) for t in Q)     in [0, 1]

Edge cases and conventions
--------------------------
* Candidates are ranked by score descending, ties by (passage ``n``, sentence
  index) through :func:`rulegauge.core.ordering.order`; a sentence whose folded text
  equals a better-ranked one (overlapping chunks) is skipped.
* Sentences scoring ``>= threshold`` are output, best first, one per line,
  each followed by `` [n]``. If the best score is below ``threshold`` (or the
  question has no content words, or there are no passages) the reply is
  ``ABSTAIN: <reason>`` and the outcome ``abstained``.
* Sentences: paragraphs split at blank lines, line breaks inside a paragraph
  joined, then split after ``. ! ? ؟ …`` and before bullets.
* Tokens are Unicode-aware, so Russian or Persian passages work; a question in
  another language than the passages shares almost no terms with them and
  mostly abstains (there is no translation).

Reference: idf-weighted term overlap for sentence selection, as in the
sliding-window baseline of Richardson et al., "MCTest", EMNLP 2013, and the
BM25 idf of Robertson & Zaragoza, "The Probabilistic Relevance Framework", 2009.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass
from typing import Any, ClassVar

from rulegauge.answering.answerers.base import ANSWERERS
from rulegauge.answering.prompt import abstention
from rulegauge.answering.requests import AnswerRequest, AnswerResponse, Passage
from rulegauge.core.errors import ConfigError
from rulegauge.core.ordering import order
from rulegauge.core.text import Tokenizer, fold

MODEL_ID = "extractive-v1"

_QUESTION_WORDS: dict[str, str] = {
    "en": "what which who whom whose when where why how is are was were be been being do does "
          "did can could may might must shall should will would a an the of to in on at for "
          "with by from and or if it its i you my your me we our us they their them he she his "
          "her this that these those there any many much about as into than then so get gets",
    "ru": "что чем чего как какой какая какое какие каких каким кто кого кому когда где куда "
          "почему зачем сколько ли и в во на с со к ко по за из у о об от а но или если это "
          "этот эта эти то же бы не при до для был была были есть можно нужно ли",
    "de": "was wie wer wem wen wann wo warum welche welcher welches welchen wieviel viele "
          "der die das den dem des ein eine einen einem einer ist sind kann können darf "
          "dürfen ab und oder zu im in mit von auf an für es ich man",
    "es": "qué que cómo como quién quiénes cuándo dónde por porqué cuál cuáles cuánto cuántos "
          "cuántas el la los las un una unos unas es son se si de del en y o a al con para lo "
          "le puede pueden hay",
    "fr": "que quoi qui quand où comment pourquoi quel quelle quels quelles combien le la les "
          "un une des de du est sont et ou en à au aux il elle on ce cette se peut peuvent "
          "dans pour avec",
    "fa": "چه چی چگونه چطور کی کجا چرا چند چندتا آیا که در به از را و با این آن است هست یک "
          "برای می هم تا اگر",
}
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?؟…])[\"'”»)\]]*\s+|\s*[•▪◦●■]\s*")


def question_stopwords(language: str) -> frozenset[str]:
    """Folded question-word stop list for a language code (empty if unknown)."""
    words = _QUESTION_WORDS.get(language.strip().lower().split("-")[0], "")
    return frozenset(fold(w) for w in words.split())


def split_sentences(text: str) -> list[str]:
    """Sentences of a passage (see module docstring), stripped, empty ones dropped."""
    out: list[str] = []
    for para in _PARAGRAPH.split(text):
        joined = " ".join(line.strip() for line in para.splitlines())
        out += [s.strip() for s in _SENTENCE_END.split(joined) if s.strip()]
    return out


@dataclass(frozen=True)
class Scored:
    """One candidate sentence and its score."""

    n: int
    index: int
    text: str
    score: float


@ANSWERERS.register("extractive")
class ExtractiveAnswerer:
    """Picks question-matching sentences from the passages and cites them."""

    name: ClassVar[str] = "extractive"

    def __init__(self, *, threshold: float = 0.5, max_sentences: int = 3, min_tokens: int = 4,
                 stem: bool = True) -> None:
        problems = []
        if not 0.0 <= threshold <= 1.0:
            problems.append(f"threshold={threshold} must be within [0, 1]")
        if max_sentences < 1:
            problems.append(f"max_sentences={max_sentences} must be >= 1")
        if min_tokens < 1:
            problems.append(f"min_tokens={min_tokens} must be >= 1")
        if problems:
            raise ConfigError("extractive: " + "; ".join(problems))
        self.threshold = float(threshold)
        self.max_sentences = int(max_sentences)
        self.min_tokens = int(min_tokens)
        self.stem = bool(stem)

    def score(self, request: AnswerRequest) -> list[Scored]:
        """Every candidate sentence scored, best first (ties: passage n, index)."""
        stem = request.language if self.stem else None
        q_terms = sorted(set(Tokenizer(stem_language=stem,
                                       stopwords=question_stopwords(request.language))(
            request.question)))
        tok = Tokenizer(stem_language=stem)
        cands: list[tuple[Passage, int, str, frozenset[str]]] = []
        for p in request.passages:
            for i, sentence in enumerate(split_sentences(p.text)):
                terms = tok(sentence)
                if len(terms) >= self.min_tokens:
                    cands.append((p, i, sentence, frozenset(terms)))
        if not q_terms or not cands:
            return []
        n_sent = len(cands)
        idf = {}
        for t in q_terms:
            df = sum(1 for c in cands if t in c[3])
            idf[t] = math.log(1.0 + (n_sent - df + 0.5) / (df + 0.5))
        total = math.fsum(idf[t] for t in q_terms)
        scored = [Scored(p.n, i, s, math.fsum(idf[t] for t in q_terms if t in terms) / total)
                  for p, i, s, terms in cands]
        idx = order([c.score for c in scored], [f"{c.n:08d}.{c.index:08d}" for c in scored])
        return [scored[i] for i in idx]

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        start = time.perf_counter()
        text = self._reply(request)
        outcome = "abstained" if text.startswith("ABSTAIN:") else "answered"
        return AnswerResponse(text=text, outcome=outcome, model_id=MODEL_ID,
                              latency_ms=(time.perf_counter() - start) * 1000.0)

    def _reply(self, request: AnswerRequest) -> str:
        if not request.passages:
            return abstention("no passages were read for this question.")
        ranked = self.score(request)
        if not ranked:
            return abstention("the question has no content words, or the passages no "
                              "sentences to match.")
        best = ranked[0].score
        if best < self.threshold:
            return abstention(f"no sentence in the passages matches the question well enough "
                              f"(best score {best:.3f} < threshold {self.threshold:g}).")
        picked: list[Scored] = []
        seen: set[str] = set()
        for c in ranked:
            if c.score < self.threshold or len(picked) == self.max_sentences:
                break
            key = fold(c.text)
            if key not in seen:
                seen.add(key)
                picked.append(c)
        return "\n".join(f"{c.text} [{c.n}]" for c in picked)

    def describe(self) -> dict[str, Any]:
        return {"answerer": self.name, "model_id": MODEL_ID, "threshold": self.threshold,
                "max_sentences": self.max_sentences, "min_tokens": self.min_tokens,
                "stem": self.stem}
