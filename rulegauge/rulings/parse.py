"""Parse one production ruling page into a :class:`~rulegauge.rulings.records.Ruling`.

The page is split by structure (``rulegauge.rulings.segment``); the top gives the
question and answer (``rulegauge.rulings.top``); every ``key: value`` line of the
debug block goes to its label's handler (``rulegauge.rulings.labels``), tables
and raw JSON lists are recognised by shape (``rulegauge.rulings.rows``).

Conventions
-----------
* Unknown sections (a head not in ``segment.SECTION_HEADS``) are kept verbatim
  in the ``unknown`` column (``{"sections": {head: text}, "fields": {label:
  value}, "tables": [text]}``), as are unknown ``key: value`` lines and tables.
* A missing field is None and adds one warning naming it (:data:`EXPECTED`).
* The passage-search rows merge the raw refs JSON (item i is fused rank i) with
  the printed table by fused rank; citations merge the answer's reference list,
  the raw citations JSON (item i is [i]) and the chosen-chunks table by number.
  Disagreements between two sources are warnings; the table wins.
* ``k`` defaults to 60 with a warning when the page does not state it; the arm
  count comes from the "arms fused" line, else the "N-ARM fuse" sentence, else
  the score cells' "N-arm ceiling", else the reported ceiling times ``k + 1``.
* A page without a question, or without both an answer and a debug block, is a
  :class:`~rulegauge.rulings.records.ParseFailure` naming what was missing.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rulegauge.core.errors import Problem
from rulegauge.rulings.labels import LABELS, NOTES, PROSE, Acc
from rulegauge.rulings.merge import merge_citations, merge_reads, merge_search
from rulegauge.rulings.records import ParseFailure, Ruling
from rulegauge.rulings.rows import JsonItem, json_items, parse_table, tab_runs
from rulegauge.rulings.segment import Segments, canon_label, decode_page, kv, segment
from rulegauge.rulings.top import parse_top

EXPECTED: dict[str, str] = {
    "question": "question", "game": "game ('Asked with' line)",
    "edition": "edition tag ('Asked with' line)", "answer_text": "answer text",
    "outcome": "outcome line", "corpus_profile": "corpus profile line",
    "answerer_pin": "answerer pin line", "search_ms": "search timing", "ask_ms": "ask timing",
    "total_ms": "total timing", "queued_ms": "queued timing",
    "first_delta_ms": "first-delta timing", "refs_json": "retrieval refs JSON",
    "citations_json": "citations JSON", "boost_provenance": "boost provenance line",
    "fence_letter_density": "answer fence line", "arms_fused": "arms fused line",
    "floors_armed": "floors armed line", "candidate_pool": "candidate pool line",
    "tokens_in": "tokens in line", "tokens_out": "tokens out line",
    "tokens_per_sec": "tok/sec line", "errata_registry": "errata registry line",
}
"""Columns every complete page fills -> what to call them in a 'missing' warning."""

_KNOWN = frozenset(LABELS.names()) | NOTES


def ruling_id(path: Path) -> str:
    """The ruling's id: the file name without extension, reduced to ``[A-Za-z0-9._-]``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", path.stem).strip("-") or "ruling"


def parse_file(path: Path, question_id: str | None = None) -> Ruling | ParseFailure:
    """Read and parse one ruling page file."""
    path = Path(path)
    data = path.read_bytes()
    return parse_bytes(data, str(path), question_id or ruling_id(path))


def parse_bytes(data: bytes, source: str, question_id: str) -> Ruling | ParseFailure:
    """Parse page bytes; ``source`` names the file in warnings."""
    sha = hashlib.sha256(data).hexdigest()
    try:
        text, notes = decode_page(data)
    except UnicodeDecodeError as exc:
        return ParseFailure(source, sha, ("UTF-8 text",),
                            (Problem(source, f"not UTF-8 text (byte {exc.start})"),))
    return parse_text(text, source, question_id, sha, notes)


def parse_text(text: str, source: str, question_id: str, sha256: str = "",
               notes: tuple[str, ...] = ()) -> Ruling | ParseFailure:
    """Parse normalised page text (see the module docstring)."""
    acc = Acc(source)
    for note in notes:
        acc.warn(note, 0)
    seg = segment(text, _KNOWN)
    top = parse_top(seg.top)
    for line, message in top.problems:
        acc.warn(message, line)
    missing = [m for m, bad in (("question", top.question is None),
                                ("answer or debug block", top.answer is None and not seg.sections))
               if bad]
    if missing:
        return ParseFailure(source, sha256, tuple(missing), tuple(acc.problems))
    unknown = _debug(seg, acc)
    tables = _tables(seg, acc, unknown)
    refs_items, cit_items = _json_lists(acc)
    v = acc.values
    for name, value in (("title", top.title), ("question", top.question), ("badge", top.badge),
                        ("game", top.game), ("edition", top.edition), ("answer_text", top.answer),
                        ("signoff", top.signoff)):
        acc.set(name, value)
    search = merge_search(refs_items, tables.get("search"), acc)
    reads = merge_reads(tables.get("reads"), acc)
    cits = merge_citations(top.refs, cit_items, tables.get("citations"), top.answer, acc)
    _fusion_shape(acc, search, reads)
    v.update(n_answer_refs=len(top.refs), n_search=len(search), n_reads=len(reads),
             n_citations=len(cits), notes=json.dumps(acc.notes, ensure_ascii=False, sort_keys=True),
             unknown=json.dumps(unknown, ensure_ascii=False, sort_keys=True))
    for column, label in EXPECTED.items():
        if v.get(column) is None:
            acc.warn(f"missing: {label} (stored as null)", 0)
    for kind, label in (("search", "passage-search table"), ("reads", "answerer-read table"),
                        ("citations", "chosen-chunks table")):
        if kind not in tables:
            acc.warn(f"missing: {label}", 0)
    v["warnings"] = tuple(str(p) for p in acc.problems)
    return Ruling(question_id, source, sha256, MappingProxyType(dict(v)), search, reads, cits,
                  tuple(acc.problems))


