"""Optional boilerplate filter: running headers/footers, page numbers, web noise.

Off by default (``build_corpus(..., boilerplate=None)``); turn it on with a
:class:`BoilerplateOptions`. It works line by line on normalised page text and
returns cleaned pages plus a :class:`BoilerplateReport` of what it removed.

Rules, each a registered reason (:data:`RULES` order is the order applied):

``repeated``
    Running headers and footers. The first (last) non-empty line of every page
    is compared across the document's pages after lower-casing and masking
    digit runs as ``#`` (``System Reference Document 5.1 12`` ->
    ``system reference document #.# #``); a line shared by at least
    ``min_share`` of the pages and by at least ``min_pages`` pages is removed,
    and the new first (last) lines are compared again, up to ``edge_lines``
    rounds (multi-line headers). Only page edges are peeled, so a section title
    repeated on every page *below* a unique first line (``Setup`` under each
    game name of a solitaire manual) stays; a line ending like a sentence
    (``. , ; : ! ?``) is body text and never a candidate (``Maximum possible
    score: 51.`` closing many pages stays).
``page_number``
    A first or last line that is only a page number: ``12``, ``- 12 -``,
    ``Page 12``, ``12 / 40``, ``Page 12 of 40``, ``xiv``.
``web_noise``
    Whole lines of web furniture: navigation (``Skip to content``, ``Back to
    top``, ``Main menu``), teasers (``Read more``, ``Continue reading``), sharing
    and subscription prompts, comment counters, cookie banners. Single words
    that are also rule headings (``Search``, ``Home``, ``Menu``) are not noise.
``tail``
    An end-of-article block: a marker line (``Latest from Blog``, ``Related
    posts``, ``You may also like``, ``Don't miss``, ``Recent posts``, ``Leave a
    reply``) in the second half of a page removes itself and everything after it.
``teaser``
    Blog-post excerpts: lines of at least 15 words ending in an ellipsis, when a
    page has two or more of them (one such line is usually a rule that trails
    off, "... looks like this...").

Lines longer than ``max_line_chars`` are never ``repeated``/``page_number``.
Reference: Gibson, Wellner & Lubar, "Adaptive web-page content identification"
(WIDM 2007) for the repeated-block idea; the rules here are simpler.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace

from rulegauge.core.registry import Registry
from rulegauge.core.text import normalise
from rulegauge.corpus.records import Page


@dataclass(frozen=True)
class BoilerplateOptions:
    """Parameters of the filter (see the module docstring for the rules)."""

    rules: tuple[str, ...] = ("repeated", "page_number", "web_noise", "tail", "teaser")
    edge_lines: int = 3
    min_share: float = 0.5
    min_pages: int = 3
    max_line_chars: int = 120
    examples: int = 3

    def describe(self) -> dict[str, object]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class Removal:
    """One removed line: physical page, rule name and the line's text."""

    page: int
    reason: str
    text: str


@dataclass(frozen=True)
class BoilerplateReport:
    """What the filter removed from one document.

    ``by_reason`` counts removed lines per rule; ``examples`` holds up to
    ``options.examples`` distinct lines per rule; ``page_share`` gives, for each
    page that lost text, the share of its non-space characters removed.
    """

    doc_id: str
    lines_removed: int
    chars_removed: int
    by_reason: tuple[tuple[str, int], ...]
    examples: tuple[tuple[str, str], ...]
    page_share: tuple[tuple[int, float], ...]


Lines = list[list[str]]
Marks = list[dict[int, str]]
Rule = Callable[[Lines, Marks, BoilerplateOptions], None]
RULES: Registry[Rule] = Registry("boilerplate rule")

_DIGITS = re.compile(r"\d+")
_SENTENCE_END = tuple(".,;:!?")
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+|p\.\s*)?[-–—]?\s*(?:\d{1,4}|[ivxlcdm]{1,7})\s*[-–—]?"
    r"(?:\s*(?:/|of)\s*\d{1,4})?$", re.IGNORECASE)
_WEB_NOISE = re.compile(
    r"^(?:skip to (?:main )?content|(?:back|go|aller [àa]) ?(?:to )?top|main menu|toggle navigation"
    r"|read more|continue reading|read the full (?:article|post|story)|click here.*"
    r"|share(?: this(?: post| article)?)?(?: on \w+)?:?|tweet|pin it|(?:click to )?share on \w+"
    r"|subscribe(?: (?:to|now).*)?|sign up for (?:our|the) newsletter.*|join our newsletter.*"
    r"|(?:\d+|no) comments?(?: yet)?|leave a comment|post a comment"
    r"|previous post|next post|posted in .{0,80}|tags?: .{0,120}|categories: .{0,120}"
    r"|like this:|loading\.\.\.|.{0,200}\bcookies?\b.{0,200}\b(?:accept|consent|agree)\b.{0,200}"
    r"|(?:accept|reject) (?:all )?cookies)[.!]?$",
    re.IGNORECASE)
