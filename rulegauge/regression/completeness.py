"""What a gate needs before it compares: two complete runs over the same questions.

A gate that passes on missing data is worse than no gate, so :func:`check_gateable`
raises :class:`~rulegauge.core.errors.RulegaugeError` (exit 2, never 0 or 1) when

* either side's manifest does not say ``status: complete`` (a run still being
  written, failed or interrupted), or another process still holds its run lock;
* a question the base scored for its gated config has no row in the candidate's
  gated config (hash recomputed or not: the ``metrics`` rows are what is compared),
  naming up to 20 of them and the count; or a side's ``metrics`` lack questions of
  its own ``questions`` table.

Questions only the candidate has are allowed (a gold set grew) and counted in the
message of the caller's choosing via :func:`extra_questions`; so are the questions of the
base a migrated gold set held out (``held_out``: flagged labels, never guessed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rulegauge.core.errors import RulegaugeError
from rulegauge.store.baseline import Side
from rulegauge.store.runlock import is_locked

SHOWN = 20


def _named(qids: list[str]) -> str:
    head = ", ".join(qids[:SHOWN])
    return head + (f" ... and {len(qids) - SHOWN} more" if len(qids) > SHOWN else "")


def _questions(side: Side, config: str) -> set[str]:
    m = side.table("metrics")
    return set(m.loc[m["config_id"].astype(str) == config, "question_id"].astype(str))


def _status_problem(side: Side, which: str) -> str | None:
    status = side.manifest.get("status")
    path: Any = getattr(side, "path", None)
    if path is not None and is_locked(Path(path)):
        return f"{which} run {side.run_id} is still being written (its run lock is held)"
    if status != "complete":
        return (f"{which} run {side.run_id} is not complete (status {status!r}); "
                "gate only finished runs")
    return None


def check_gateable(base: Side, candidate: Side, base_config: str, candidate_config: str,
                   held_out: tuple[str, ...] = ()) -> None:
    """Raise when the two sides cannot be gated (module docstring); ``held_out``: the
    questions a migrated gold set left out (the candidate may lack exactly those)."""
    problems = [p for p in (_status_problem(base, "base"),
                            _status_problem(candidate, "candidate")) if p]
    if problems:
        raise RulegaugeError("; ".join(problems))
    have_b, have_c = _questions(base, base_config), _questions(candidate, candidate_config)
    missing = sorted(have_b - have_c - set(held_out))
    if missing:
        problems.append(f"the candidate {candidate.run_id} ({candidate_config}) lacks "
                        f"{len(missing)} of the base's {len(have_b)} questions: {_named(missing)}")
    for side, cfg, have in ((base, base_config, have_b), (candidate, candidate_config, have_c)):
        if side.has_table("questions"):
            own = set(side.table("questions")["question_id"].astype(str))
            lost = sorted(own - have)
            if lost:
                problems.append(f"run {side.run_id} ({cfg}) has no metrics for {len(lost)} of "
                                f"its {len(own)} questions: {_named(lost)}")
    if problems:
        raise RulegaugeError("cannot gate on missing questions: " + "; ".join(problems))


def extra_questions(base: Side, candidate: Side, base_config: str,
                    candidate_config: str) -> list[str]:
    """Questions the candidate scored that the base did not (left out of the comparison)."""
    return sorted(_questions(candidate, candidate_config) - _questions(base, base_config))
