"""The report's section on filled judgments: each config's metric under the human-only and the
filled labels side by side, Kendall's tau between the two orders, and the PPI intervals.

Written for ``rulegauge report RUN --human FILE --auto FILE``
(:mod:`rulegauge.cli.report`), from a :class:`rulegauge.judging.ppi_run.PpiResult`; the
definitions are :mod:`rulegauge.judging.ppi_run`'s.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from rulegauge.analysis.report_html import table_html
from rulegauge.judging.ppi_run import PpiRequest, PpiResult, ppi_run
from rulegauge.store.rundir import Run


def ppi_frame(result: PpiResult, metric: str) -> pd.DataFrame:
    """One row per config (then per difference with the baseline) of ``metric``."""
    rows = []
    for r in (r for r in result.rows if r.metric == metric):
        rows.append({
            "config": r.config_id if r.baseline is None else f"{r.config_id} - {r.baseline}",
            "human-only": r.human_only, "filled": r.filled,
            "filled - human-only": r.filled - r.human_only,
            "PPI estimate": r.ppi.estimate, "PPI low": r.ppi.low, "PPI high": r.ppi.high,
            "human sample": r.classical.estimate, "classical low": r.classical.low,
            "classical high": r.classical.high,
            "width ratio": r.ppi.width / r.classical.width if r.classical.width else float("nan"),
            "weight": r.ppi.lam})
    return pd.DataFrame(rows)


def ppi_html(result: PpiResult, human: str, auto: str) -> list[str]:
    """The section's HTML parts (one table per metric)."""
    esc = html.escape
    n = len(result.sample)
    pct = f"{result.level:.0%}"
    parts = [
        "<h2 id='filled-judgments'>Human-only and filled judgments</h2>",
        f"<p class='note'>Labels: <b>human-only</b> = the gold set plus the people's judgments "
        f"in {esc(human)} (pages nobody judged count as not relevant); <b>filled</b> = the same "
        f"with the automatic judgments in {esc(auto)} wherever no person judged. Means over the "
        f"run's {result.questions} answerable questions, metrics by ir_measures. Kendall's tau-b "
        "compares the configs' orders under the two (UMBRELA's check). <b>PPI</b>: the "
        f"prediction-powered {pct} interval (Angelopoulos et al. 2023"
        + (", PPI++ tuned weight" if result.tuned else ", weight 1")
        + f") from the {n} questions people judged ({result.human_judgments} judgments) and the "
        f"automatic labels of the other {result.questions - n}; <b>classical</b>: the "
        f"interval on the {n} human-judged questions alone, without the automatic labels. Valid "
        "when the judged questions are a random sample of the questions. Method: "
        "docs/judging.md.</p>"]
    for metric in dict.fromkeys(r.metric for r in result.rows):
        tau = result.tau[metric]
        parts += [f"<h3>{esc(metric)}</h3>",
                  f"<p class='note'>Kendall's tau-b between the configs' orders, human-only "
                  f"against filled: <b class='tau'>{'undefined' if tau is None else f'{tau:.3f}'}"
                  "</b></p>",
                  table_html(ppi_frame(result, metric))]
    return parts


def filled_sections(run: Run, human: tuple[Path, ...], auto: tuple[Path, ...],
                    say: Callable[[str], None]) -> tuple[str, ...]:
    """The section for ``rulegauge report --human ... --auto ...`` (nothing without them),
    on ``nDCG@10`` with the service config as the baseline when the run stored it."""
    if not human:
        return ()
    from rulegauge.judging.rankings import page_lists
    from rulegauge.regression.service import SERVICE_CONFIG

    names = ", ".join(map(str, human)), ", ".join(map(str, auto))
    say(f"human-only and filled judgments ({names[0]}; {names[1]})")
    stored = set(page_lists(run)["config_id"].astype(str))
    result = ppi_run(PpiRequest(run, human, auto,
                                baseline=SERVICE_CONFIG if SERVICE_CONFIG in stored else None))
    for metric, tau in result.tau.items():
        say(f"{metric}: Kendall's tau-b of the configs' orders, human-only against filled: "
            + ("undefined" if tau is None else f"{tau:.3f}"))
    return tuple(ppi_html(result, *names))
