"""Upper bounds on what one input may make rulegauge do, checked when it is read.

Sizes: a document, a gold set, a journal, a manifest or an HTTP body larger than its
bound is refused with a message naming the file (or URL), the size and the bound,
before it is read into memory. Counts a user gives that size work (resamples, draws,
folds, depths, concurrency, pool sizes...) are checked by :func:`count_problem` against
:data:`COUNTS`, and counts whose product sizes work (draws x resamples) by
:func:`work_problem` against :data:`WORK`; real numbers a user or a file gives (SDs,
drops, latencies) by :func:`real_problem` against :data:`REALS`: finite, within their
range. The bounds are far above any real use (a 100,000-question gold set, a depth of
10,000 ranks) and far below what exhausts a 24 GiB machine or overflows a float; every
command checks them where the value enters (an option, a policy key, a journal line),
the same bound for the same quantity everywhere (``power --resamples`` and a policy's
``n_resamples``).

Grades and requirements: a relevance grade is an integer 0..:data:`MAX_GRADE` wherever
it enters (a gold set's ``{ref, grade}``, qrels of ``goldset import-beir`` /
``import-trec``, where a relevance below 0 means judged non-relevant and is bounded by
``-MAX_GRADE``; judgments files keep their own 0-3 scale); a question holds at most
:data:`MAX_REQUIREMENTS` requirements, checked by ``validate`` and by the imports
(:mod:`rulegauge.goldset.grades`).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import cast

from rulegauge.core.errors import RulegaugeError

MiB = 1024 * 1024
MAX_DOCUMENT_BYTES = 512 * MiB   # a rulebook PDF is tens of MiB; the SRD 5.1 PDF ~5 MiB
MAX_TEXT_DOCUMENT_BYTES = 64 * MiB  # a text, Markdown or JSONL document (a rulebook is ~1 MiB)
MAX_TEXT_LINE = 4 * MiB          # one line of a text, Markdown or JSONL document
MAX_GOLDSET_BYTES = 256 * MiB    # a 100,000-question gold set is ~20 MiB
MAX_JOURNAL_BYTES = 1024 * MiB   # an answers journal of one answerer
MAX_HTTP_BODY = 16 * MiB         # one HTTP reply (answer, preflight, search arm)
DEFAULT_MAX_FUSED_ROWS = 5_000_000  # the fused table's default row budget (--max-fused-rows)
MAX_GRADE = 10                   # a relevance grade: TREC's scales reach 4, BEIR's 2, MSLR's 4
MAX_REQUIREMENTS = 10_000        # requirements of one question (TREC-COVID: ~500 relevant a topic)
MAX_ANY_OF_REQUIREMENTS = 62     # ... when one is an any-of list: the bits of recall's int64 mask

COUNTS: dict[str, int] = {
    "resamples": 1_000_000, "draws": 100_000, "tests": 1_000_000,
    "folds": 1_000, "depth": 10_000, "fused_depth": 10_000,
    "concurrency": 256, "pool": 10_000, "top": 10_000, "summary_rows": 1_000_000,
    "max_fused_rows": 1_000_000_000, "retries": 20, "workers": 256, "rows": 10_000_000,
}
"""The largest value each user-given count may take."""


def count_problem(name: str, value: object, *, minimum: int = 1,
                  maximum: int | None = None) -> str | None:
    """Why ``value`` is not an integer within ``[minimum, bound]`` (the bound of
    :data:`COUNTS` ``[name]`` unless ``maximum`` is given), or None."""
    bound = COUNTS[name] if maximum is None else maximum
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{name} must be an integer, got {value!r}"
    if not minimum <= value <= bound:
        return f"{name} must be between {minimum} and {bound:,}, got {value:,}"
    return None


def check_count(name: str, value: object, *, minimum: int = 1, maximum: int | None = None) -> int:
    """``value`` when :func:`count_problem` finds nothing, else :class:`RulegaugeError`."""
    problem = count_problem(name, value, minimum=minimum, maximum=maximum)
    if problem:
        raise RulegaugeError(problem)
    return cast(int, value)


def size_problem(path: Path | str, limit: int, what: str = "file") -> str | None:
    """Why the file at ``path`` is too large to read (``limit`` bytes), or None."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return None  # a missing file is reported by whoever reads it
    if size > limit:
        return (f"{path}: the {what} is {size:,} bytes, above the limit of {limit:,} "
                f"bytes ({limit // MiB} MiB); split it or check that it is the right file")
    return None


