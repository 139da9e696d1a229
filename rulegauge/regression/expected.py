"""A baseline's expected numbers: a small YAML file beside its Parquet tables that review diffs show.

``rulegauge baseline save`` writes ``expected.yaml`` into the baseline folder (in the same
atomic rename as the tables): per config kept (the policy's gated config with ``--policy``,
else every config kept) the aggregate of every retrieval metric of the ``metrics`` table
over the questions in its scope (mean, or the median the registry declares:
:func:`rulegauge.metrics.info.metric_info`) and the number of questions, for every
question and for each slice of the policy (:mod:`rulegauge.regression.slice_select`),
with the gold set's name and hash. Numbers are written at full precision (the shortest
text that reads back as the same float64), so a pull request that re-saves the baseline
shows, line by line, which means moved.

``rulegauge gate`` checks the file against the tables (:func:`check_expected`): every
number recomputed from the Parquet tables must equal the file's within 1e-12 (relative,
or absolute below 1), and the gold-set hash must be the manifest's; otherwise it is bad
input (exit 2) naming the config, slice and metric, since the tables or the file were
edited by hand. A baseline without the file (saved before it existed) is not checked.
Answer metrics are not in the file (they are kept in ``answer_metrics``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from rulegauge.core.config_order import sort_configs
from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.family import AGGREGATES
from rulegauge.metrics.info import in_scope, metric_info
from rulegauge.regression.gate_pair import gate_pair
from rulegauge.regression.policy import load_policy
from rulegauge.regression.policy_slices import SELECTORS, SliceSpec
from rulegauge.regression.slice_select import QuestionView, select
from rulegauge.store.baseline import Side, resolve_config, side_configs

EXPECTED = "expected.yaml"
TOLERANCE = 1e-12
EVERY = "every question"
HEADER = ("# Expected numbers of this baseline, written by `rulegauge baseline save` (docs/gate.md,\n"
          "# \"Baselines\"): each metric's aggregate over the questions in its scope, full precision.\n"
          "# `rulegauge gate` exits 2 when the Parquet tables disagree with them; re-save, never edit.\n")


def _numbers(side: Side, config: str) -> dict[str, Any]:
    """{"questions": n, metric: aggregate, ...} of one config over ``side``'s questions."""
    m = side.table("metrics")
    m = m[m["config_id"].astype(str) == config]
    out: dict[str, Any] = {"questions": int(m["question_id"].nunique())}
    order = [str(x) for x in side.manifest.get("metrics") or ()]
    names = [n for n in order if n in set(m["metric"])] + sorted(set(m["metric"]) - set(order))
    for name in names:
        info = metric_info(name)
        if info is None or info.kind == "answer":
            continue
        rows = in_scope(m[m["metric"] == name], info)
        values = rows["value"].to_numpy(np.float64)
        out[info.name] = float(AGGREGATES.get(info.aggregate)(values)) if len(values) else float("nan")
    return out


def _selectors(spec: SliceSpec) -> dict[str, Any]:
    return {k: list(v) if k == "questions" else v for k in SELECTORS
            if (v := getattr(spec, k)) not in (None, ())}


def expected_numbers(side: Side, configs: Sequence[str], slices: Sequence[SliceSpec] = ()
                     ) -> dict[str, Any]:
    """The expected numbers of ``side`` (module docstring) as a YAML-ready mapping."""
    goldset = side.manifest.get("goldset") or {}
    out: dict[str, Any] = {"goldset": {"name": goldset.get("name"), "sha256": goldset.get("sha256")},
                           "precision": "full (float64, shortest round-trip text); gate checks "
                                        f"to {TOLERANCE:g}", "configs": {}}
    picked = {s.name: select(s, side, side) for s in slices}
    for config in sort_configs(configs):
        entry: dict[str, Any] = {EVERY: _numbers(side, config)}
        if slices:
            entry["slices"] = {s.name: {"selects": _selectors(s),
                                        **_numbers(QuestionView(side, picked[s.name]), config)}
                               for s in slices}
        out["configs"][config] = entry
    return out


