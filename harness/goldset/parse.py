"""Parsing and validating v1 gold-set YAML (the engine behind
:func:`harness.goldset.parse.load_goldset`); every problem is collected with its
``file:line`` from the YAML node marks. The format and conventions are documented
in :mod:`harness.goldset.records` and ``goldsets/README.md``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from harness.core.errors import HarnessError, Problem, ValidationError
from harness.core.limits import MAX_GOLDSET_BYTES, size_problem
from harness.core.names import id_problem
from harness.corpus import loaders
from harness.corpus.records import DOC_KINDS, DocumentSpec
from harness.goldset import yamlsafe
from harness.goldset.judged import parse_judged
from harness.goldset.records import (
    ANSWER_FIELDS,
    DOCUMENT_FIELDS,
    FORMAT_VERSION,
    PAGE_BASES,
    QUESTION_FIELDS,
    Fact,
    GoldSet,
    PageRef,
    Question,
    Requirement,
)

_REF = re.compile(r"^(?P<doc>[^#\s]+)#(?P<page>[^#\s]+)$")
_LANGUAGE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
_DOC_ID = re.compile(r"^[^#\s]+$")


class _Source:
    """The parsed file: display name, problem list and helpers to place problems."""

    def __init__(self, path: Path, *, allow_outside: bool = False) -> None:
        self.path = path
        self.allow_outside = allow_outside
        self.problems: list[Problem] = []
        self.notes: list[Problem] = []

    def where(self, node: yaml.Node | None, qid: str | None = None) -> str:
        where = str(self.path) if node is None else f"{self.path}:{node.start_mark.line + 1}"
        return where if qid is None else f"{where}: question {qid}"

    def add(self, node: yaml.Node | None, message: str, qid: str | None = None) -> None:
        self.problems.append(Problem(self.where(node, qid), message))

    def as_text(self, value: Any, node: yaml.Node, key: str, qid: str | None) -> Any:
        """A scalar YAML read as a number, date or boolean where text is expected
        (``edition: 3.22``, ``id: 12``) becomes its source text, with a note."""
        if isinstance(value, str) or value is None or not isinstance(node, yaml.ScalarNode):
            return value
        if isinstance(value, list | dict) or not node.value.strip():
            return value
        self.notes.append(Problem(self.where(node, qid), f"{key!r} read as text {node.value!r} "
                                  f"(YAML would read {type(value).__name__} {value!r}; quote it "
                                  "to silence this note)"))
        return node.value


def read_goldset(path: Path, *, check_pages: bool,
                 allow_outside: bool = False) -> tuple[GoldSet | None, list[Problem]]:
    src = _Source(path, allow_outside=allow_outside)
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


def _child(node: yaml.Node, key: str) -> yaml.Node:
    """The value node of ``key`` in a mapping node, or the node itself when absent."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == key and isinstance(v, yaml.Node):
                return v
    return node


def _items(node: yaml.Node, n: int) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else [node] * n


def _text(raw: dict[str, Any], key: str, node: yaml.Node, src: _Source, what: str,
          qid: str | None = None, *, required: bool = True) -> str | None:
    """A non-empty string field; records a problem when missing, empty or not a string.
    ``what`` prefixes the message unless the question id already says where it is."""
    value = raw.get(key)
    if key in raw:
        value = src.as_text(value, _child(node, key), key, qid)
    prefix = "" if qid is not None else f"{what}: "
    if value is None:
        if required:
            src.add(node, f"{prefix}missing required field {key!r}", qid)
        return None
    if not isinstance(value, str) or not value.strip():
        src.add(_child(node, key), f"{prefix}{key!r} must be a non-empty string, got {value!r}",
                qid)
        return None
    return value.strip()


