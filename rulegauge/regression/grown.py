"""Gold sets that grow: two runs over different gold sets compared on the questions they share.

A pull request that adds gold questions changes the gold set's hash, and two runs over
different gold sets used to be refused. They are comparable, with no ``force``, when

* the corpus is the same (content hash equal on both sides): the questions were searched
  over the same chunks;
* both manifests record each question's digest (``goldset.question_digests``, written by
  every run since they were added: :mod:`rulegauge.goldset.question_digest`), and every
  question id both gold sets hold has the same digest on both sides: what of it scores
  (text, language, game, edition, requirements and grades, judgments, facts, labelled)
  did not change. Tags may change (they select slices and score nothing).

The comparison is then made on the shared questions; the questions only the candidate
has are *added*, those only the base has *removed*, and every report lists both
(:class:`GrownGoldSet`). A changed question under the same id is refused, naming it: its
metrics moved because its labels moved, not because retrieval did (give it a new id, or
save a new baseline with the change). A different corpus is refused as before. A base or
candidate without digests (a run or baseline from before them) is refused with the hint
to re-save the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rulegauge.store.baseline import Side

SHOWN = 10


def _named(qids: tuple[str, ...]) -> str:
    more = f" (+{len(qids) - SHOWN} more)" if len(qids) > SHOWN else ""
    return ", ".join(qids[:SHOWN]) + more


@dataclass(frozen=True)
class GrownGoldSet:
    """The base's gold set and the candidate's, sharing ``shared`` questions of one
    content; ``added`` / ``removed``: question ids only the candidate / base has."""

    base_goldset: str
    base_sha256: str
    candidate_goldset: str
    candidate_sha256: str
    added: tuple[str, ...]
    removed: tuple[str, ...]
    shared: int

    def describe(self) -> str:
        """One line for every report: what changed and what the comparison is made on."""
        added = f"{len(self.added)} added ({_named(self.added)})" if self.added else "0 added"
        removed = (f"{len(self.removed)} removed ({_named(self.removed)})" if self.removed
                   else "0 removed")
        return (f"gold set changed from {self.base_goldset} {self.base_sha256[:12]} to "
                f"{self.candidate_goldset} {self.candidate_sha256[:12]}: {added}, {removed}; "
                f"compared on the {self.shared} question(s) both share")


def _section(side: Side, name: str) -> dict[str, Any]:
    got = side.manifest.get(name)
    return got if isinstance(got, dict) else {}


def grown_goldset(base: Side, candidate: Side) -> tuple[GrownGoldSet | None, tuple[str, ...]]:
    """(the change, ()) when the two gold sets differ but are comparable on their shared
    questions (module docstring); (None, why not) when they differ and are not; (None, ())
    when the gold sets are the same or the corpora differ (nothing to say here)."""
    gb, gc = _section(base, "goldset"), _section(candidate, "goldset")
    cb, cc = _section(base, "corpus").get("content_hash"), _section(candidate, "corpus").get("content_hash")
    if gb.get("sha256") == gc.get("sha256") or cb is None or cb != cc:
        return None, ()
    db, dc = gb.get("question_digests"), gc.get("question_digests")
    if not isinstance(db, dict) or not isinstance(dc, dict):
        old = " and ".join(w for w, d in (("base", db), ("candidate", dc)) if not isinstance(d, dict))
        return None, (f"gold sets differ and the {old} records no question digests, so the "
                      "questions both share cannot be checked unchanged (re-save the baseline "
                      "from a run of this version: rulegauge baseline save RUN NAME --overwrite)",)
    shared = sorted(set(db) & set(dc))
    changed = tuple(q for q in shared if db[q] != dc[q])
    if changed:
        return None, (f"{len(changed)} question(s) changed content under the same id "
                      f"({_named(changed)}): their labels moved, so their metrics would too; "
                      "give a changed question a new id, or save a new baseline with it",)
    if not shared:
        return None, ("the gold sets share no question",)
    return GrownGoldSet(str(gb.get("name")), str(gb.get("sha256")), str(gc.get("name")),
                        str(gc.get("sha256")), tuple(sorted(set(dc) - set(db))),
                        tuple(sorted(set(db) - set(dc))), len(shared)), ()