def check_size(path: Path | str, limit: int, what: str = "file") -> None:
    """Raise :class:`RulegaugeError` when :func:`size_problem` finds the file too large."""
    problem = size_problem(path, limit, what)
    if problem:
        raise RulegaugeError(problem)


MAX_LATENCY_MS = 3_600_000.0
"""The longest search latency a record may hold, in ms (one hour: a call's deadline,
``timeout_s``, is seconds; a larger figure is a damaged or forged record, and one such
value would move a p95 gate)."""


def latency_problem(value: object) -> str | None:
    """Why ``value`` cannot be a recorded latency in ms (a finite number within
    ``[0, MAX_LATENCY_MS]``; None stands for "unknown" and is fine), or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"latency_ms must be a number or null, got {value!r}"[:120]
    if isinstance(value, int) and abs(value) > 10**18:  # float() of a huge integer overflows
        bits = abs(value).bit_length()  # str() of an integer of more than 4,300 digits raises
        digits = f"{len(str(abs(value)))}" if bits < 14_000 else f"about {int(bits * 0.30103) + 1}"
        return f"latency_ms must be within 0..{MAX_LATENCY_MS:,.0f} ms, got an integer of {digits} digits"
    if not math.isfinite(value) or not 0.0 <= float(value) <= MAX_LATENCY_MS:
        return f"latency_ms must be a finite number within 0..{MAX_LATENCY_MS:,.0f} ms, got {value!r}"
    return None


WORK: dict[str, int] = {"resampled comparisons": 1_000_000_000, "drawn differences": 100_000_000}
"""The largest product of counts one command may ask for: ``power``'s draws x sign patterns
(the default 2,000 x 10,000 = 2 x 10^7 takes under a second for 51 questions on 2 cores;
10^9 about a minute) and draws x questions (the drawn differences held in memory, 8 bytes
each: 10^8 is 800 MB)."""


def work_problem(name: str, factors: dict[str, int]) -> str | None:
    """Why the product of ``factors`` (name -> count) is above :data:`WORK` ``[name]``, or None."""
    product = 1
    for value in factors.values():
        product *= value
    if product <= WORK[name]:
        return None
    parts = " x ".join(f"{k} {v:,}" for k, v in factors.items())
    return (f"{parts} = {product:,} {name}, above the bound of {WORK[name]:,}; lower one of "
            "them")


REALS: dict[str, float] = {"sd": 1e6, "delta": 1e6}
"""The largest value each user- or file-given real number may take: an SD of paired
differences and a drop (``power --sd``/``--delta``, a policy's ``sd``; metrics lie in
[0, 1], counts and times far below 10^6, and a larger SD overflows the sample-size
arithmetic). Latencies have their own bound, :data:`MAX_LATENCY_MS`."""


def real_problem(name: str, value: object, *, minimum: float = 0.0,
                 open_low: bool = False) -> str | None:
    """Why ``value`` is not a finite number in ``[minimum, bound]`` (``(minimum, bound]``
    with ``open_low``; the bound of :data:`REALS` ``[name]``), or None. Booleans and
    integers too large for a float are refused, never a traceback."""
    bound = REALS[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{name} must be a number, got {value!r}"
    shown = repr(value)
    if len(shown) > 24:  # a 320-digit integer is named by its length, not printed
        shown = f"a number of {len(shown)} characters"
    x = float(value) if isinstance(value, float) or abs(value) < 10**300 else math.inf
    low = x <= minimum if open_low else x < minimum
    if not math.isfinite(x) or low or x > bound:
        side = ">" if open_low else ">="
        return f"{name} must be a finite number {side} {minimum:g} and at most {bound:g}, got {shown}"
    return None
