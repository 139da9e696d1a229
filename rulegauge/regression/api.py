"""The Python API of ``rulegauge compare`` and ``rulegauge gate`` (``from rulegauge import compare, gate``).

Both run as the commands run them. A run is named as on the command line: a run directory, a run
id under ``runs_dir``, a baseline name under ``<runs_dir>/baselines`` (or a baseline directory), or
``"latest"``
(:func:`rulegauge.store.baseline.load_side`). Both return the library's own records: a
:class:`~rulegauge.regression.compare.Comparison` (per metric and config pair: means, paired
difference, its interval and test, per-question changes) and a
:class:`~rulegauge.regression.gate.GateResult` (``passed``, ``exit_code``, every ``checks`` row).
Bad input raises :class:`~rulegauge.core.errors.RulegaugeError` with the message the CLI prints
(the CLI's exit 2).

Reference: docs/gate.md (policies, the checks, the statistics), README "Python API".
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rulegauge.metrics.info import metric_info
from rulegauge.regression.compare import Comparison, compare_runs
from rulegauge.regression.gate import GateResult, run_gate
from rulegauge.regression.policy import Policy, load_policy
from rulegauge.store.baseline import load_side


def compare(base: str | Path, candidate: str | Path, *, runs_dir: str | Path = "runs",
            metrics: Sequence[str] | None = None, configs: Sequence[str] | None = None,
            force: bool = False, seed: int = 0, n_resamples: int = 10_000) -> Comparison:
    """``rulegauge compare BASE CANDIDATE``: ``candidate`` against ``base`` per metric and config.

    ``metrics`` (default: every metric both runs scored) and ``configs`` (config ids or names of
    both runs; default: the configs they share) narrow the comparison; ``force`` compares runs of
    different gold sets or corpora. Paired tests use ``seed`` and ``n_resamples``."""
    b, c = load_side(base, Path(runs_dir)), load_side(candidate, Path(runs_dir))
    return compare_runs(b, c, configs=list(configs) if configs else None,
                        metrics=list(metrics) if metrics else None, force=force, seed=seed,
                        n_resamples=n_resamples)


def gate(baseline: str | Path, run: str | Path, policy: str | Path | Policy, *,
         runs_dir: str | Path = "runs", config: str | None = None, force: bool = False) -> GateResult:
    """``rulegauge gate --baseline BASELINE --run RUN --policy POLICY``: the policy's checks of
    ``run`` against ``baseline`` (``result.passed``; ``result.exit_code`` is the CLI's 0 or 1).

    ``policy`` is a policy TOML path or a loaded :class:`Policy`; ``config`` overrides its
    ``[gate] config``. ``run="latest"`` is the newest complete run that scored the policy's
    ranking metrics, as on the command line."""
    pol = policy if isinstance(policy, Policy) else load_policy(Path(policy))
    ranking = [i.name for n in pol.metric_names() if (i := metric_info(n)) is not None and i.kind == "ranking"]
    return run_gate(pol, load_side(baseline, Path(runs_dir)), load_side(run, Path(runs_dir), metrics=ranking),
                    force=force, config=config)