def _build(raw: dict[str, Any], root: yaml.MappingNode, src: _Source, sha256: str,
           *, check_pages: bool) -> GoldSet | None:
    name = _text(raw, "goldset", root, src, "gold set")
    version = raw.get("version")
    if version is None:
        src.add(root, "gold set: missing required field 'version'")
    elif version != FORMAT_VERSION or isinstance(version, bool):
        src.add(_child(root, "version"),
                f"unsupported version {version!r}; this loader reads version {FORMAT_VERSION}")
    description = raw.get("description", "")
    if not isinstance(description, str):
        src.add(_child(root, "description"), "'description' must be a string")
    basis = raw.get("pages", "physical")
    if basis not in PAGE_BASES:
        src.add(_child(root, "pages"), f"unknown page basis {basis!r}; choose one of: "
                + ", ".join(PAGE_BASES))
    derived = raw.get("derived", False)
    if not isinstance(derived, bool):
        src.add(_child(root, "derived"), f"'derived' must be true or false, got {derived!r}")
    docs = _documents(raw.get("documents"), _child(root, "documents"), src)
    pages = _PageBook(docs, src, check_pages=check_pages, labels=basis == "label")
    questions = _questions(raw.get("questions"), _child(root, "questions"), src, docs, pages)
    known = {"goldset", "version", "description", "pages", "derived", "documents", "questions"}
    extra = {k: v for k, v in raw.items() if k not in known}
    if src.problems or name is None:
        return None
    return GoldSet(name=name, version=FORMAT_VERSION, description=str(description).strip(),
                   path=str(src.path.resolve()), sha256=sha256,
                   documents=tuple(d.spec for d in docs.values() if d.spec), questions=questions,
                   page_basis=str(basis), derived=bool(derived), extra=extra,
                   notes=tuple(str(n) for n in src.notes))


def _freeze(value: Any) -> Any:
    """Options must be hashable: lists become tuples, mappings sorted (key, value) tuples."""
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    return value


@dataclass(frozen=True)
class _Doc:
    spec: DocumentSpec | None  # None when the entry itself has problems
    node: yaml.Node


def _documents(raw: Any, node: yaml.Node, src: _Source) -> dict[str, _Doc]:
    if raw is None:
        src.add(node, "gold set: missing required field 'documents'")
        return {}
    if not isinstance(raw, list) or not raw:
        src.add(node, "'documents' must be a non-empty list")
        return {}
    docs: dict[str, _Doc] = {}
    for entry, dnode in zip(raw, _items(node, len(raw)), strict=True):
        if not isinstance(entry, dict):
            src.add(dnode, f"document entry must be a mapping, got {entry!r}")
            continue
        before = len(src.problems)
        doc_id = _text(entry, "id", dnode, src, "document")
        what = f"document {doc_id or '?'}"
        if doc_id is not None and id_problem("document id", doc_id):
            src.add(_child(dnode, "id"), str(id_problem("document id", doc_id)))
        elif doc_id is not None and not _DOC_ID.match(doc_id):
            src.add(_child(dnode, "id"), f"{what}: id may not contain '#' or spaces")
        elif doc_id is not None and doc_id in docs:
            src.add(_child(dnode, "id"), f"duplicate document id {doc_id!r} "
                    f"(first at line {docs[doc_id].node.start_mark.line + 1})")
            continue
        fields = {k: _text(entry, k, dnode, src, what) for k in DOCUMENT_FIELDS[1:]}
        if fields["kind"] is not None and fields["kind"] not in DOC_KINDS:
            src.add(_child(dnode, "kind"), f"{what}: unknown kind {fields['kind']!r}; choose one "
                    f"of: {', '.join(DOC_KINDS)}")
        if fields["language"] is not None and not _LANGUAGE.match(fields["language"]):
            src.add(_child(dnode, "language"),
                    f"{what}: language {fields['language']!r} is not a code like en, fa or pt-BR")
        title = _text(entry, "title", dnode, src, what, required=False) or ""
        full = Path(fields["path"]) if fields["path"] is not None else None
        if full is not None:
            full = (src.path.parent / full).resolve()
            root = document_root(src.path)
            if not src.allow_outside and not full.is_relative_to(root):
                src.add(_child(dnode, "path"), f"{what}: document path {fields['path']!r} "
                        f"leads outside {root}; move the file there or pass --allow-outside")
            elif not full.is_file():
                src.add(_child(dnode, "path"), f"{what}: missing document file {full}")
        spec = None
        if len(src.problems) == before and doc_id is not None and full is not None:
            options = tuple(sorted((k, _freeze(v)) for k, v in entry.items()
                                   if k not in {*DOCUMENT_FIELDS, "title"}))
            for key, _ in options:  # kept (free-form), but a misspelt `fromat:` is visible
                if key not in loaders.LOADER_OPTIONS:
                    src.notes.append(Problem(src.where(_child(dnode, key)), f"{what}: key "
                                             f"{key!r} is no field and no loader reads it "
                                             f"(loader options: {', '.join(loaders.LOADER_OPTIONS)}"
                                             "); kept as an option"))
            spec = DocumentSpec(doc_id, str(full), str(fields["kind"]), str(fields["game"]),
                                str(fields["edition"]), str(fields["language"]), title, options)
        if doc_id is not None:
            docs[doc_id] = _Doc(spec, dnode)
    return docs