def expected_yaml(side: Side, configs: Sequence[str], slices: Sequence[SliceSpec] = ()) -> str:
    """The text of ``expected.yaml``: :func:`expected_numbers` under :data:`HEADER`."""
    body = yaml.safe_dump(expected_numbers(side, configs, slices), sort_keys=False,
                          allow_unicode=True, width=120)
    return HEADER + body


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, int | float) \
            or not isinstance(b, int | float):
        return bool(a == b)
    x, y = float(a), float(b)
    if math.isnan(x) or math.isnan(y):
        return math.isnan(x) and math.isnan(y)
    if math.isinf(x) or math.isinf(y):
        return x == y
    return abs(x - y) <= TOLERANCE * max(1.0, abs(x), abs(y))


def _diffs(where: str, want: dict[str, Any], have: dict[str, Any]) -> list[str]:
    out = []
    for key, value in want.items():
        if key == "selects":
            continue
        if key not in have:
            out.append(f"{where}: {key} is in {EXPECTED} ({value!r}) but not in the tables")
        elif not _same(value, have[key]):
            out.append(f"{where}: {key} is {value!r} in {EXPECTED}, {have[key]!r} in the tables")
    return out


def check_expected(side: Side) -> None:
    """Raise :class:`RulegaugeError` naming every number of ``side``'s ``expected.yaml``
    that its tables do not give (module docstring); nothing for a side without the file."""
    folder: Any = getattr(side, "path", None)
    if folder is None or not (Path(folder) / EXPECTED).is_file():
        return
    path = Path(folder) / EXPECTED
    try:
        want = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RulegaugeError(f"{path}: cannot be read ({exc})") from None
    if not isinstance(want, dict) or not isinstance(want.get("configs"), dict):
        raise RulegaugeError(f"{path}: not an expected-numbers file (no 'configs' mapping)")
    problems = []
    sha = (side.manifest.get("goldset") or {}).get("sha256")
    if (want.get("goldset") or {}).get("sha256") != sha:
        problems.append(f"gold set sha256 is {(want.get('goldset') or {}).get('sha256')!r} in "
                        f"{EXPECTED}, {sha!r} in the manifest")
    known = set(side.table("metrics")["config_id"].astype(str))
    for config, entry in want["configs"].items():
        if str(config) not in known or not isinstance(entry, dict):
            problems.append(f"config {config} is in {EXPECTED} but not in the metrics table")
            continue
        problems += _diffs(f"{config} ({EVERY})", entry.get(EVERY) or {}, _numbers(side, str(config)))
        for name, sl in (entry.get("slices") or {}).items():
            qids = _slice_questions(side, str(name), sl)
            problems += _diffs(f"{config} (slice {name})", sl,
                               _numbers(QuestionView(side, qids), str(config)))
    if problems:
        raise RulegaugeError(f"baseline {side.run_id}: its Parquet tables disagree with {path} "
                             "(edited by hand? re-save it: rulegauge baseline save RUN NAME "
                             "--overwrite): " + "; ".join(problems))


def _slice_questions(side: Side, name: str, entry: Any) -> tuple[str, ...]:
    """The questions of a recorded slice, selected again by its recorded selectors."""
    selects = (entry or {}).get("selects") if isinstance(entry, dict) else None
    if not isinstance(selects, dict) or not set(selects) <= set(SELECTORS):
        raise RulegaugeError(f"{EXPECTED}: slice {name}: 'selects' must map selectors "
                             f"({', '.join(SELECTORS)}) to values, got {selects!r}")
    spec: dict[str, Any] = {k: tuple(v) if k == "questions" else v for k, v in selects.items()}
    return select(SliceSpec(name, **spec), side, side)


def expected_scope(run: Side, config: Sequence[str], policy: Path | None
                   ) -> tuple[list[str], tuple[SliceSpec, ...]]:
    """(the configs expected.yaml sums up, the policy's slices): the policy's gated config
    (when it names one), else every config kept (--config, else all)."""
    configs = side_configs(run)
    kept = [resolve_config(c, configs, f"run {run.run_id}") for c in config] or \
        [str(c) for c in configs["config_id"]]
    if policy is None:
        return kept, ()
    pol = load_policy(policy)
    gated = resolve_config(gate_pair(pol, run, run)[0], configs, f"run {run.run_id}")
    if gated not in kept:
        raise RulegaugeError(f"--policy gates {gated}, which --config leaves out of the baseline")
    return [gated], pol.slices
