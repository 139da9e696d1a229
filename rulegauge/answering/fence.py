"""The answer fence: a pure check that rejects garbage answer text.

Definition (fence version :data:`FENCE_VERSION`)
------------------------------------------------
Given an answer text ``t`` (exactly as the answerer returned it, citation markers
and Markdown included):

* **letter density** = Unicode letters (category ``L*``) / non-space characters,
  both counted by :func:`rulegauge.core.text.letters_ratio`. It must be
  ``>= min_letter_density`` (0.45). Digits, punctuation, Markdown symbols and
  ``[n]`` markers count as non-space non-letters; Persian, Russian or any other
  script counts as letters.
* **glyph-index tokens**: matches of the patterns in :data:`GLYPH_PATTERNS`
  (PDF text-extraction debris) summed over all patterns; at most
  ``max_glyph_tokens`` (2) are allowed.
* **blobs** (a rulegauge addition; the service checks only the two rules above):
  runs of at least ``blob_min_chars`` (40) characters from the base64 alphabet
  (``A-Z a-z 0-9 + / _ -``) holding an upper-case letter, a lower-case letter and a
  digit (a URL path or a long compound word lacks one of the three). Random base64
  has a letter density near 0.82, so the density floor alone lets it through; at
  most ``max_blobs`` (0) are allowed. Set ``max_blobs=None`` to reproduce the
  service's verdicts exactly (:data:`SERVICE_PARAMS`).

Edge cases: a text with no non-space character has letter density 0.0 by
convention and fails with reason ``"empty answer"``. ``reason`` is ``"ok"`` on a
pass, otherwise every failed rule joined with ``"; "``.

Reference: the service's ruling page reports e.g. "answer fence: passed — letter
density 0.91911 of 2757 non-space chars (floor 0.45); 0 glyph-index tokens (max
2)"; docs/answering.md shows which text gives those counts.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from functools import lru_cache

from rulegauge.core.text import letters_ratio
from rulegauge.corpus.glyphs import GLYPH_PATTERNS, GlyphPattern

FENCE_VERSION = "1"


_BLOB_ALPHABET = r"[A-Za-z0-9+/_\-]"


@dataclass(frozen=True)
class FenceParams:
    """Versioned fence parameters; :meth:`fingerprint` identifies them in manifests."""

    min_letter_density: float = 0.45
    max_glyph_tokens: int = 2
    patterns: tuple[GlyphPattern, ...] = GLYPH_PATTERNS
    blob_min_chars: int = 40
    max_blobs: int | None = 0
    version: str = FENCE_VERSION

    def describe(self) -> dict[str, object]:
        return asdict(self)

    def fingerprint(self) -> str:
        """SHA-256 (first 12 hex digits) of every parameter, patterns included."""
        blob = json.dumps(self.describe(), sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()[:12]


DEFAULT_PARAMS = FenceParams()
SERVICE_PARAMS = FenceParams(max_blobs=None)
"""The service's own two rules (density floor and glyph-token cap), no blob rule."""


@dataclass(frozen=True)
class FenceResult:
    """Verdict of :func:`check`; ``glyph_counts`` is ``((pattern name, count), ...)``
    for the patterns that matched."""

    letter_density: float
    letters: int
    nonspace_chars: int
    glyph_tokens: int
    blobs: int
    passed: bool
    reason: str
    glyph_counts: tuple[tuple[str, int], ...] = ()


@lru_cache(maxsize=64)
def _compiled(regex: str) -> re.Pattern[str]:
    return re.compile(regex)


@lru_cache(maxsize=8)
def _blob_regex(min_chars: int) -> re.Pattern[str]:
    return re.compile(rf"{_BLOB_ALPHABET}{{{min_chars},}}")


def count_blobs(text: str, min_chars: int) -> int:
    """Base64-alphabet runs of >= ``min_chars`` holding upper case, lower case and a digit."""
    n = 0
    for m in _blob_regex(min_chars).finditer(text):
        s = m.group(0)
        if (any(c.isdigit() for c in s) and any(c.isupper() for c in s)
                and any(c.islower() for c in s)):
            n += 1
    return n


def check(text: str, params: FenceParams = DEFAULT_PARAMS) -> FenceResult:
    """Apply the fence to ``text`` (see the module docstring for the rules)."""
    letters, nonspace = letters_ratio(text)
    counts = tuple((p.name, c) for p in params.patterns
                   if (c := len(_compiled(p.regex).findall(text))) > 0)
    glyphs = sum(c for _, c in counts)
    blobs = count_blobs(text, params.blob_min_chars) if params.max_blobs is not None else 0
    if nonspace == 0:
        return FenceResult(0.0, 0, 0, glyphs, blobs, False, "empty answer", counts)
    density = letters / nonspace
    problems = []
    if density < params.min_letter_density:
        problems.append(f"letter density {density:.5f} below floor {params.min_letter_density}")
    if glyphs > params.max_glyph_tokens:
        problems.append(f"{glyphs} glyph-index tokens (max {params.max_glyph_tokens})")
    if params.max_blobs is not None and blobs > params.max_blobs:
        problems.append(f"{blobs} base64 blob(s) of >= {params.blob_min_chars} chars "
                        f"(max {params.max_blobs})")
    return FenceResult(density, letters, nonspace, glyphs, blobs, not problems,
                       "; ".join(problems) or "ok", counts)