class _PageBook:
    """Resolves the page part of a ref to a physical page, reading each document once."""

    def __init__(self, docs: dict[str, _Doc], src: _Source, *, check_pages: bool,
                 labels: bool) -> None:
        self.docs, self.src, self.check_pages, self.labels = docs, src, check_pages, labels
        self._count: dict[str, int | None] = {}
        self._label_map: dict[str, dict[str, list[int]] | None] = {}

    def _load(self, doc_id: str) -> None:
        doc = self.docs[doc_id]
        self._count[doc_id], self._label_map[doc_id] = None, None
        if doc.spec is None:
            return  # the entry's own problems are already reported

        try:
            if self.labels:
                found: dict[str, list[int]] = {}
                labels = loaders.page_labels(doc.spec)
                if all(lab is None for lab in labels):  # no printed labels: label = number
                    labels = [str(i) for i in range(1, len(labels) + 1)]
                for i, lab in enumerate(labels, start=1):
                    if lab is not None:
                        found.setdefault(str(lab), []).append(i)
                self._label_map[doc_id], self._count[doc_id] = found, len(labels)
            else:
                self._count[doc_id] = loaders.count_pages(doc.spec)
        except ValidationError as exc:  # the loader's own problems already name file and line
            self.src.problems.extend(exc.problems)
        except (HarnessError, OSError, ValueError) as exc:
            self.src.add(doc.node, f"document {doc_id}: cannot read {doc.spec.path}: {exc}")

    def resolve(self, doc_id: str, token: str, node: yaml.Node, qid: str | None) -> int | None:
        """Physical page for ``token`` (a number, or a label on a label-basis set)."""
        if self.labels or self.check_pages:
            if doc_id not in self._count:
                self._load(doc_id)
            if self._count[doc_id] is None:
                return None
        if self.labels:
            pages = (self._label_map[doc_id] or {}).get(token, [])
            if len(pages) != 1:
                self.src.add(node, f"page label {token!r} " + ("is not a printed label" if not pages
                             else f"is ambiguous (physical pages {pages})") + f" in {doc_id}", qid)
                return None
            return pages[0]
        if not token.isascii() or not token.isdigit() or int(token) < 1:
            self.src.add(node, f"bad page {token!r} in {doc_id}: pages are numbers from 1", qid)
            return None
        count = self._count.get(doc_id)
        if count is not None and int(token) > count:
            self.src.add(node, f"page {token} out of range for {doc_id} (1-{count})", qid)
            return None
        return int(token)


def _defaults(docs: dict[str, _Doc]) -> tuple[str | None, str | None]:
    """(game, edition) for questions that name none: the only game, and its rulebook's
    edition when its rulebooks share one edition; otherwise None."""
    specs = [d.spec for d in docs.values() if d.spec is not None]
    games = {s.game for s in specs}
    if len(games) != 1:
        return None, None
    editions = {s.edition for s in specs if s.kind == "rulebook"}
    return next(iter(games)), (next(iter(editions)) if len(editions) == 1 else None)


def _graded(entry: Any, node: yaml.Node, src: _Source, qid: str | None) -> tuple[Any, int | None]:
    """(ref, grade) of a page ref: ``doc#page`` or ``{ref: doc#page, grade: n}``, n >= 1.
    (None, None) after reporting a malformed graded ref."""
    if not isinstance(entry, dict):
        return entry, None
    grade = entry.get("grade")
    if set(entry) != {"ref", "grade"} or not isinstance(grade, int) or isinstance(grade, bool) \
            or grade < 1:
        src.add(node, f"bad graded page ref {entry!r}: expected {{ref: doc#page, grade: n}} "
                      "with an integer grade >= 1", qid)
        return None, None
    return entry["ref"], grade


