"""Editions that share no text with the old one: aligned again by a page aligner, and said so.

``goldset migrate`` aligns pages by shared word shingles (:mod:`rulegauge.goldset.align`).
When not one old page holds even a tenth of its shingles anywhere in the new edition
(:func:`rulegauge.goldset.align.shares_no_text`: a translation, or a rewrite), shingles
can place nothing, and :func:`realign` says why and tries the page aligner named
:data:`ALIGNER` (``embedding``: multilingual sentence embeddings,
:mod:`rulegauge.embedding.page_align`), reached by name through the plug-in group
``rulegauge.aligners`` (the kernel never imports it). Its alignment replaces the empty one,
its locator places the answering sentences, and the label rules stay those of
:mod:`rulegauge.goldset.relabel`: a label is carried or flagged with candidates, never guessed.

Language: the share of the new edition's words (tokens, occurrences) that occur anywhere in
the old one, :func:`word_overlap`. Below :data:`OTHER_LANGUAGE` the note says the new
edition appears to be in another language (on the sample's German second printing 0.11:
numbers and a few names; between two printings of one language, 0.9 and more).

Edge cases: an aligner that cannot run (its extra not installed, a broken plug-in) leaves the
shingle alignment (every page ``removed``, every label flagged) and the note says why.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.text import tokenize
from rulegauge.goldset import align as al
from rulegauge.goldset.relabel import DocumentMigration, Locator

ALIGNER = "embedding"
OTHER_LANGUAGE = Fraction(3, 10)
"""Below this share of its words found in the old edition, a new edition is said to be in another language."""


def word_overlap(old: list[str] | tuple[str, ...], new: list[str] | tuple[str, ...]) -> Fraction:
    """The share of the new pages' tokens (occurrences) whose word occurs in the old pages (0 when none)."""
    vocabulary = {t for text in old for t in tokenize(text)}
    counts = Counter(t for text in new for t in tokenize(text))
    total = sum(counts.values())
    return Fraction(sum(n for t, n in counts.items() if t in vocabulary), total) if total else Fraction(0)


def realign(dm: DocumentMigration, aligner: str | None = None) -> DocumentMigration:
    """``dm`` as is when its shingles found shared text; else aligned again by ``aligner``
    (default :data:`ALIGNER`), with a note saying why (and whether the new edition looks like
    another language)."""
    if not al.shares_no_text(dm.alignment):
        return dm
    aligner = aligner or ALIGNER
    overlap = word_overlap(dm.old_texts, dm.new_texts)
    note = (f"{dm.doc_id}: no page of {Path(dm.new_path).name} shares a run of {al.SHINGLE} words with "
            f"the old edition ({float(overlap):.0%} of its words occur in it"
            + (": it appears to be in another language)" if overlap < OTHER_LANGUAGE else ")"))
    try:
        found = al.ALIGNERS.get(aligner)
        got = found.realign(dm.old_texts, dm.new_texts)
    except RulegaugeError as exc:
        return replace(dm, note=f"{note}; no other alignment could be made ({exc}): every label is flagged",
                       aligned_by={"aligner": aligner, "error": str(exc), "word_overlap": float(overlap)})
    return replace(dm, alignment=got.alignment, locator=got.locate,
                   note=f"{note}; pages aligned by {found.description}",
                   aligned_by={"aligner": aligner, **got.method, "word_overlap": round(float(overlap), 3)})


def locator(dm: DocumentMigration) -> al.Locate:
    """Where the answering sentences of ``dm``'s labels are looked for: the aligner's locator
    when it was aligned again, else the shingles of its new pages."""
    return dm.locator if dm.locator is not None else Locator(dm.new_texts)
