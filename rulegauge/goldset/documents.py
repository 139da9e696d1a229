"""The ``documents:`` of a gold set: entries checked, paths confined, pages resolved.

:func:`read_documents` checks each entry (id, kind, language, a file under
:func:`document_root` unless outside paths are allowed; unknown keys kept as loader
options, with a note); :class:`PageBook` resolves the page part of a ref to a physical
page, reading each document once; :func:`default_game` is the (game, edition) of
questions that name none.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.limits import MAX_GOLDSET_BYTES, size_problem
from rulegauge.core.names import id_problem
from rulegauge.corpus import loaders
from rulegauge.corpus.records import DOC_KINDS, DocumentSpec
from rulegauge.goldset import yamlsafe
from rulegauge.goldset.records import DOCUMENT_FIELDS
from rulegauge.goldset.source import DOC_ID, LANGUAGE, Source, child, items, text_field


def document_root(goldset_path: Path) -> Path:
    """The folder a gold set's documents must lie in (unless outside paths are
    allowed): the gold set's folder, or its parent when that folder is named
    ``goldsets`` (the layout of this repository and of ``../shared``, where
    ``goldsets/x.yaml`` names ``../corpora/...``)."""
    # the folder the user named, not a link's target: documents are resolved from
    # there too, so a linked gold set finds its documents beside the link
    folder = Path(goldset_path).absolute().parent.resolve()
    return folder.parent if folder.name == "goldsets" else folder


def freeze(value: Any) -> Any:
    """Options must be hashable: lists become tuples, mappings sorted (key, value) tuples."""
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((str(k), freeze(v)) for k, v in value.items()))
    return value


@dataclass(frozen=True)
class Doc:
    spec: DocumentSpec | None  # None when the entry itself has problems
    node: yaml.Node
    # the game and edition the entry declares, kept when it has problems (a wrong path):
    # questions of that game are not then reported again as "unknown game" (one cause, once)
    game: str | None = None
    edition: str | None = None


def read_documents(raw: Any, node: yaml.Node, src: Source) -> dict[str, Doc]:
    if raw is None:
        src.add(node, "gold set: missing required field 'documents'")
        return {}
    if not isinstance(raw, list) or not raw:
        src.add(node, "'documents' must be a non-empty list")
        return {}
    docs: dict[str, Doc] = {}
    for entry, dnode in zip(raw, items(node, len(raw)), strict=True):
        if not isinstance(entry, dict):
            src.add(dnode, f"document entry must be a mapping, got {entry!r}")
            continue
        before = len(src.problems)
        doc_id = text_field(entry, "id", dnode, src, "document")
        what = f"document {doc_id or '?'}"
        if doc_id is not None and id_problem("document id", doc_id):
            src.add(child(dnode, "id"), str(id_problem("document id", doc_id)))
        elif doc_id is not None and not DOC_ID.match(doc_id):
            src.add(child(dnode, "id"), f"{what}: id may not contain '#' or spaces")
        elif doc_id is not None and doc_id in docs:
            src.add(child(dnode, "id"), f"duplicate document id {doc_id!r} "
                    f"(first at line {docs[doc_id].node.start_mark.line + 1})")
            continue
        fields = {k: text_field(entry, k, dnode, src, what) for k in DOCUMENT_FIELDS[1:]}
        if fields["kind"] is not None and fields["kind"] not in DOC_KINDS:
            src.add(child(dnode, "kind"), f"{what}: unknown kind {fields['kind']!r}; choose one "
                    f"of: {', '.join(DOC_KINDS)}")
        if fields["language"] is not None and not LANGUAGE.match(fields["language"]):
            src.add(child(dnode, "language"),
                    f"{what}: language {fields['language']!r} is not a code like en, fa or pt-BR")
        title = text_field(entry, "title", dnode, src, what, required=False) or ""
        full = Path(fields["path"]) if fields["path"] is not None else None
        if full is not None:
            full = (src.path.parent / full).resolve()
            root = document_root(src.path)
            if not src.allow_outside and not full.is_relative_to(root):
                src.add(child(dnode, "path"), f"{what}: document path {fields['path']!r} "
                        f"leads outside {root}; move the file there or pass --allow-outside")
            elif not full.is_file():
                src.add(child(dnode, "path"), f"{what}: missing document file {full}")
        spec = None
        if len(src.problems) == before and doc_id is not None and full is not None:
            options = tuple(sorted((k, freeze(v)) for k, v in entry.items()
                                   if k not in {*DOCUMENT_FIELDS, "title"}))
            for key, _ in options:  # kept (free-form), but a misspelt `fromat:` is visible
                if key not in loaders.LOADER_OPTIONS:
                    src.notes.append(Problem(src.where(child(dnode, key)), f"{what}: key "
                                             f"{key!r} is no field and no loader reads it "
                                             f"(loader options: {', '.join(loaders.LOADER_OPTIONS)}"
                                             "); kept as an option"))
            spec = DocumentSpec(doc_id, str(full), str(fields["kind"]), str(fields["game"]),
                                str(fields["edition"]), str(fields["language"]), title, options)
        if doc_id is not None:
            docs[doc_id] = Doc(spec, dnode, fields["game"], fields["edition"])
    return docs


class PageBook:
    """Resolves the page part of a ref to a physical page, reading each document once."""

    def __init__(self, docs: dict[str, Doc], src: Source, *, check_pages: bool,
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
        except (RulegaugeError, OSError, ValueError) as exc:
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


def default_game(docs: dict[str, Doc]) -> tuple[str | None, str | None]:
    """(game, edition) for questions that name none: the only game, and its rulebook's
    edition when its rulebooks share one edition; otherwise None."""
    specs = [d.spec for d in docs.values() if d.spec is not None]
    games = {s.game for s in specs}
    if len(games) != 1:
        return None, None
    editions = {s.edition for s in specs if s.kind == "rulebook"}
    return next(iter(games)), (next(iter(editions)) if len(editions) == 1 else None)


def named_paths(goldset_path: Path | str) -> tuple[tuple[str, Path], ...]:
    """(id, file) of each document a gold set's ``documents:`` names, the file resolved as
    :func:`read_documents` resolves it (from the gold set's folder), for the output check
    (:mod:`rulegauge.cli.outputs`).

    Edge cases: a gold set that cannot be read (missing, too large, not YAML, no
    ``documents`` list) names nothing here; reading it for real reports why. Entries without a
    text ``path`` are skipped; one without a text ``id`` is named ``?``."""
    path = Path(goldset_path)
    if size_problem(path, MAX_GOLDSET_BYTES) or not path.is_file():
        return ()
    try:
        data = path.read_bytes()
    except OSError:
        return ()
    root, problems = yamlsafe.compose(path, data)
    raw, problems = (None, problems) if root is None or problems else yamlsafe.construct(path, root)
    entries = raw.get("documents") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        return ()
    return tuple((e["id"] if isinstance(e.get("id"), str) else "?", (path.parent / e["path"]).resolve())
                 for e in entries
                 if isinstance(e, dict) and isinstance(e.get("path"), str) and e["path"])