_TAIL = re.compile(
    r"^(?:latest from (?:the )?blog|related (?:posts|articles)|you (?:may|might) also like"
    r"|don[’']t miss|recent posts|leave a reply|more from .{1,40})[.:!]?$",
    re.IGNORECASE)
_ELLIPSIS = re.compile(r"(?:…|\.\.\.)$")


def _nonempty(lines: list[str], marks: dict[int, str]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.strip() and i not in marks]


@RULES.register("repeated")
def _repeated(pages: Lines, marks: Marks, opt: BoilerplateOptions) -> None:
    need = max(opt.min_pages, opt.min_share * len(pages))
    for from_top in (True, False):
        for _ in range(opt.edge_lines):
            edge: dict[int, tuple[int, str]] = {}
            for p, lines in enumerate(pages):
                idx = _nonempty(lines, marks[p])
                if idx:
                    i = idx[0] if from_top else idx[-1]
                    line = lines[i].strip()
                    if len(line) <= opt.max_line_chars and not line.endswith(_SENTENCE_END):
                        edge[p] = (i, _DIGITS.sub("#", line.casefold()))
            counts = Counter(key for _, key in edge.values())
            hit = False
            for p, (i, key) in edge.items():
                if counts[key] >= need:
                    marks[p][i], hit = "repeated", True
            if not hit:
                break


@RULES.register("page_number")
def _page_number(pages: Lines, marks: Marks, opt: BoilerplateOptions) -> None:
    for p, lines in enumerate(pages):
        idx = _nonempty(lines, marks[p])
        for i in {idx[0], idx[-1]} if idx else ():
            if len(lines[i]) <= opt.max_line_chars and _PAGE_NUMBER.match(lines[i].strip()):
                marks[p][i] = "page_number"


@RULES.register("web_noise")
def _web_noise(pages: Lines, marks: Marks, opt: BoilerplateOptions) -> None:
    for p, lines in enumerate(pages):
        for i in _nonempty(lines, marks[p]):
            if _WEB_NOISE.match(lines[i].strip()):
                marks[p][i] = "web_noise"


@RULES.register("tail")
def _tail(pages: Lines, marks: Marks, opt: BoilerplateOptions) -> None:
    for p, lines in enumerate(pages):
        total = sum(len(line) + 1 for line in lines)
        offset = 0
        for i, line in enumerate(lines):
            if offset >= total / 2 and _TAIL.match(line.strip()):
                for j in _nonempty(lines, marks[p]):
                    if j >= i:
                        marks[p][j] = "tail"
                break
            offset += len(line) + 1


@RULES.register("teaser")
def _teaser(pages: Lines, marks: Marks, opt: BoilerplateOptions) -> None:
    for p, lines in enumerate(pages):
        found = [i for i in _nonempty(lines, marks[p])
                 if len(lines[i].split()) >= 15 and _ELLIPSIS.search(lines[i].strip())]
        if len(found) >= 2:
            for i in found:
                marks[p][i] = "teaser"


def clean_pages(pages: Sequence[Page], options: BoilerplateOptions | None = None,
                doc_id: str | None = None) -> tuple[list[Page], BoilerplateReport]:
    """Remove boilerplate lines from one document's pages (inputs are not mutated).

    Cleaned text is re-normalised (blank-line runs collapse). A document with no
    pages gives an empty report under ``doc_id`` (or ``""``).
    """
    opt = options or BoilerplateOptions()
    rules = [RULES.get(name) for name in opt.rules]  # unknown names raise, listing choices
    lines: Lines = [p.text.split("\n") for p in pages]
    marks: Marks = [{} for _ in pages]
    for rule in rules:
        rule(lines, marks, opt)
    cleaned: list[Page] = []
    removals: list[Removal] = []
    shares: list[tuple[int, float]] = []
    for page, page_lines, page_marks in zip(pages, lines, marks, strict=True):
        if not page_marks:
            cleaned.append(page)
            continue
        kept = [line for i, line in enumerate(page_lines) if i not in page_marks]
        removals += [Removal(page.page, page_marks[i], page_lines[i]) for i in sorted(page_marks)]
        gone = sum(len("".join(page_lines[i].split())) for i in page_marks)
        shares.append((page.page, gone / max(1, len("".join(page.text.split())))))
        cleaned.append(replace(page, text=normalise("\n".join(kept))))
    return cleaned, _report(doc_id or (pages[0].doc_id if pages else ""), removals, shares, opt)


def _report(doc_id: str, removals: list[Removal], shares: list[tuple[int, float]],
            opt: BoilerplateOptions) -> BoilerplateReport:
    by_reason = Counter(r.reason for r in removals)
    examples: list[tuple[str, str]] = []
    for reason in RULES.names():
        seen: list[str] = []
        for r in removals:
            if r.reason == reason and r.text not in seen and len(seen) < opt.examples:
                seen.append(r.text)
        examples += [(reason, text) for text in seen]
    return BoilerplateReport(
        doc_id, len(removals), sum(len(r.text) for r in removals),
        tuple((name, by_reason[name]) for name in RULES.names() if by_reason[name]),
        tuple(examples), tuple(shares))
