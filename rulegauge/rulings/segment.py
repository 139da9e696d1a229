"""Split a ruling page into its structure: the user-facing top and the debug sections.

Structure, not wording, decides wherever it can, so a page whose labels are in
another language still splits the same way:

* Text is UTF-8 (a BOM is dropped); CR LF and lone CR become LF; when the page
  holds HTML character references (``&amp;``, ``&quot;``, ``&#39;``) the whole
  text is unescaped once with :func:`html.unescape` (a page saved from the HTML
  source escapes everything, JSON quotes included).
* The debug block starts at the first line beginning with the wrench emoji
  (U+1F527), or at a known English section head standing alone after the
  answer's reference list if that comes first (sections may be shuffled);
  failing both, at the first ``key: value`` line with a known English label or a
  JSON list value. Everything before it is the *top* (question, answer,
  reference list).
* Inside the debug block a *section head* is a line standing alone between
  blank lines that is not a ``key: value`` line, not a table row and does not
  end with a period, and is either a known English head (:data:`SECTION_HEADS`)
  or looks like one (holds " — " or has at most 40 characters).

Reference: ``../shared/rulings/ruling-archaeology-how-to-play.txt`` and
``docs/rulings.md``.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from rulegauge.core.registry import Registry

DEBUG_MARK = "\U0001f527"
_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#\d{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_KV = re.compile(r"^(?P<key>[^\t\[#{][^\t]{0,159}?): (?P<value>.*)$")

SECTION_HEADS: Registry[str] = Registry("ruling section")
"""Known English section heads (text before " — ", lower case) -> section key."""
for _head, _key in (("debug", "debug"), ("retrieval", "retrieval"),
                    ("what the answerer read", "reads"), ("chosen chunks", "citations"),
                    ("generation", "generation"), ("disposition", "disposition"),
                    ("setup-shape", "setup-shape"), ("errata registry", "errata registry")):
    SECTION_HEADS.add(_head, _key)


@dataclass(frozen=True)
class Line:
    """One line of the page; ``no`` is 1-based."""

    no: int
    text: str


@dataclass(frozen=True)
class Section:
    """A debug section: its head line (None for lines before the first head) and
    the canonical key of a known head (None when the head is not known)."""

    head: str | None
    key: str | None
    line: int
    lines: tuple[Line, ...]

    def verbatim(self) -> str:
        return "\n".join(ln.text for ln in self.lines).strip("\n")


@dataclass(frozen=True)
class Segments:
    top: tuple[Line, ...]
    sections: tuple[Section, ...]
    debug_line: int | None


def decode_page(data: bytes) -> tuple[str, tuple[str, ...]]:
    """Page bytes -> normalised text and notes on what was done (see module docstring).

    Raises :class:`UnicodeDecodeError` when the bytes are not UTF-8.
    """
    text = data.decode("utf-8-sig")
    notes = []
    if "\r" in text:
        notes.append("Windows (CR LF) line endings converted")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _ENTITY.search(text):
        notes.append("HTML character references unescaped")
        text = html.unescape(text)
    return text, tuple(notes)


def kv(text: str) -> tuple[str, str] | None:
    """``(key, value)`` of a ``key: value`` line (split at the first ": "), else None."""
    m = _KV.match(text)
    return (m["key"].strip(), m["value"].strip()) if m else None


def canon_label(key: str) -> str:
    """Label without parentheticals or the " — ..." gloss, lower case, spaces collapsed:
    ``answerer pin (deploy-frozen, attribution only)`` -> ``answerer pin``."""
    k = re.sub(r"\s*\([^()]*\)", "", key)
    k = k.split(" — ")[0].replace(DEBUG_MARK, "")
    return " ".join(k.lower().split())


def head_key(text: str) -> str | None:
    """Section key of a known English head, else None."""
    name = canon_label(text)
    return SECTION_HEADS.get(name) if name in SECTION_HEADS else None


def _is_blank(lines: list[Line], i: int) -> bool:
    return i < 0 or i >= len(lines) or not lines[i].text.strip()


def _is_head(lines: list[Line], i: int) -> bool:
    t = lines[i].text.strip()
    if not t or "\t" in t or t.endswith(".") or t[0] in "[#{" or kv(t) is not None:
        return False
    if not (_is_blank(lines, i - 1) and _is_blank(lines, i + 1)) or len(t) > 100:
        return False
    return head_key(t) is not None or " — " in t or len(t) <= 40


_ANSWER_REF = re.compile(r"^\[\d+\] +[^\t]* · [^\t]*$")
_TAG_VALUE = re.compile(r"[a-z]{1,4}-\d+(?:-[0-9A-Za-z]+)+$")


def _floor(lines: list[Line]) -> int:
    """Index of the last line the debug block cannot start before: the answer's last
    reference line, else the ``Asked with`` anchor (value ending in an edition tag)."""
    refs = [i for i, ln in enumerate(lines) if _ANSWER_REF.match(ln.text)]
    if refs:
        return refs[-1]
    for i, ln in enumerate(lines):
        pair = kv(ln.text)
        if pair and _TAG_VALUE.search(pair[1]):
            return i
    return 0


def _debug_start(lines: list[Line], known_labels: frozenset[str]) -> int | None:
    """First line of the debug block: the wrench line, or an earlier known English
    section head after the answer (sections may come in any order); failing both, the
    first ``key: value`` line with a known label or a JSON list value."""
    floor = _floor(lines)
    mark = next((i for i, ln in enumerate(lines) if ln.text.strip().startswith(DEBUG_MARK)), None)
    head = next((i for i in range(floor + 1, len(lines))
                 if head_key(lines[i].text) is not None and _is_head(lines, i)), None)
    found = [i for i in (mark, head) if i is not None]
    if found:
        return min(found)
    for i, ln in enumerate(lines):
        pair = kv(ln.text)
        if pair and (canon_label(pair[0]) in known_labels or pair[1].startswith("[{")):
            return i
    return None


def segment(text: str, known_labels: frozenset[str] = frozenset()) -> Segments:
    """Split normalised page text into the top and the debug sections."""
    lines = [Line(i + 1, t.rstrip()) for i, t in enumerate(text.split("\n"))]
    start = _debug_start(lines, known_labels)
    if start is None:
        return Segments(tuple(lines), (), None)
    top, debug = lines[:start], lines[start:]
    sections: list[Section] = []
    head: Line | None = None
    body: list[Line] = []

    def close() -> None:
        if head is not None or any(b.text.strip() for b in body):
            sections.append(Section(head.text.strip() if head else None,
                                    head_key(head.text) if head else None,
                                    head.no if head else debug[0].no, tuple(body)))

    for i, ln in enumerate(debug):
        if (ln.text.strip().startswith(DEBUG_MARK) and i == 0) or _is_head(debug, i):
            close()
            head, body = ln, []
        else:
            body.append(ln)
    close()
    return Segments(tuple(top), tuple(sections), debug[0].no)