def _requirements(raw: Any, node: yaml.Node, src: _Source, qid: str | None,
                  docs: dict[str, _Doc], pages: _PageBook) -> tuple[Requirement, ...]:
    if not isinstance(raw, list):
        src.add(node, f"'pages' must be a list of requirements ([] = unanswerable), got {raw!r}",
                qid)
        return ()
    reqs: list[Requirement] = []
    for item in raw:
        group = item if isinstance(item, list) else [item]
        if not group:
            src.add(node, "empty any-of list inside 'pages' (pages: [] marks unanswerable)", qid)
        refs: list[PageRef] = []
        for entry in group:
            ref, grade = _graded(entry, node, src, qid)
            m = _REF.match(ref) if isinstance(ref, str) else None
            if ref is None:
                continue
            if m is None:
                src.add(node, f"bad page ref {ref!r}: expected 'doc#page' or a list of them", qid)
            elif m["doc"] not in docs:
                src.add(node, f"unknown document {m['doc']!r} in {ref!r}; documents: "
                        + ", ".join(docs), qid)
            elif (page := pages.resolve(m["doc"], m["page"], node, qid)) is not None:
                refs.append(PageRef(m["doc"], page, grade))
        if len(set(refs)) < len(refs) or (refs and set(refs) in [set(r) for r in reqs]):
            src.add(node, f"page ref listed twice in {item!r}: a requirement counts once", qid)
        elif refs:
            reqs.append(tuple(refs))
    return tuple(reqs)


def _questions(raw: Any, node: yaml.Node, src: _Source, docs: dict[str, _Doc],
               pages: _PageBook) -> tuple[Question, ...]:
    if raw is None:
        src.add(node, "gold set: missing required field 'questions'")
        return ()
    if not isinstance(raw, list) or not raw:
        src.add(node, "'questions' must be a non-empty list")
        return ()
    game0, edition0 = _defaults(docs)
    editions: dict[str, set[str]] = {}
    for d in docs.values():
        if d.spec is not None:
            editions.setdefault(d.spec.game, set()).add(d.spec.edition)
    out: list[Question] = []
    first_line: dict[str, int] = {}
    for entry, qnode in zip(raw, _items(node, len(raw)), strict=True):
        if not isinstance(entry, dict):
            src.add(qnode, f"question entry must be a mapping, got {entry!r}")
            continue
        before = len(src.problems)
        qid = src.as_text(entry.get("id"), _child(qnode, "id"), "id", None)
        if qid is None:
            src.add(qnode, "question: missing required field 'id'")
        elif not isinstance(qid, str) or not qid.strip():
            src.add(qnode, f"question id must be a non-empty string (quote numbers), got {qid!r}")
            qid = None
        elif id_problem("question id", qid):
            src.add(_child(qnode, "id"), str(id_problem("question id", qid)))
            qid = None
        elif qid in first_line:
            src.add(qnode, f"duplicate question id (first at line {first_line[qid]})", qid)
        else:
            first_line[qid] = qnode.start_mark.line + 1
        unknown = sorted(str(k) for k in entry if k not in QUESTION_FIELDS)
        if unknown:
            src.add(qnode, f"unknown field(s) {', '.join(unknown)}; known: "
                    + ", ".join(QUESTION_FIELDS), qid)
        language = _text(entry, "language", qnode, src, "question", qid)
        if language is not None and not _LANGUAGE.match(language):
            src.add(qnode, f"language {language!r} is not a code like en, fa or pt-BR", qid)
        text = src.as_text(entry.get("question"), _child(qnode, "question"), "question", qid)
        if "question" not in entry:
            src.add(qnode, "missing required field 'question'", qid)
        elif not isinstance(text, str) or not text.strip():
            src.add(qnode, "empty question", qid)
        reqs: tuple[Requirement, ...] = ()
        if "pages" not in entry:
            src.add(qnode, "missing required field 'pages' (use [] for unanswerable)", qid)
        else:
            reqs = _requirements(entry["pages"], qnode, src, qid, docs, pages)
        tags = entry.get("tags", [])
        if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
            src.add(qnode, f"'tags' must be a list of strings, got {tags!r}", qid)
        named = _text(entry, "game", qnode, src, "question", qid, required=False)
        edition = _text(entry, "edition", qnode, src, "question", qid, required=False)
        game = named or game0
        if named is not None and named not in editions:
            src.add(qnode, f"unknown game {named!r}; games: " + ", ".join(sorted(editions)), qid)
        elif edition is not None and game is not None and edition not in editions.get(game, ()):
            src.add(qnode, f"unknown edition {edition!r} of {game!r}; editions: "
                    + ", ".join(sorted(editions.get(game, ()))), qid)
        if "edition" not in entry and game == game0:
            edition = edition0
        facts = answer_facts(entry.get("answer"), _child(qnode, "answer"), src, qid)
        judged = parse_judged(entry.get("judged"), _child(qnode, "judged"), docs,
                              partial(src.add, qid=qid), partial(pages.resolve, qid=qid))
        if len(src.problems) == before and isinstance(qid, str) and isinstance(text, str):
            out.append(Question(qid, text.strip(), str(language), reqs, tuple(tags), game, edition,
                                facts, judged))
    return tuple(out)


