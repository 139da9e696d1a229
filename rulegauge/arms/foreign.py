"""What an arm that reads ids from outside does with an id that matches no chunk: ``on_unmatched``.

The arms that take ranked lists from elsewhere (``http``, ``http-ranks`` through its
``http`` arm, ``external``) read each hit's id and match it to the gold set's corpus. An id
that matches no chunk (another game's page from a service that searches the whole library, a
stale edition's page) is handled by the arm's ``on_unmatched`` rule, :data:`UNMATCHED`:

``keep`` (the default)
    The hit keeps its rank as a non-relevant *foreign hit* under its reply id
    (:mod:`rulegauge.corpus.foreign`): stored in ``arm_ranks`` with ``foreign = true``,
    fused like any hit, counted as non-relevant by every metric, measured by ``foreign@k``.
``error``
    The run stops (exit 2) naming every such id, with its question (and file and line).
``drop``
    The hit is left out and the hits below it move up, as the ``warn`` rule of earlier
    versions did; the run warns how many hits were left out and how many moved up
    (:func:`drop_warning`). Only for a list whose foreign hits you mean to ignore.

``warn`` is refused (:func:`check_unmatched`), never mapped: it silently moved ranks up, and
mapping it to either rule would change a team's figures without a word.

:func:`apply_rule` applies the rule to one question's list in its order; every arm above
uses it, so the rule means the same in each. Reference: docs/arms.md, "Foreign hits".
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from rulegauge.arms.results import Hit
from rulegauge.core.errors import ConfigError, Problem
from rulegauge.corpus.foreign import foreign_id_problem

UNMATCHED = ("keep", "error", "drop")
DEFAULT_UNMATCHED = "keep"
SHOWN = 3
"""Foreign ids a warning quotes as examples."""


def unmatched_problem(value: object, arm: str) -> str | None:
    """Why ``value`` is not an ``on_unmatched`` rule of ``arm`` (module docstring), or None."""
    if value == "warn":
        return (f'{arm}: on_unmatched = "warn" is no longer accepted: it left ids that match no chunk '
                'out of the ranked list and moved the hits below them up; use "keep" (the default: '
                'they keep their ranks as non-relevant foreign hits, measured by foreign@k) or "drop" '
                "(leave them out, with a warning of how many hits moved up): docs/arms.md, Foreign hits")
    if value not in UNMATCHED:
        return f"{arm}: on_unmatched must be one of {', '.join(UNMATCHED)}, got {value!r}"
    return None


def check_unmatched(value: object, arm: str) -> str:
    """``value`` when it is an ``on_unmatched`` rule, else :class:`ConfigError` (exit 2)."""
    problem = unmatched_problem(value, arm)
    if problem:
        raise ConfigError(problem)
    return str(value)


@dataclass(frozen=True)
class Listed:
    """One question's list after the rule: ``hits`` ranked 1..n in list order, ``foreign``
    the ids of those that match no chunk (``keep``), ``dropped`` the hits left out
    (``drop``) and ``moved`` the hits kept that had one of them above (each moved up)."""

    hits: tuple[Hit, ...]
    foreign: frozenset[str]
    dropped: int = 0
    moved: int = 0


def apply_rule(items: Iterable[tuple[str, bool, float | None]], depth: int, rule: str) -> Listed:
    """``items`` (id, matches no chunk, score or None) in list order -> the ranked list
    under ``rule`` (module docstring): an id that comes again is kept once (its first
    place), ranks are 1..n in order, at most ``depth``; a hit without a score scores
    1 / its rank. ``error`` keeps everything (the arm stops the run before, when any id is
    foreign)."""
    seen: set[str] = set()
    hits: list[Hit] = []
    foreign: set[str] = set()
    dropped = moved = 0
    for key, outside, score in items:
        if len(hits) == depth:
            break
        if key in seen:
            continue
        seen.add(key)
        if outside and rule == "drop":
            dropped += 1  # above the cut: every hit kept after it moves up
            continue
        rank = len(hits) + 1
        hits.append(Hit(key, rank, float(score) if score is not None else 1.0 / rank))
        if outside:
            foreign.add(key)
        elif dropped:
            moved += 1
    return Listed(tuple(hits), frozenset(foreign), dropped, moved)


def bad_foreign_ids(where_ids: Iterable[tuple[str, str]]) -> list[Problem]:
    """A problem for each (where, id) whose id cannot be kept as a foreign hit
    (:func:`rulegauge.corpus.foreign.foreign_id_problem`)."""
    out = []
    for where, rid in where_ids:
        problem = foreign_id_problem(rid)
        if problem:
            out.append(Problem(where, f"{problem}: it matches no chunk and cannot be kept as a foreign hit"))
    return out


@dataclass
class ForeignCount:
    """What the rule did over an arm's questions, for the manifest and the run's warning."""

    rule: str
    questions: int = 0
    kept: int = 0
    kept_questions: int = 0
    dropped: int = 0
    dropped_questions: int = 0
    moved: int = 0
    examples: list[str] | None = None

    def add(self, listed: Listed) -> None:
        self.questions += 1
        self.kept += len(listed.foreign)
        self.kept_questions += bool(listed.foreign)
        self.dropped += listed.dropped
        self.dropped_questions += bool(listed.dropped)
        self.moved += listed.moved
        ex = self.examples if self.examples is not None else []
        ex += [i for i in sorted(listed.foreign) if i not in ex][: SHOWN - len(ex)]
        self.examples = ex

    def manifest(self) -> dict[str, Any]:
        """The arm's manifest entries (``on_unmatched`` is the arm's own)."""
        return {"foreign_hits": self.kept, "foreign_questions": self.kept_questions,
                "dropped_hits": self.dropped, "moved_up": self.moved}

    def warning(self) -> str | None:
        """What ``rulegauge run`` says of the arm (:func:`drop_warning`, :func:`keep_note`): the
        arm's manifest ``warning``, printed after its name."""
        if self.dropped:
            return drop_warning(self.dropped, self.dropped_questions, self.moved, self.questions)
        if self.kept:
            return keep_note(self.kept, self.kept_questions, self.questions, self.examples or [])
        return None


def drop_warning(dropped: int, in_questions: int, moved: int, questions: int) -> str:
    """The per-run warning of ``on_unmatched = "drop"``: how many hits were left out and how
    many ranks moved up because of it."""
    return (f'on_unmatched = "drop" left out {dropped} hit(s) in {in_questions} of {questions} questions '
            f"whose ids match no chunk of the corpus, so {moved} hit(s) below them moved up a rank or "
            'more (the metrics count them higher than the list had them); "keep", the default, keeps '
            "them at their ranks as non-relevant foreign hits (docs/arms.md, Foreign hits)")


def keep_note(kept: int, in_questions: int, questions: int, examples: Sequence[str]) -> str:
    """What a run says when an arm kept foreign hits (``keep``)."""
    shown = ", ".join(repr(e) for e in examples[:SHOWN])
    return (f"{kept} hit(s) in {in_questions} of {questions} questions have ids that match no chunk of "
            f"the corpus (e.g. {shown}): kept at their ranks as non-relevant foreign hits; foreign@k "
            "says how much of the top k they hold (docs/arms.md, Foreign hits)")
