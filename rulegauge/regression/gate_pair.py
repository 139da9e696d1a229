"""Which configs a gate pairs: the policy's or the command's config selectors, else the
config each side answered (a policy with answer metrics), else the sole grid config of
each side.
"""

from __future__ import annotations

from rulegauge.core.errors import RulegaugeError
from rulegauge.metrics.info import metric_info
from rulegauge.regression.pairing import grid_pair
from rulegauge.regression.policy import Policy
from rulegauge.store.baseline import Side, side_configs


def gate_pair(policy: Policy, base: Side, candidate: Side, config: str | None = None,
              candidate_config: str | None = None) -> tuple[str, str]:
    """The (base, candidate) config selectors to gate: arguments, else the policy's
    ``[gate] config``, else (for a policy with answer metrics) the one config each side
    answered, else the sole grid config of each side."""
    b = config or policy.config
    c = candidate_config or (policy.candidate_config if not config else None) or b
    if b is not None and c is not None:
        return b, c
    answered = [list((side.manifest.get("answering") or {}).get("configs") or [])
                for side in (base, candidate)]
    if has_answer_metric(policy) and all(len(a) == 1 for a in answered):
        return answered[0][0], answered[1][0]  # the one config each side answered
    gp = grid_pair(side_configs(base), side_configs(candidate))
    if gp is None:
        raise RulegaugeError("name the config to gate ([gate] config in the policy, or --config): "
                           "base has " + ", ".join(side_configs(base)["config_id"])
                           + "; candidate has " + ", ".join(side_configs(candidate)["config_id"]))
    return gp.base, gp.candidate


def has_answer_metric(policy: Policy) -> bool:
    """Whether the policy gates an answer metric."""
    return any((i := metric_info(m)) is not None and i.kind == "answer"
               for m in policy.metric_names())