def _debug(seg: Segments, acc: Acc) -> dict[str, object]:
    """Run label and prose handlers over the debug block; return the unknown parts."""
    sections: dict[str, str] = {}
    for sec in seg.sections:
        if sec.head is not None and sec.key is None:
            sections[sec.head] = sec.verbatim()
        for ln in sec.lines:
            if not ln.text.strip() or "\t" in ln.text:
                continue
            acc.line = ln.no
            pair = kv(ln.text)
            label = canon_label(pair[0]) if pair else None
            if pair and label is not None and label in LABELS:
                LABELS.get(label)(pair[1], acc)
            elif pair and label in NOTES:
                acc.notes[f"{sec.key or sec.head or 'debug'}: {label}"] = pair[1]
            elif pair:
                acc.unknown_fields[pair[0]] = pair[1]
                if pair[1].startswith("["):
                    acc.loose_json.append((ln.no, pair[1]))
            for _, prose in PROSE.items():
                m = prose.pattern.search(ln.text)
                if m:
                    prose.handle(m, ln.text, acc)
    return {"sections": sections, "fields": acc.unknown_fields, "tables": []}


def _tables(seg: Segments, acc: Acc, unknown: dict[str, object]) -> dict[str, object]:
    found: dict[str, object] = {}
    lines = [ln for sec in seg.sections for ln in sec.lines]
    for run in tab_runs(lines):
        table = parse_table(run)
        for line, message in table.problems:
            acc.warn(message, line)
        if table.kind is None:
            unknown["tables"].append(table.text)  # type: ignore[attr-defined]
            acc.warn("table not recognised; kept verbatim", table.line)
        elif table.kind in found:
            acc.warn(f"second {table.kind} table ignored", table.line)
        else:
            found[table.kind] = table
    return found


def _json_lists(acc: Acc) -> tuple[list[JsonItem], list[JsonItem]]:
    """Items of the refs and citations JSON: labelled lines first, then JSON values of
    unknown labels (another language) recognised by their items' keys."""
    out: dict[str, list[JsonItem]] = {"refs": [], "citations": []}
    for name in out:
        if name in acc.raw_json:
            line, raw = acc.raw_json[name]
            kind, items, problems = json_items(raw)
            for p in problems:
                acc.warn(f"{name} JSON: {p}", line)
            if kind is not None and kind != name:
                acc.warn(f"{name} JSON holds {kind} items", line)
            acc.set(f"{name}_json", raw)
            out[name] = items
    for line, raw in acc.loose_json:
        kind, items, problems = json_items(raw)
        if kind in out and f"{kind}_json" not in acc.values:
            for p in problems:
                acc.warn(f"{kind} JSON: {p}", line)
            acc.set(f"{kind}_json", raw)
            out[kind] = items
        elif kind is None and problems:
            acc.warn(f"JSON value of an unknown label not parsed: {problems[0]}", line)
    return out["refs"], out["citations"]


def _fusion_shape(acc: Acc, search: tuple[Any, ...], reads: tuple[Any, ...]) -> None:
    v = acc.values
    if v.get("k") is None:
        acc.warn("the page does not state k; 60 assumed", 0)
        v["k"] = 60.0
    arms = v.get("arms_fused")
    n = len(arms) if arms else acc.arms_prose  # type: ignore[arg-type]
    note_arms = {r.band_arms for r in (*search, *reads) if r.band_arms is not None}
    if n is None and len(note_arms) == 1:
        n = next(iter(note_arms))
    ceilings = {r.band_ceiling for r in (*search, *reads) if r.band_ceiling is not None}
    if v.get("ceiling_reported") is None and len(ceilings) == 1:
        v["ceiling_reported"] = next(iter(ceilings))
    if n is None and v.get("ceiling_reported") is not None:
        n = round(float(v["ceiling_reported"]) * (float(v["k"]) + 1))  # type: ignore[arg-type]
    if n is None:
        acc.warn("number of fused arms unknown: scores cannot be decoded", 0)
        return
    v["n_arms"] = int(n)
    v["ceiling"] = int(n) / (float(v["k"]) + 1)  # type: ignore[arg-type]
    if note_arms and note_arms != {int(n)}:
        acc.warn(f"score cells name a {sorted(note_arms)}-arm ceiling but {n} arms were fused", 0)

