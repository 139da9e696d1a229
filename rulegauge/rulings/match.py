"""Match imported rulings to gold questions, and production documents to gold documents.

Questions
---------
A ruling matches a gold question when the mapping file names it
(``questions:``, ``matched_by = "mapping"``), or else when all of these hold
(``matched_by = "question"``):

* same game: :func:`normalise` of the ruling's game (after the mapping file's
  ``games:`` translation) equals that of the question's game;
* same edition: the (translated) edition tag equals the question's edition,
  compared case-insensitively; a question without an edition accepts any;
* same question: :func:`normalise` of both texts is equal.

Production prints editions as tags (``bg-191300-en-1e``) that a gold set
rarely uses, so the mapping file's ``games:`` section is the way to say which
gold edition a tag is. Several matching gold questions make the match
ambiguous (no match, reason given). When several rulings match one gold
question, the first by ruling id is ``counted`` and the others are not, so the
production side holds one row per gold question.

Documents
---------
A production document id maps to a gold document by the mapping file
(``documents:``), else by name: the gold documents of the ruling's game (and its
edition, when that edition exists in the gold set), narrowed to the production
kind (``RULEBOOK`` -> rulebook), then, when several remain, to the one whose
normalised title equals the production title without its kind prefix. Anything
else stays unmapped: its pages are never relevant.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from rulegauge.core.text import tokenize
from rulegauge.goldset.records import GoldSet
from rulegauge.rulings.mapping import DocTarget, Mapping


def normalise(text: str | None) -> str:
    """Case-, script- and punctuation-insensitive form: tokens joined by spaces
    (``rulegauge.core.text.tokenize``): "How do I play?" -> "how do i play"."""
    return " ".join(tokenize(text or ""))


def _edition(e: str | None) -> str | None:
    return e.strip().casefold() if e else None


@dataclass(frozen=True)
class Match:
    """One ruling's match; ``reason`` says why there is none or why it is not counted."""

    question_id: str
    gold_question_id: str | None
    matched_by: str | None
    reason: str | None
    counted: bool


@dataclass(frozen=True)
class RulingKey:
    """What matching reads of a ruling."""

    question_id: str
    question: str | None
    game: str | None
    edition: str | None


def _match_one(r: RulingKey, gs: GoldSet, mapping: Mapping) -> tuple[str | None, str | None, str]:
    if r.question_id in mapping.questions:
        qid = mapping.questions[r.question_id]
        if qid not in gs.question_by_id:
            return None, None, (f"the mapping names gold question {qid!r}, which {gs.name} "
                                "does not have")
        return qid, "mapping", ""
    if r.question is None:
        return None, None, "the page shows no question"
    game, edition = mapping.gold_game(r.game, r.edition)
    same_game = [q for q in gs.questions if normalise(q.game) == normalise(game)]
    if not same_game:
        games = sorted({q.game or "(none)" for q in gs.questions})
        return None, None, f"game {game!r} is not in {gs.name} (games: {', '.join(games)})"
    same_ed = [q for q in same_game
               if q.edition is None or _edition(q.edition) == _edition(edition)]
    if not same_ed:
        eds = sorted({q.edition for q in same_game if q.edition})
        return None, None, (f"edition {edition!r} is not an edition of {game!r} in {gs.name} "
                            f"({', '.join(eds)}); map it under games: in the mapping file")
    text = normalise(r.question)
    hits = [q.question_id for q in same_ed if normalise(q.question) == text]
    if not hits:
        return None, None, f"no question of {game!r} in {gs.name} reads {r.question!r}"
    if len(hits) > 1:
        return None, None, f"ambiguous: gold questions {', '.join(hits)} read the same"
    return hits[0], "question", ""


def match_rulings(rulings: Iterable[RulingKey], gs: GoldSet, mapping: Mapping | None = None
                  ) -> tuple[Match, ...]:
    """Match every ruling (see the module docstring); output in ruling-id order."""
    mapping = mapping or Mapping()
    out: list[Match] = []
    first: dict[str, str] = {}
    for r in sorted(rulings, key=lambda x: x.question_id):
        qid, how, reason = _match_one(r, gs, mapping)
        if qid is None:
            out.append(Match(r.question_id, None, None, reason, False))
        elif qid in first:
            out.append(Match(r.question_id, qid, how, f"gold question {qid} is already matched "
                             f"by ruling {first[qid]}", False))
        else:
            first[qid] = r.question_id
            out.append(Match(r.question_id, qid, how, None, True))
    return tuple(out)


@dataclass(frozen=True)
class ProdDoc:
    """A production document as the ruling tables show it."""

    doc_id: str
    kind: str | None
    title: str | None


def _strip_kind(title: str | None, kind: str | None) -> str:
    t = title or ""
    if kind and t.lower().startswith(kind.lower() + " "):
        t = t[len(kind) + 1:]
    return normalise(t)


def map_documents(docs: Iterable[ProdDoc], game: str | None, edition: str | None, gs: GoldSet,
                  mapping: Mapping | None = None) -> dict[str, DocTarget]:
    """Production doc id -> gold document (see the module docstring); unmapped ids absent."""
    mapping = mapping or Mapping()
    ggame, gedition = mapping.gold_game(game, edition)
    pool = [d for d in gs.documents if normalise(d.game) == normalise(ggame)]
    if any(_edition(d.edition) == _edition(gedition) for d in pool):
        pool = [d for d in pool if _edition(d.edition) == _edition(gedition)]
    out: dict[str, DocTarget] = {}
    for doc in docs:
        if doc.doc_id in mapping.documents:
            out[doc.doc_id] = mapping.documents[doc.doc_id]
            continue
        cands = [d for d in pool if doc.kind is None or d.kind == doc.kind]
        if len(cands) > 1:
            title = _strip_kind(doc.title, doc.kind)
            cands = [d for d in cands if normalise(d.title) == title]
        if len(cands) == 1:
            out[doc.doc_id] = DocTarget(cands[0].doc_id)
    return out
