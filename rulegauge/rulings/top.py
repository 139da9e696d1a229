"""The user-facing top of a ruling page: title, question, badge, game and edition,
answer text, the answer's reference list and the sign-off.

Layout (blank-line separated blocks)::

    Ruling — <game>                       title
    You asked                             label
    <question>                            one or more blocks
    Answered counted as answered          badge
    Asked with: <game><edition tag>       anchor line
    <answer with [n] markers>
    [1] <DOC TITLE> · p.<page> · <heading path>
    <sign-off line>

The anchor is the ``Asked with:`` line, or structurally any ``label: value``
line whose value ends with an edition tag (``bg-191300-en-1e``: letters, a
number, then hyphen-separated parts). Production prints the game and the tag
with no space between them; the game is the title's game when the value starts
with it, else the text before the tag. Between the title and the anchor the
blocks are: label, question (every middle block), badge (the last block, when
there are three or more). A reference line is ``[n]`` followed by " · "-separated
parts of which the first short part ending in digits is the page (``p.3``,
``S. 3``). The answer text is everything between the anchor and the first
reference line, exactly as printed (markers and Markdown kept): it is the text
the service's fence measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rulegauge.rulings import cells
from rulegauge.rulings.segment import Line, canon_label, kv

_TAG = re.compile(r"(?P<tag>[a-z]{1,4}-\d+(?:-[0-9A-Za-z]+)+)$")
_REF = re.compile(r"^\[(?P<n>\d+)\] +(?P<rest>[^\t]+)$")
_BADGE = re.compile(r"^(answered|abstained|declined|not answered|error)\b", re.I)
SIGNOFFS = ("now you know",)


@dataclass(frozen=True)
class AnswerRef:
    """One line of the answer's reference list."""

    n: int
    title: str
    page: int
    heading: str | None
    line: int


@dataclass(frozen=True)
class Top:
    title: str | None
    question: str | None
    badge: str | None
    game: str | None
    edition: str | None
    answer: str | None
    refs: tuple[AnswerRef, ...]
    signoff: str | None
    problems: tuple[tuple[int, str], ...]


def answer_ref(text: str, line: int) -> AnswerRef | None:
    """Parse ``[1] DOC · p.3 · Heading · Sub`` (None when the line has no page part)."""
    m = _REF.match(text.strip())
    if not m:
        return None
    parts = m["rest"].split(" · ")
    for i, part in enumerate(parts[1:], start=1):
        page = cells.integer(part) if len(part.strip()) <= 10 else None
        if page is not None:
            heading = " · ".join(parts[i + 1:]).strip() or None
            return AnswerRef(int(m["n"]), " · ".join(parts[:i]).strip(), page, heading, line)
    return None


def _blocks(lines: list[Line]) -> list[list[Line]]:
    out: list[list[Line]] = []
    prev_blank = True
    for ln in lines:
        if not ln.text.strip():
            prev_blank = True
            continue
        if prev_blank:
            out.append([])
        out[-1].append(ln)
        prev_blank = False
    return out


def _text(block: list[Line]) -> str:
    return "\n".join(ln.text.strip() for ln in block)


def _anchor(lines: list[Line]) -> int | None:
    for i, ln in enumerate(lines):
        pair = kv(ln.text)
        if pair and canon_label(pair[0]) == "asked with":
            return i
    for i, ln in enumerate(lines):
        pair = kv(ln.text)
        if pair and _TAG.search(pair[1]):
            return i
    return None


def _game_edition(value: str, title_game: str | None) -> tuple[str | None, str | None]:
    if title_game and value.startswith(title_game):
        rest = value[len(title_game):].strip()
        return title_game, rest or None
    m = _TAG.search(value)
    if m is None:
        return value.strip() or None, None
    return value[: m.start()].strip() or None, m["tag"]


def parse_top(lines: tuple[Line, ...]) -> Top:
    """Parse the top of the page (see module docstring)."""
    problems: list[tuple[int, str]] = []
    ls = list(lines)
    first = next((ln for ln in ls if ln.text.strip()), None)
    title = first.text.strip() if first else None
    title_game = title.split(" — ", 1)[1].strip() if title and " — " in title else None
    a = _anchor(ls)
    game = edition = question = badge = None
    if a is not None:
        game, edition = _game_edition(kv(ls[a].text)[1], title_game)  # type: ignore[index]
        if edition is None:
            problems.append((ls[a].no, "no edition tag after the game name"))
        between = _blocks([ln for ln in ls[:a] if first is None or ln.no > first.no])
        if len(between) >= 3:
            question, badge = "\n\n".join(_text(b) for b in between[1:-1]), _text(between[-1])
        elif len(between) == 2:
            question = _text(between[1])
        elif len(between) == 1:
            question = _text(between[0])
        body = ls[a + 1:]
    else:
        problems.append((0, "no 'Asked with' line: game and edition unknown"))
        blocks = _blocks(ls)
        idx = next((i for i, b in enumerate(blocks) if canon_label(_text(b)) == "you asked"), None)
        if idx is None or idx + 1 >= len(blocks):
            return Top(title, None, None, None, None, None, (), None, tuple(problems))
        question = _text(blocks[idx + 1])
        rest = blocks[idx + 2:]
        if rest and len(rest[0]) == 1 and _BADGE.match(_text(rest[0])):
            badge, rest = _text(rest[0]), rest[1:]
        body = [ln for b in rest for ln in b] if rest else []
        body = [ln for ln in ls if body and ln.no >= body[0].no]
    refs = [(i, r) for i, ln in enumerate(body) if (r := answer_ref(ln.text, ln.no)) is not None]
    if refs:
        f, last = refs[0][0], refs[-1][0]
        answer_lines, tail = body[:f], body[last + 1:]
    else:
        answer_lines, tail = body, []
        blocks = _blocks(body)
        if blocks and canon_label(_text(blocks[-1])).startswith(SIGNOFFS):
            tail = blocks[-1]
            answer_lines = [ln for ln in body if ln.no < tail[0].no]
    answer = "\n".join(ln.text for ln in answer_lines).strip() or None
    signoff = "\n".join(ln.text.strip() for ln in tail if ln.text.strip()) or None
    return Top(title, question, badge, game, edition, answer, tuple(r for _, r in refs), signoff,
               tuple(problems))
