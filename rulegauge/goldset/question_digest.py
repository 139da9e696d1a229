"""What of a gold question scores, as a digest: two runs whose gold sets differ can still
be compared on the questions they share when each shared question's digest is equal.

:func:`question_digest` hashes (SHA-256 of canonical JSON, first 16 hex digits) the
question text, language, game and edition, every requirement with its pages and grades,
every explicit judgment (page, grade, kind, judge), the reference facts and whether the
question is labelled: everything a metric or an answer metric reads. Tags are left out:
they select slices and score nothing, so retagging a question keeps its digest. Used by
:mod:`rulegauge.store.provenance` (``manifest.goldset.question_digests``) and
:mod:`rulegauge.regression.grown`.
"""

from __future__ import annotations

import hashlib
import json

from rulegauge.goldset.records import Question

DIGEST_HEX = 16


def question_digest(q: Question) -> str:
    """The digest of what of ``q`` scores (module docstring)."""
    content = {
        "question": q.question, "language": q.language, "game": q.game, "edition": q.edition,
        "requirements": [[[str(r), r.grade or 1] for r in req] for req in q.requirements],
        "judged": sorted([j.key, j.grade, j.judge_kind, j.judge_id] for j in q.judged),
        "facts": [list(f) for f in q.facts], "labelled": q.labelled}
    text = json.dumps(content, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:DIGEST_HEX]
