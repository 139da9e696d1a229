"""May a gate rest on LLM judgments? Only above a stated kappa, with the record to show it.

A gold set merged from an LLM judge's judgments (``rulegauge judges llm`` then ``rulegauge
goldset merge``) holds pages whose grade comes from the LLM alone. A policy admits them
with two ``[gate]`` keys::

    [gate]
    min_llm_kappa = 0.6                    # Cohen's kappa the LLM judge must reach
    llm_agreement = "llm-vs-people.json"   # `rulegauge judges agreement A B --json` output

The ``llm_kappa`` check (:func:`llm_kappa_check`) fails when the candidate's gold set has
LLM-only pages and the record is missing, compares no LLM-judged pairs, has an
undefined kappa, or a kappa below the floor; it passes (saying so) when the gold set has
no LLM-only pages. Without ``min_llm_kappa``, a gold set with LLM-only pages gets a note
(:func:`llm_notes`): its figures rest on judgments never checked against people. The
record path is relative to the policy file; a record that is not the agreement JSON is
bad input (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rulegauge.core.errors import RulegaugeError
from rulegauge.goldset.parse import load_goldset


def llm_only_pairs(manifest: Any) -> int | None:
    """LLM-only (question, page) pairs of a run's gold set; None when it cannot be read
    (moved, or edited since the run: its SHA-256 differs)."""
    gs = (manifest or {}).get("goldset") or {}
    path = gs.get("path")
    if not path or not Path(path).is_file():
        return None
    try:
        gold = load_goldset(Path(path), allow_outside=True)
    except RulegaugeError:
        return None
    if gold.sha256 != gs.get("sha256"):
        return None
    return sum(len(q.llm_only_pages) for q in gold.questions)


def read_record(path: Path) -> dict[str, Any] | None:
    """The ``agreement`` object of a ``rulegauge judges agreement --json`` file; None when
    the file is missing; RulegaugeError when it is not such a file."""
    if not path.is_file():
        return None
    try:
        rec = json.loads(path.read_text(encoding="utf-8"))["agreement"]
        if not isinstance(rec, dict) or "kappa" not in rec:
            raise TypeError("no kappa")
        float(rec["llm_pairs"])
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise RulegaugeError(f"{path}: not the output of `rulegauge judges agreement --json` "
                           f"({type(exc).__name__}: {exc})") from None
    return rec


def llm_kappa_check(min_kappa: float, record_path: Path | None, llm_pairs: int | None
                    ) -> tuple[bool, str, float | None]:
    """(passed, message, measured kappa) of the ``llm_kappa`` check (module docstring)."""
    if llm_pairs == 0:
        return True, "the gold set has no LLM-only pages: nothing to admit", None
    where = "the candidate's gold set" if llm_pairs else "the gold set (unreadable here)"
    if record_path is None:
        return False, (f"min_llm_kappa = {min_kappa} needs [gate] llm_agreement, the record of "
                       "`rulegauge judges agreement LLM PEOPLE --json`"), None
    rec = read_record(record_path)
    if rec is None:
        return False, f"agreement record {record_path} is missing; {where} has LLM pages", None
    if not rec["llm_pairs"]:
        return False, f"{record_path} compares no LLM-judged pairs: it says nothing of an LLM", None
    kappa = rec["kappa"]
    if kappa is None:
        return False, f"{record_path}: kappa is undefined (no variation)", None
    ok = float(kappa) >= min_kappa
    return ok, (f"LLM judge kappa {float(kappa):.3f} over {rec.get('pairs')} pairs "
                f"{'>=' if ok else '<'} {min_kappa} ({record_path})"), float(kappa)


def llm_notes(manifest: Any, min_kappa: float | None) -> tuple[str, ...]:
    """The note for a gold set with LLM-only pages and no ``min_llm_kappa`` (or none)."""
    if min_kappa is not None:
        return ()
    n = llm_only_pairs(manifest)
    if not n:
        return ()
    return (f"the gold set has {n} LLM-only judged pages [llm] and the policy sets no "
            "min_llm_kappa: these figures rest on judgments never checked against people",)
