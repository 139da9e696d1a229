"""What each known ``key: value`` line and prose line of the debug block means.

:data:`LABELS` maps a canonical English label (``rulegauge.rulings.segment.canon_label``:
lower case, no parentheticals, no " — " gloss) to a handler that stores column
values of the ``rulings`` table; :data:`NOTES` lists labels whose text is kept
as written in the ``notes`` column (explanations, live-seat probes);
:data:`PROSE` holds patterns for the few facts printed in sentences (the RRF
``k``, boosted documents, the errata registry). A label in neither registry is
*unknown* and kept verbatim. A field printed twice with different values keeps
the first and warns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from rulegauge.core.errors import Problem
from rulegauge.core.registry import Registry
from rulegauge.rulings import cells

_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
OUTCOMES: dict[str, str] = {"answered": "answered", "abstained": "abstained",
                            "declined": "abstained", "error": "error", "failed": "error",
                            "errored": "error"}
"""First word of the outcome line (lower case) -> rulegauge outcome."""


class Acc:
    """Mutable collector used while parsing one page (never leaves the parser)."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.values: dict[str, object] = {}
        self.problems: list[Problem] = []
        self.notes: dict[str, str] = {}
        self.unknown_fields: dict[str, str] = {}
        self.raw_json: dict[str, tuple[int, str]] = {}
        self.loose_json: list[tuple[int, str]] = []
        self.arms_prose: int | None = None  # "THREE-ARM fuse" in a sentence
        self.line = 0

    def warn(self, message: str, line: int | None = None) -> None:
        ln = self.line if line is None else line
        self.problems.append(Problem(f"{self.source}:{ln}" if ln else self.source, message))

    def set(self, name: str, value: object) -> None:
        if value is None:
            return
        old = self.values.get(name)
        if old is not None and old != value:
            self.warn(f"{name} printed twice with different values ({old!r}, then {value!r}); "
                      "the first is kept")
            return
        self.values[name] = value


Handler = Callable[[str, Acc], None]
LABELS: Registry[Handler] = Registry("ruling label")
NOTES: frozenset[str] = frozenset({
    "what this block is", "per-arm ranks", "token count per chunk", "live seat",
    "gateway schema", "answerer host", "answerer node", "watchdog", "num_ctx · think posture",
    "errata scope"})


def _label(name: str) -> Callable[[Handler], Handler]:
    return LABELS.register(name)


@_label("outcome")
def _outcome(v: str, acc: Acc) -> None:
    word = re.split(r"[\s—-]+", v.strip(), maxsplit=1)[0].lower()
    if word not in OUTCOMES:
        acc.warn(f"unknown outcome {v!r}; known: {', '.join(sorted(OUTCOMES))}")
    acc.set("outcome", OUTCOMES.get(word, word or None))
    acc.set("outcome_label", v)


@_label("corpus profile")
def _profile(v: str, acc: Acc) -> None:
    acc.set("corpus_profile", v)


@_label("answerer pin")
def _pin(v: str, acc: Acc) -> None:
    acc.set("answerer_pin", v)
    acc.set("answerer_model", v.split()[0] if v.split() else None)


_MS_COLUMNS = {"search": "search_ms", "retrieval": "search_ms", "ask": "ask_ms",
               "total": "total_ms", "queued": "queued_ms", "generation": "generation_ms",
               "first delta": "first_delta_ms", "gateway work": "gateway_ms"}


def _ms(v: str, acc: Acc) -> None:
    pairs = cells.ms_pairs(v)
    if not pairs:
        acc.warn(f"no 'name N ms' timings in {v!r}")
    for name, value in pairs.items():
        if name in _MS_COLUMNS:
            acc.set(_MS_COLUMNS[name], value)
        else:
            acc.warn(f"unknown timing {name!r} ({value} ms) kept in notes")
            acc.notes[f"timing {name}"] = f"{value} ms"


for _name in ("timings", "single-flight", "timing split", "full breakdown"):
    LABELS.add(_name, _ms)


def _json(name: str) -> Handler:
    def handler(v: str, acc: Acc) -> None:
        acc.raw_json.setdefault(name, (acc.line, v))
    return handler


LABELS.add("retrieval refs", _json("refs"))
LABELS.add("citations", _json("citations"))


@_label("boost provenance")
def _boost(v: str, acc: Acc) -> None:
    acc.set("boost_provenance", v)
    low = v.lower()
    if "no registered errata card matched" in low:
        acc.set("errata_matched", False)
    elif re.search(r"errata card\S* .*matched", low):
        acc.set("errata_matched", True)
    settings = dict(re.findall(r"([A-Za-z][\w.-]*\.[\w.-]+)=([^\s,;]+)", v))
    if settings:
        acc.set("boost_settings", json.dumps(settings, sort_keys=True))
    _boosted(v, acc)


def _boosted(text: str, acc: Acc) -> None:
    found = tuple(re.findall(r"\bdoc (\d+) boosted", text))
    if found:
        old: tuple[str, ...] = tuple(acc.values.get("boosted_docs") or ())  # type: ignore[arg-type]
        acc.values["boosted_docs"] = tuple(dict.fromkeys(old + found))


@_label("answered-before recall")
def _before(v: str, acc: Acc) -> None:
    acc.set("answered_before", v)


@_label("similarity threshold in force")
def _threshold(v: str, acc: Acc) -> None:
    nums = cells.numbers(v)
    acc.set("similarity_threshold", nums[0] if nums else None)


