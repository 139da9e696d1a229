"""Gold sets derived from document structure: from PDF outlines, and the helpers both builders share.

Both builders (:func:`from_outline` here, :func:`rulegauge.goldset.parallel.parallel`) write
a v1 gold set marked ``derived: true`` (:func:`rulegauge.goldset.write.write_goldset`,
physical pages) and return a
:class:`Derivation` saying how many candidates there were and why some were skipped.

``from_outline`` ("find the section")
    Every bookmark of a PDF (:func:`rulegauge.corpus.outline.read_outline`) is a
    candidate: the question is a per-language template (:data:`OUTLINE_TEMPLATES`,
    e.g. "Where are the rules for {title}?") and the requirement is the bookmark's
    target page. With ``continuation`` the page after it is an any-of
    alternative when the section goes on there, i.e. when the next bookmark at
    the same or a higher level (or the end of the document) lies on a later page.
    Skipped: bookmarks outside ``min_depth..max_depth`` (depth 1 = top level),
    titles with fewer than ``min_letters`` letters (index letters "A", "B"), and
    every bookmark whose case-folded title occurs more than once (e.g. the SRD's
    15 "Hit Points": the question could not say which one is meant).

Sampling (``max_questions`` for outlines, ``max_items`` for parallel corpora)
draws without replacement with ``numpy.random.default_rng(seed)`` and keeps
document order, so the same inputs and seed write the same file. Question ids
come from the source position (``<doc>-o0042``: outline entry 42;
``ru-title-p017``: answer page 17), so they do not depend on the sample.

Reference: known-item topics built from document structure follow Ogilvie &
Callan 2003, "Combining document representations for known-item search" (SIGIR).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from pypdf import PdfReader
from pypdf.errors import PyPdfError

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.registry import Registry
from rulegauge.core.text import fold
from rulegauge.corpus.outline import OutlineEntry, read_outline
from rulegauge.corpus.records import page_key
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.write import DraftQuestion, write_goldset

OUTLINE_TEMPLATES: Registry[str] = Registry("outline question language")
for _lang, _t in (("en", "Where are the rules for {title}?"),
                  ("de", "Wo stehen die Regeln zu {title}?"),
                  ("fr", "Où se trouvent les règles sur {title} ?"),
                  ("es", "¿Dónde están las reglas sobre {title}?"),
                  ("ru", "Где описаны правила раздела «{title}»?"),
                  ("fa", "قوانین «{title}» کجا آمده است؟")):
    OUTLINE_TEMPLATES.add(_lang, _t)

@dataclass(frozen=True)
class Derivation:
    """What a builder wrote: the file, question and candidate counts, and
    ``skipped`` as sorted (reason, count) pairs."""

    path: Path
    questions: int
    candidates: int
    skipped: tuple[tuple[str, int], ...]


def sample_indices(n: int, k: int | None, seed: int) -> list[int]:
    """Sorted indices of ``k`` of ``n`` items drawn without replacement (all when
    ``k`` is None or >= n)."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ValidationError([Problem("sampling", f"the maximum must be an integer >= 1, got "
                                                   f"{k!r}")], "cannot derive gold set")
    if k is None or k >= n:
        return list(range(n))
    rng = np.random.default_rng(seed)
    return sorted(int(i) for i in rng.choice(n, size=k, replace=False))


def document_entry(doc_id: str, path: Path, kind: str, game: str, edition: str, language: str,
              title: str | None) -> dict[str, str]:
    doc = {"id": doc_id, "path": str(path), "kind": kind, "game": game, "edition": edition,
           "language": language}
    return {**doc, "title": title} if title else doc


def slug(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z._-]+", "-", text).strip("-") or "doc"


# ---------------------------------------------------------------------------
# From a PDF outline
# ---------------------------------------------------------------------------

def _read_bookmarks(pdf: Path) -> tuple[list[OutlineEntry], int]:
    try:
        reader = PdfReader(pdf)
        return read_outline(reader), len(reader.pages)
    except (PyPdfError, OSError, ValueError, KeyError) as exc:
        raise ValidationError([Problem(str(pdf), f"not a readable PDF: {exc}")],
                              "cannot derive gold set") from None


