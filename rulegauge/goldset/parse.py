"""Parsing and validating v1 gold-set YAML (the engine behind
:func:`rulegauge.goldset.parse.load_goldset`); every problem is collected with its
``file:line`` from the YAML node marks. The format and conventions are documented
in :mod:`rulegauge.goldset.records` and ``goldsets/README.md``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import yaml

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.limits import MAX_GOLDSET_BYTES, size_problem
from rulegauge.goldset import yamlsafe
from rulegauge.goldset.documents import PageBook, read_documents
from rulegauge.goldset.questions import read_questions
from rulegauge.goldset.records import FORMAT_VERSION, PAGE_BASES, GoldSet
from rulegauge.goldset.source import Source, child, text_field


def read_goldset(path: Path, *, check_pages: bool,
                 allow_outside: bool = False) -> tuple[GoldSet | None, list[Problem]]:
    src = Source(path, allow_outside=allow_outside)
    too_big = size_problem(path, MAX_GOLDSET_BYTES, "gold set")
    if too_big:
        return None, [Problem(str(path), too_big.split(": ", 1)[1])]
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, [Problem(str(path), f"cannot read gold set: {exc.strerror or exc}")]
    root, problems = yamlsafe.compose(path, data)
    if problems:
        return None, problems
    if root is None:
        return None, [Problem(str(path), "empty file")]
    src.problems += yamlsafe.duplicate_keys(root, path)
    raw, problems = yamlsafe.construct(path, root)
    if problems:
        return None, src.problems + problems
    if not isinstance(raw, dict) or not isinstance(root, yaml.MappingNode):
        return None, [Problem(str(path), "the top level must be a mapping (goldset, version, ...)")]
    goldset = _build(raw, root, src, hashlib.sha256(data).hexdigest(), check_pages=check_pages)
    return (None if src.problems else goldset), src.problems


def _build(raw: dict[str, Any], root: yaml.MappingNode, src: Source, sha256: str,
           *, check_pages: bool) -> GoldSet | None:
    name = text_field(raw, "goldset", root, src, "gold set")
    version = raw.get("version")
    if version is None:
        src.add(root, "gold set: missing required field 'version'")
    elif version != FORMAT_VERSION or isinstance(version, bool):
        src.add(child(root, "version"),
                f"unsupported version {version!r}; this loader reads version {FORMAT_VERSION}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        src.add(child(root, "description"), "'description' must be a string")
    basis = raw.get("pages", "physical")
    if basis not in PAGE_BASES:
        src.add(child(root, "pages"), f"unknown page basis {basis!r}; choose one of: "
                + ", ".join(PAGE_BASES))
    derived = raw.get("derived", False)
    if not isinstance(derived, bool):
        src.add(child(root, "derived"), f"'derived' must be true or false, got {derived!r}")
    docs = read_documents(raw.get("documents"), child(root, "documents"), src)
    pages = PageBook(docs, src, check_pages=check_pages, labels=basis == "label")
    questions = read_questions(raw.get("questions"), child(root, "questions"), src, docs, pages)
    known = {"goldset", "version", "description", "pages", "derived", "documents", "questions"}
    extra = {k: v for k, v in raw.items() if k not in known}
    if src.problems or name is None:
        return None
    return GoldSet(name=name, version=FORMAT_VERSION, description=str(description).strip(),
                   path=str(src.path.resolve()), sha256=sha256,
                   documents=tuple(d.spec for d in docs.values() if d.spec), questions=questions,
                   page_basis=str(basis), derived=bool(derived), extra=extra,
                   notes=tuple(str(n) for n in src.notes))


def check_corpus(goldset: GoldSet, corpus: Any) -> None:
    """What a run needs of the built corpus: at least one chunk. Raises a
    :class:`ValidationError` naming the gold set and its documents when there is
    none; logs a note for each document that gave no chunks (blank or scanned)."""
    import logging

    counts = {d.doc_id: 0 for d in goldset.documents}
    for c in corpus.chunks:
        counts[c.doc_id] = counts.get(c.doc_id, 0) + 1
    empty = [d for d in goldset.documents if counts.get(d.doc_id, 0) == 0]
    if len(empty) == len(goldset.documents):
        raise ValidationError([Problem(f"{goldset.path}: document {d.doc_id}",
                                       f"{d.path} gives no text (blank or scanned pages?)")
                               for d in empty],
                              summary=f"{goldset.path}: no document gives any text to search")
    for d in empty:
        logging.getLogger(__name__).warning("%s: document %s (%s) gives no text; it is left out "
                                            "of every search", goldset.path, d.doc_id, d.path)


def load_goldset(path: str | Path, *, check_pages: bool = True,
                 allow_outside: bool = False) -> GoldSet:
    """Load and validate a v1 gold set; raise one :class:`ValidationError` with every problem.

    Document paths are resolved against the YAML file's folder. With
    ``check_pages`` every page ref is checked against the document's page count
    (``rulegauge.corpus.loaders.count_pages``). A ``pages: label`` set is converted to
    physical pages through ``rulegauge.corpus.loaders.page_labels`` whatever
    ``check_pages`` says, since the conversion needs the labels. Problems name the
    file and line (``sample.yaml:41``), plus the question id when there is one
    (``sample.yaml:41: question bw-07``). Document paths must lie under
    :func:`~rulegauge.goldset.documents.document_root` unless ``allow_outside``. Scalars YAML reads as numbers
    where text is expected are kept as their source text and listed in
    ``GoldSet.notes`` (also logged as warnings). Reference: ``goldsets/README.md``.
    """
    import logging

    goldset, problems = read_goldset(Path(path), check_pages=check_pages,
                                     allow_outside=allow_outside)
    if problems or goldset is None:
        raise ValidationError(problems, summary=f"{path}: invalid gold set")
    for note in goldset.notes:
        logging.getLogger(__name__).warning("note: %s", note)
    return goldset


def validate_goldset(path: str | Path, *, check_pages: bool = True,
                     allow_outside: bool = False) -> list[Problem]:
    """Every problem :func:`load_goldset` would raise, in the order found; ``[]`` when clean.

    For ``rulegauge validate``: the caller prints the problems and chooses the exit code.
    """
    return read_goldset(Path(path), check_pages=check_pages, allow_outside=allow_outside)[1]
