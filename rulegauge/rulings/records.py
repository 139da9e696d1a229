"""Records of one parsed production ruling page (frozen; built by ``rulegauge.rulings.parse``).

Naming follows the core tables: ``doc_id`` is the document id *in production's
namespace* (the ``corpus doc N`` number, as a string), ``page`` the page the page
prints (``p.5`` -> 5), ``fused_rank`` the 1-based position in production's fused
list. Everything the page does not show is ``None``. ``line`` fields are 1-based
line numbers in the page, for warnings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from rulegauge.core.errors import Problem


@dataclass(frozen=True)
class DocCell:
    """A production document as printed: ``RULEBOOK Game — Rulebook (corpus doc 1071)``.

    ``kind`` is the lower-cased upper-case prefix (``rulebook``, ``errata``...),
    ``title`` the printed name without the trailing ``(corpus doc N)``.
    """

    doc_id: str | None
    kind: str | None
    title: str | None


@dataclass(frozen=True)
class SearchRow:
    """One passage-search row, merged from the raw refs JSON and the printed table.

    ``band`` is the score cell's verdict word (``healthy``); ``band_arms`` and
    ``band_ceiling`` the "N-arm ceiling X" the cell prints."""

    fused_rank: int
    doc: DocCell
    heading: str | None
    page: int | None
    fused_score: float | None
    band: str | None
    band_arms: int | None
    band_ceiling: float | None
    snippet: str | None
    snippet_chars: int | None
    in_json: bool
    in_table: bool
    line: int


@dataclass(frozen=True)
class ReadRow:
    """One passage the answerer read (``read_at`` = its place in the read order).

    ``carried_by`` holds rulegauge arm names (``dense``, ``bm25``, ``boost``) for the
    arms production names; ``slot`` is ``reranker``, ``floor:<name>`` or the raw text.
    """

    read_at: int
    doc: DocCell
    heading: str | None
    page: int | None
    fused_rank: int | None
    fused_score: float | None
    band: str | None
    band_arms: int | None
    band_ceiling: float | None
    carried_by: tuple[str, ...] | None
    carried_by_raw: str | None
    slot: str | None
    slot_raw: str | None
    line: int


@dataclass(frozen=True)
class CitationRow:
    """One entry ``[n]`` of the answer's reference list, merged with the raw citations
    JSON and the "chosen chunks" table. ``quote_chars`` is None when no quote was sent."""

    n: int
    doc: DocCell
    heading: str | None
    page: int | None
    quote: str | None
    quote_chars: int | None
    in_answer_list: bool
    in_json: bool
    in_table: bool
    line: int


@dataclass(frozen=True)
class Fence:
    """The page's fence line: verdict, letter density of N non-space chars (floor),
    glyph-index tokens (max)."""

    passed: bool | None
    verdict: str | None
    letter_density: float | None
    nonspace_chars: int | None
    floor: float | None
    glyph_tokens: int | None
    glyph_max: int | None


@dataclass(frozen=True)
class Ruling:
    """Everything parsed from one ruling page. ``values`` is a read-only mapping of
    the ``rulings`` columns (``rulegauge.rulings.tables.RULINGS``) to their values;
    lists are tuples."""

    question_id: str
    source_file: str
    source_sha256: str
    values: Mapping[str, object] = field(hash=False)
    search: tuple[SearchRow, ...] = ()
    reads: tuple[ReadRow, ...] = ()
    citations: tuple[CitationRow, ...] = ()
    warnings: tuple[Problem, ...] = ()

    def get(self, name: str) -> object:
        return self.values.get(name)


@dataclass(frozen=True)
class ParseFailure:
    """A page that could not be parsed at all: which file and what was missing."""

    source_file: str
    source_sha256: str | None
    missing: tuple[str, ...]
    warnings: tuple[Problem, ...] = ()

    def __str__(self) -> str:
        return f"{self.source_file}: not a ruling page (missing: {', '.join(self.missing)})"
