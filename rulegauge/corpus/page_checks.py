"""Page checks of the ingestion report: which pages look wrong, and why.

Each check is registered by name in :data:`PAGE_CHECKS` and returns a message or None;
thresholds live in :class:`IngestThresholds`. Used by :mod:`rulegauge.corpus.ingest`.

Page warnings (:data:`PAGE_CHECKS`, thresholds in :class:`IngestThresholds`)
-------------------------------------------------------------------------------
``empty``               no visible character (blank or image-only page)
``near_empty``          fewer than ``near_empty_letters`` letters (a cover, a
                        page number, an image with a caption)
``short``               fewer than ``short_page_chars`` characters otherwise
``long``                more than ``long_page_chars`` characters
``glyph_debris``        glyph-index tokens (``(cid:12)``, ``/g123``, ``glyph12``,
                        ``/uni00E9``: a PDF font without a usable ToUnicode map)
                        or characters text of any format can hold (U+FFFD,
                        stray controls, private use), each kind named as what it is
``low_letter_density``  letters / non-space characters below
                        ``min_letter_density`` (the answer fence's 0.45) on a
                        page with at least ``near_empty_letters`` letters
``mostly_boilerplate``  the filter removed at least ``boilerplate_share`` of
                        the page's non-space characters
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rulegauge.core.registry import Registry
from rulegauge.core.text import letters_ratio
from rulegauge.corpus.glyphs import glyph_summary
from rulegauge.corpus.records import Page


@dataclass(frozen=True)
class IngestThresholds:
    """Limits of the page checks (see the module docstring)."""

    short_page_chars: int = 200
    long_page_chars: int = 15000
    near_empty_letters: int = 40
    min_letter_density: float = 0.45
    boilerplate_share: float = 0.5


PageCheck = Callable[[Page, IngestThresholds, float], str | None]
PAGE_CHECKS: Registry[PageCheck] = Registry("page check")


def _counts(page: Page) -> tuple[int, int]:
    return letters_ratio(page.text)


@PAGE_CHECKS.register("empty")
def _empty(page: Page, th: IngestThresholds, removed: float) -> str | None:
    return "no text (blank or image-only page)" if not page.text.strip() else None


@PAGE_CHECKS.register("near_empty")
def _near_empty(page: Page, th: IngestThresholds, removed: float) -> str | None:
    letters, _ = _counts(page)
    if page.text.strip() and letters < th.near_empty_letters:
        return f"only {letters} letters (cover, image-only or page-number page?)"
    return None


@PAGE_CHECKS.register("short")
def _short(page: Page, th: IngestThresholds, removed: float) -> str | None:
    letters, _ = _counts(page)
    if letters >= th.near_empty_letters and len(page.text) < th.short_page_chars:
        return f"{len(page.text)} characters"
    return None


@PAGE_CHECKS.register("long")
def _long(page: Page, th: IngestThresholds, removed: float) -> str | None:
    return f"{len(page.text)} characters" if len(page.text) > th.long_page_chars else None


@PAGE_CHECKS.register("glyph_debris")
def _glyphs(page: Page, th: IngestThresholds, removed: float) -> str | None:
    return glyph_summary(page.text)


@PAGE_CHECKS.register("low_letter_density")
def _density(page: Page, th: IngestThresholds, removed: float) -> str | None:
    letters, nonspace = _counts(page)
    if letters >= th.near_empty_letters and letters / nonspace < th.min_letter_density:
        return f"letter density {letters / nonspace:.2f} < {th.min_letter_density}"
    return None


@PAGE_CHECKS.register("mostly_boilerplate")
def _boiler(page: Page, th: IngestThresholds, removed: float) -> str | None:
    return f"{removed:.0%} removed as boilerplate" if removed >= th.boilerplate_share else None