def answer_facts(raw: Any, node: yaml.Node, src: _Source, qid: str | None
                 ) -> tuple[Fact, ...]:
    """A question's ``answer: {facts: [...]}``: each fact a list of accepted phrasings
    (a lone string is one phrasing). Absent -> ``()``; every problem is recorded."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        src.add(node, f"'answer' must be a mapping like {{facts: [[...], ...]}}, got {raw!r}", qid)
        return ()
    unknown = sorted(str(k) for k in raw if k not in ANSWER_FIELDS)
    if unknown:
        src.add(node, f"answer: unknown field(s) {', '.join(unknown)}; known: "
                + ", ".join(ANSWER_FIELDS), qid)
    items = raw.get("facts")
    if not isinstance(items, list) or not items:
        src.add(node, "answer.facts must be a non-empty list of facts, each a list of "
                "accepted phrasings", qid)
        return ()
    out: list[Fact] = []
    for i, item in enumerate(items, start=1):
        group = [item] if isinstance(item, str) else item
        if (not isinstance(group, list) or not group
                or not all(isinstance(p, str) and p.strip() for p in group)):
            src.add(node, f"answer.facts[{i}] must be a phrasing or a non-empty list of "
                    f"non-empty phrasings, got {item!r}", qid)
            continue
        fact = tuple(dict.fromkeys(p.strip() for p in group))
        if fact in out:
            src.add(node, f"answer.facts[{i}] repeats an earlier fact", qid)
            continue
        out.append(fact)
    return tuple(out)


def document_root(goldset_path: Path) -> Path:
    """The folder a gold set's documents must lie in (unless outside paths are
    allowed): the gold set's folder, or its parent when that folder is named
    ``goldsets`` (the layout of this repository and of ``../shared``, where
    ``goldsets/x.yaml`` names ``../corpora/...``)."""
    # the folder the user named, not a link's target: documents are resolved from
    # there too, so a linked gold set finds its documents beside the link
    folder = Path(goldset_path).absolute().parent.resolve()
    return folder.parent if folder.name == "goldsets" else folder


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
    (``harness.corpus.loaders.count_pages``). A ``pages: label`` set is converted to
    physical pages through ``harness.corpus.loaders.page_labels`` whatever
    ``check_pages`` says, since the conversion needs the labels. Problems name the
    file and line (``sample.yaml:41``), plus the question id when there is one
    (``sample.yaml:41: question bw-07``). Document paths must lie under
    :func:`document_root` unless ``allow_outside``. Scalars YAML reads as numbers
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

    For ``harness validate``: the caller prints the problems and chooses the exit code.
    """
    return read_goldset(Path(path), check_pages=check_pages, allow_outside=allow_outside)[1]
