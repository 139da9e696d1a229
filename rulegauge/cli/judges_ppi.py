"""``rulegauge judges ppi`` (metrics with prediction-powered intervals) and ``rulegauge judges
overlap`` (the model-free automatic judge); registered by :mod:`rulegauge.cli.judging`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rulegauge.cli.errors import bad_input_exits_2, plain_console, print_note
from rulegauge.cli.output import FORMAT_HELP, format_console
from rulegauge.cli.outputs import check_output

if TYPE_CHECKING:
    from rulegauge.judging.ppi import MeanInterval
    from rulegauge.judging.ppi_run import PpiResult


def _iv(iv: MeanInterval) -> str:
    return f"{iv.low:.3f} to {iv.high:.3f}"


def _print(result: PpiResult, fmt: str) -> None:
    from rich.table import Table

    n, big_n = len(result.sample), result.questions - len(result.sample)
    pct = f"{result.level:.0%}"
    with format_console(fmt) as c:
        c.print(f"run {result.run_id}: {result.questions} answerable questions; human labels on "
                f"{n} ({result.human_judgments} judgments), automatic labels only on {big_n} "
                f"({result.auto_judgments} automatic judgments in all); "
                + ("PPI++ (tuned weight)" if result.tuned else "PPI, weight 1")
                + f", {pct} intervals; without the automatic labels: the classical interval on "
                f"the {n} human-labelled questions")
        for metric in dict.fromkeys(r.metric for r in result.rows):
            t = Table(title=f"{metric} per config (mean over questions)")
            for col in ("config", "PPI estimate", f"PPI {pct} CI", "human sample mean",
                        f"classical {pct} CI", "width ratio", "weight", "human-only (all)",
                        "filled (all)"):
                t.add_column(col)
            for r in (r for r in result.rows if r.metric == metric):
                name = r.config_id if r.baseline is None else f"{r.config_id} - {r.baseline}"
                ratio = r.ppi.width / r.classical.width if r.classical.width else float("nan")
                t.add_row(name, f"{r.ppi.estimate:.3f}", _iv(r.ppi), f"{r.classical.estimate:.3f}",
                          _iv(r.classical), f"{ratio:.2f}", f"{r.ppi.lam:.2f}",
                          f"{r.human_only:.3f}", f"{r.filled:.3f}")
            c.print(t)
            tau = result.tau[metric]
            c.print(f"Kendall's tau-b of the configs' orders by {metric}, human-only against "
                    "filled: " + ("undefined" if tau is None else f"{tau:.3f}"))
    if result.outside:
        print_note(f"{len(result.outside)} question(s) the human judgments cover are not "
                   f"answerable questions of the run, left out: {', '.join(result.outside)}")


def ppi_cmd(
    run: Annotated[str, typer.Argument(help="Run directory, run id or 'latest'.")],
    human: Annotated[list[Path], typer.Option(
        "--human", help="People's judgments (JSON lines or qrels) of a random sample of "
                        "questions (repeat).")],
    auto: Annotated[list[Path], typer.Option(
        "--auto", help="Automatic judgments (an LLM or other judge) of the pool (repeat).")],
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", help="ir_measures metric (repeat; default nDCG@10).")] = None,
    baseline: Annotated[str | None, typer.Option(
        "--baseline", "-b", help="Config every other config is compared with (paired "
                                 "differences).")] = None,
    level: Annotated[float, typer.Option("--level", min=0.5, max=0.999,
                                         help="Confidence level of the intervals.")] = 0.95,
    untuned: Annotated[bool, typer.Option(
        "--untuned", help="Weigh the automatic labels 1, as the PPI paper (default: PPI++'s "
                          "tuned weight in [0, 1], never wider than the human sample's own "
                          "interval, asymptotically).")] = False,
    fmt: Annotated[str, typer.Option("--format", help=FORMAT_HELP)] = "table",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout (--format json).")] = False,
    runs_dir: Annotated[Path, typer.Option("--runs-dir", help="Folder that holds run "
                                           "directories.")] = Path("runs"),
) -> None:
    """Each config's metric from a human-judged sample of questions plus automatic labels on
    the rest, with a prediction-powered interval beside the human sample's own.

    Example: rulegauge judges ppi latest --human ann.jsonl --auto llm.jsonl -b rrf_k60_bm25+boost
    """
    from rulegauge.judging.ppi_run import PpiRequest, ppi_run
    from rulegauge.store.rundir import open_run

    with bad_input_exits_2():
        opened = open_run(run, runs_dir, needs="fused")
        result = ppi_run(PpiRequest(opened, tuple(human), tuple(auto),
                                    tuple(metric or ("nDCG@10",)), baseline, level,
                                    tuned=not untuned))
    _print(result, "json" if as_json else fmt)


def overlap_cmd(
    pool: Annotated[Path, typer.Argument(help="Pool file written by rulegauge pool.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Judgments file to write.")],
) -> None:
    """Grade every pooled page by the share of the question's words it holds (no model:
    offline, deterministic); judge term-overlap-v1, judge_kind llm.

    Example: rulegauge judges overlap pool.jsonl -o overlap.jsonl
    """
    from collections import Counter

    from rulegauge.goldset.judgments import write_judgments
    from rulegauge.judging.overlap_judge import JUDGE_ID, judge_by_overlap
    from rulegauge.judging.poolfile import read_pool

    with bad_input_exits_2():
        check_output(out, (pool,))
        found = judge_by_overlap(read_pool(pool))
        write_judgments(out, found)
    grades = Counter(j.judgment.grade for j in found)
    plain_console(soft_wrap=True).print(
        f"wrote {out}: {len(found)} pages judged by {JUDGE_ID} (grades 0/1/2/3: "
        + "/".join(str(grades[g]) for g in range(4)) + ")")