@dataclass(frozen=True)
class OutlineOptions:
    """How :func:`from_outline` derives a gold set: the document's facts (``doc_id``,
    ``game``, ``edition``, ``language``, ``kind``, ``title``), the set's ``name``, the
    sample (``max_questions``, ``seed``) and the bookmark filters (depths, letters,
    ``continuation`` headings)."""

    doc_id: str | None = None
    game: str | None = None
    edition: str = "1"
    language: str = "en"
    kind: str = "rulebook"
    title: str | None = None
    name: str | None = None
    max_questions: int | None = None
    seed: int = 0
    min_depth: int = 1
    max_depth: int | None = None
    min_letters: int = 3
    continuation: bool = False


def from_outline(pdf: str | Path, out: str | Path, options: OutlineOptions | None = None,
                 **changes: Any) -> Derivation:
    """Write a "find the section" gold set from ``pdf``'s bookmarks (module docstring);
    ``options`` (default :class:`OutlineOptions`), keyword ``changes`` override its fields.

    ``doc_id`` defaults to the file stem, ``game`` to the stem too, ``name`` to
    the output file's stem. A missing or unreadable PDF, one without bookmarks,
    bad depth bounds or filters that leave nothing raise :class:`ValidationError`;
    an unknown ``language`` (it picks the template) raises ``RegistryError``
    listing the choices.
    """
    o = replace(options or OutlineOptions(), **changes)
    doc_id, game, edition, language, kind, title, name = (o.doc_id, o.game, o.edition, o.language,
                                                          o.kind, o.title, o.name)
    max_questions, seed, min_depth, max_depth = o.max_questions, o.seed, o.min_depth, o.max_depth
    min_letters, continuation = o.min_letters, o.continuation
    pdf, out = Path(pdf), Path(out)
    template = OUTLINE_TEMPLATES.get(language)
    problems = []
    if min_depth < 1 or (max_depth is not None and max_depth < min_depth):
        problems.append(Problem("depth filter", f"need 1 <= min_depth <= max_depth, got "
                                                f"{min_depth}..{max_depth}"))
    if not pdf.is_file():
        problems.append(Problem(str(pdf), "file not found"))
    if problems:
        raise ValidationError(problems, "cannot derive gold set")
    entries, n_pages = _read_bookmarks(pdf)
    if not entries:
        raise ValidationError([Problem(str(pdf), "the PDF has no bookmarks (outline) to derive "
                                                 "questions from")], "cannot derive gold set")
    doc_id = doc_id or slug(pdf.stem)
    seen = Counter(fold(e.title) for e in entries)
    skipped: Counter[str] = Counter()
    candidates = []
    for i, e in enumerate(entries):
        depth = e.level + 1
        if depth < min_depth or (max_depth is not None and depth > max_depth):
            skipped["outside depth filter"] += 1
        elif sum(ch.isalpha() for ch in e.title) < min_letters:
            skipped["title too short"] += 1
        elif seen[fold(e.title)] > 1:
            skipped["title not unique"] += 1
        else:
            candidates.append(i)
    questions = []
    for j in sample_indices(len(candidates), max_questions, seed):
        i = candidates[j]
        e = entries[i]
        req: tuple[str, ...] = (page_key(doc_id, e.page),)
        if continuation and e.page < _section_end(entries, i, n_pages):
            req = (*req, page_key(doc_id, e.page + 1))
        questions.append(DraftQuestion(
            f"{doc_id}-o{i:04d}", template.format(title=e.title), language, (req,),
            ("from-outline", f"depth-{e.level + 1}")))
    if not questions:
        raise ValidationError([Problem(str(pdf), f"no bookmark is usable ({dict(skipped)})")],
                              "cannot derive gold set")
    desc = (f"Derived from the {len(entries)} bookmarks of {pdf.name}: {len(questions)} of "
            f"{len(candidates)} usable titles (seed {seed}); each asks for the bookmark's "
            "target page.")
    header = (f"Derived gold set (rulegauge goldset from-outline {pdf.name}, seed {seed}).\n"
              "Generated from third-party bookmarks: do not commit it.")
    doc = document_entry(doc_id, pdf, kind, game or pdf.stem, edition, language, title)
    path = write_goldset(out, name or out.stem, desc, [doc], questions, derived=True,
                         header=header)
    load_goldset(path, allow_outside=True)  # what was written must load (its documents were named by the caller)
    return Derivation(path, len(questions), len(candidates), tuple(sorted(skipped.items())))


def _section_end(entries: Sequence[OutlineEntry], i: int, n_pages: int) -> int:
    """Page on which entry ``i``'s section ends: the page of the next entry at the
    same or a higher level, else the document's last page."""
    for e in entries[i + 1:]:
        if e.level <= entries[i].level:
            return int(e.page)
    return n_pages