_FENCE = re.compile(r"^(?P<verdict>\S+).*?(?P<density>\d+(?:\.\d+)?)\D+(?P<chars>\d+)\D+?"
                    r"\(\D*(?P<floor>\d+(?:\.\d+)?)\);\s*(?P<glyphs>\d+)\D+\(\D*(?P<max>\d+)\)")


@_label("answer fence")
def _fence(v: str, acc: Acc) -> None:
    m = _FENCE.match(v)
    verdict = v.split()[0].lower() if v.split() else None
    acc.set("fence_verdict", verdict)
    acc.set("fence_passed", {"passed": True, "failed": False, "rejected": False}.get(verdict or ""))
    if m is None:
        acc.warn(f"answer fence line not understood: {v!r}")
        return
    acc.set("fence_letter_density", float(m["density"]))
    acc.set("fence_nonspace_chars", int(m["chars"]))
    acc.set("fence_floor", float(m["floor"]))
    acc.set("fence_glyph_tokens", int(m["glyphs"]))
    acc.set("fence_glyph_max", int(m["max"]))


@_label("debug row retained until")
def _retained(v: str, acc: Acc) -> None:
    acc.set("retained_until", v)


@_label("candidate pool")
def _pool(v: str, acc: Acc) -> None:
    m = re.search(r"(\d+)\D+?ceiling of (\d+)", v)
    nums = [int(x) for x in re.findall(r"\d+", v)]
    pool, ceiling = (int(m.group(1)), int(m.group(2))) if m else (
        (nums[0], nums[1]) if len(nums) >= 2 else (None, None))
    if pool is None:
        acc.warn(f"candidate pool line not understood: {v!r}")
    acc.set("candidate_pool", pool)
    acc.set("candidate_pool_ceiling", ceiling)


@_label("floors armed for this ask")
def _floors(v: str, acc: Acc) -> None:
    found = cells.floors(v)
    if found is None:
        acc.warn(f"floors line not understood: {v!r}")
        return
    acc.set("floors_armed", tuple(k for k, armed in found.items() if armed))
    acc.set("floors_not_armed", tuple(k for k, armed in found.items() if not armed))


@_label("arms fused for this ask")
def _arms(v: str, acc: Acc) -> None:
    first = re.split(r"\.\s", v, maxsplit=1)[0].rstrip(".")
    names, unknown = cells.arms(first)
    if unknown:
        acc.warn(f"unknown arm name(s) {', '.join(unknown)}; known: "
                 + ", ".join(cells.ARM_ALIASES.names()))
    acc.set("arms_fused_raw", first)
    acc.set("arms_fused", names)


def _int_label(column: str) -> Handler:
    def handler(v: str, acc: Acc) -> None:
        m = re.match(r"^\s*(\d+)", v)
        if m is None:
            acc.warn(f"{column}: no number in {v!r}")
        acc.set(column, int(m.group(1)) if m else None)
    return handler


LABELS.add("tokens in", _int_label("tokens_in"))
LABELS.add("tokens out", _int_label("tokens_out"))


@_label("tok/sec")
def _tps(v: str, acc: Acc) -> None:
    m = re.match(r"^\s*(\d+(?:\.\d+)?)", v)
    acc.set("tokens_per_sec", float(m.group(1)) if m else None)
    g = re.search(r"(\d+(?:\.\d+)?)\s*s\b", v[m.end():] if m else v)
    acc.set("generation_s", float(g.group(1)) if g else None)


@_label("stream path")
def _stream(v: str, acc: Acc) -> None:
    acc.set("stream_path", re.split(r"\s+—\s+", v, maxsplit=1)[0])


@_label("abstain rationale")
def _abstain(v: str, acc: Acc) -> None:
    acc.set("abstain_rationale", v)


@_label("decision")
def _decision(v: str, acc: Acc) -> None:
    acc.set("setup_shape", re.split(r"\s+—\s+", v, maxsplit=1)[0])


@dataclass(frozen=True)
class Prose:
    pattern: re.Pattern[str]
    handle: Callable[[re.Match[str], str, Acc], None]


PROSE: Registry[Prose] = Registry("ruling prose")


def _k(m: re.Match[str], line: str, acc: Acc) -> None:
    acc.set("k", float(m.group(1)))


def _fuse(m: re.Match[str], line: str, acc: Acc) -> None:
    word = m.group(1).lower()
    if acc.arms_prose is None:
        acc.arms_prose = int(word) if word.isdigit() else _WORDS.get(word)
    c = re.search(r"ceiling is (\d+\.\d+)", line)
    if c:
        acc.set("ceiling_reported", float(c.group(1)))


def _errata(m: re.Match[str], line: str, acc: Acc) -> None:
    acc.set("errata_registry", line.strip())
    count = m.group(1)
    acc.set("errata_cards", 0 if count.lower() == "no" else int(count))
    acc.set("errata_edition", m.group(2))


PROSE.add("k", Prose(re.compile(r"\bk\s*=\s*(\d+(?:\.\d+)?)"), _k))
PROSE.add("fuse", Prose(re.compile(r"\b(\w+)-ARM fuse", re.I), _fuse))
PROSE.add("boosted", Prose(re.compile(r"\bdoc \d+ boosted"),
                           lambda m, line, acc: _boosted(line, acc)))
PROSE.add("errata registry", Prose(
    re.compile(r"registers (NO|\d+) errata cards?\s*\(edition ([^)\s]+)\)", re.I), _errata))
