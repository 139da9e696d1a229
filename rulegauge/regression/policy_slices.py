"""Slices and overlap rules of a gate policy: ``[slices.NAME]`` and ``[overlap]``.

A slice names the questions of the gold set that every selector given picks (a tag, a
game, a language, answerable or not, labelled or not, or a list of question ids) and gates
them with metric checks of their own (the keys of ``[metrics."<metric>"]``) and an overlap
rule; an overlap rule (``[overlap]``, or ``[slices.NAME.overlap]``) puts floors on the
median RBO_ext@depth and Jaccard@depth of the gated config's two runs
(:mod:`rulegauge.metrics.overlap`), which need no judgment. Read here, for
:func:`rulegauge.regression.policy.parse_policy`, with its reader (every problem collected,
named ``file: slices.NAME.key``); evaluated by :mod:`rulegauge.regression.slices`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the policy module reads slices through this one
    from rulegauge.regression.policy import MetricPolicy

OVERLAP_KEYS = ("depth", "p", "min_rbo", "min_jaccard")
SELECTORS = ("tag", "game", "language", "answerable", "labelled", "questions")
SLICE_KEYS = (*SELECTORS, "metrics", "overlap")
MAX_OVERLAP_DEPTH = 1000


class Reader(Protocol):
    """The policy's typed key access (records problems instead of raising)."""

    def bad(self, key: str, message: str) -> None: ...

    def unknown(self, table: dict[str, Any], prefix: str, allowed: tuple[str, ...]) -> None: ...

    def text(self, table: dict[str, Any], key: str, prefix: str) -> str | None: ...

    def number(self, table: dict[str, Any], key: str, prefix: str, low: float | None = None,
               high: float | None = None, *, open_low: bool = False) -> float | None: ...

    def integer(self, table: dict[str, Any], key: str, prefix: str, default: int,
                low: int) -> int: ...


MetricTables = Callable[[dict[str, Any], Any, str], "list[MetricPolicy]"]
"""(the ``metrics`` tables, the reader, where) -> their :class:`MetricPolicy` records."""


@dataclass(frozen=True)
class OverlapRule:
    """``[overlap]``: floors on the median RBO_ext@depth (persistence ``p``) and the median
    Jaccard@depth of the gated config's two runs (:mod:`rulegauge.metrics.overlap`)."""

    depth: int = 10
    p: float = 0.9
    min_rbo: float | None = None
    min_jaccard: float | None = None


@dataclass(frozen=True)
class SliceSpec:
    """``[slices.NAME]``: the questions every given selector picks, gated by their own
    metric checks (one family per slice) and overlap rule (:mod:`rulegauge.regression.slices`)."""

    name: str
    tag: str | None = None
    game: str | None = None
    language: str | None = None
    answerable: bool | None = None
    labelled: bool | None = None
    questions: tuple[str, ...] = ()
    metrics: tuple[MetricPolicy, ...] = ()
    overlap: OverlapRule | None = None

    def describe(self) -> str:
        """``tag errata, language ru`` (the selectors given, in :data:`SELECTORS` order)."""
        parts = [f"{k} {getattr(self, k)}".lower() if isinstance(getattr(self, k), bool)
                 else f"{k} {getattr(self, k)}" for k in SELECTORS[:5] if getattr(self, k) is not None]
        if self.questions:
            parts.append(f"questions {', '.join(self.questions)}")
        return ", ".join(parts)



def read_overlap(raw: Any, where: str, r: Reader) -> OverlapRule | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        r.bad(where, "must be a table, e.g. [overlap] min_rbo = 0.8")
        return None
    r.unknown(raw, f"{where}.", OVERLAP_KEYS)
    if "min_rbo" not in raw and "min_jaccard" not in raw:
        r.bad(where, "asks for no check; give min_rbo or min_jaccard")
    depth = r.integer(raw, "depth", f"{where}.", 10, 1)
    if depth > MAX_OVERLAP_DEPTH:
        r.bad(f"{where}.depth", f"must be <= {MAX_OVERLAP_DEPTH}, got {depth}")
    return OverlapRule(depth, r.number(raw, "p", f"{where}.", low=0.0, high=1.0, open_low=True) or 0.9,
                       r.number(raw, "min_rbo", f"{where}.", low=0.0, high=1.0000001),
                       r.number(raw, "min_jaccard", f"{where}.", low=0.0, high=1.0000001))


def read_slices(raw: Any, r: Reader, metric_tables: MetricTables) -> tuple[SliceSpec, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        r.bad("slices", "must hold slice tables, e.g. [slices.errata] tag = \"errata\"")
        return ()
    out = []
    for name, table in raw.items():
        where = f"slices.{name}"
        if not isinstance(table, dict):
            r.bad(where, "must be a table with a selector and checks")
            continue
        r.unknown(table, f"{where}.", SLICE_KEYS)
        if not any(k in table for k in SELECTORS):
            r.bad(where, f"selects nothing; give one of: {', '.join(SELECTORS)}")
        if "metrics" not in table and "overlap" not in table:
            r.bad(where, f"asks for no check; give [{where}.metrics.\"<metric>\"] or [{where}.overlap]")
        metrics = table.get("metrics", {})
        if not isinstance(metrics, dict):
            r.bad(f"{where}.metrics", "must hold metric tables")
            metrics = {}
        qids = table.get("questions", [])
        if not isinstance(qids, list) or not all(isinstance(q, str) and q for q in qids) \
                or ("questions" in table and not qids):
            r.bad(f"{where}.questions", f"must be a non-empty list of question ids, got {qids!r}")
            qids = []
        flags = {k: table.get(k) for k in ("answerable", "labelled")}
        for k, v in flags.items():
            if v is not None and not isinstance(v, bool):
                r.bad(f"{where}.{k}", f"must be true or false, got {v!r}")
                flags[k] = None
        out.append(SliceSpec(str(name), r.text(table, "tag", f"{where}."),
                             r.text(table, "game", f"{where}."), r.text(table, "language", f"{where}."),
                             flags["answerable"], flags["labelled"], tuple(dict.fromkeys(qids)),
                             tuple(metric_tables(metrics, r, f"{where}.metrics")),
                             read_overlap(table.get("overlap"), f"{where}.overlap", r)))
    return tuple(out)
