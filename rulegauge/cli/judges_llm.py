"""``rulegauge judges llm``: an LLM relevance judge pre-judges a pool file."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Annotated, cast

import typer

from rulegauge.cli.errors import bad_input_exits_2, plain_console, print_note
from rulegauge.cli.outputs import check_output


def llm_cmd(
    pool: Annotated[Path, typer.Argument(help="Pool file written by rulegauge pool.")],
    suite: Annotated[Path, typer.Option("--suite", "-s", help="Answerer suite (TOML) holding "
                                        "the judge.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Judgments file to write.")],
    judge: Annotated[str | None, typer.Option(
        "--judge", help="Label of the suite's chat answerer that judges (default: the "
                        "suite's judge table).")] = None,
    samples: Annotated[int, typer.Option("--samples", "-n", min=1, max=15,
                                         help="Samples per page; the majority is kept.")] = 1,
    seed: Annotated[int, typer.Option("--seed", help="Seed of sample 1 (sample i: seed+i).")] = 0,
    cache: Annotated[Path | None, typer.Option(
        "--cache", help="Reply cache (default: OUT.cache.jsonl); reruns ask nothing twice.")
    ] = None,
    timeout: Annotated[float, typer.Option("--preflight-timeout", min=0.1)] = 20.0,
) -> None:
    """Pre-judge every page of a pool with an LLM (grades 0-3, prompt relevance-v1).

    Writes judgments (judge_kind llm, judge_id MODEL@PROMPTHASH) and OUT.summary.json
    (unparseable verdicts, disagreement rate of the samples). Exit 2 when the judge's
    endpoint is down, before anything is asked.
    Example: rulegauge judges llm pool.jsonl --suite suite.toml --judge local -n 3 -o llm.jsonl
    """
    from rulegauge.answering.specs import close
    from rulegauge.cli.progress import rich_progress
    from rulegauge.core import atomic
    from rulegauge.goldset.judgments import write_judgments
    from rulegauge.judging.endpoint import model_of, open_judge, secrets_of, seeded_chat
    from rulegauge.judging.llm import JudgeRequest, VerdictCache, judge_pool
    from rulegauge.judging.poolfile import read_pool

    with bad_input_exits_2():
        for written in (out, out.with_name(out.name + ".summary.json"),
                        *(() if cache else (out.with_name(out.name + ".cache.jsonl"),))):
            check_output(written, (pool, suite, cache))
        read = read_pool(pool)
        label, answerer = open_judge(suite, judge, timeout)
    try:
        model = model_of(answerer)
        out.parent.mkdir(parents=True, exist_ok=True)  # the cache is appended there first
        req = JudgeRequest(read, seeded_chat(answerer), model, samples, seed)
        replies = VerdictCache(cache or out.with_name(out.name + ".cache.jsonl"),
                             secrets_of(answerer))
        with rich_progress() as stage:
            bars = cast(AbstractContextManager[Callable[[int], None]],
                        stage(f"judging with {label}", len(read.pages)))
            with bars as bar:
                found, summary = judge_pool(req, replies, bar)
    finally:
        close(answerer)
    with bad_input_exits_2():
        write_judgments(out, found)
        side = out.with_name(out.name + ".summary.json")
        atomic.write_text(side, json.dumps({**summary.as_dict(), "pool": str(pool),
                                            "label": label}, indent=1) + "\n")
    rate = summary.disagreement_rate
    plain_console(soft_wrap=True).print(
        f"wrote {out}: {summary.judged} of {summary.pairs} pages judged by {summary.judge_id} "
        f"({samples} sample(s) each; {summary.calls} calls, {summary.cached} cached); "
        f"unparseable: {summary.unparseable_pairs} pages ({summary.unparseable_samples} "
        f"samples); failed calls: {summary.failed_samples}; disagreement rate: "
        + ("n/a" if rate is None else f"{rate:.3f}") + f"; summary {side}")
    if summary.failed_pairs:
        print_note(f"{summary.failed_pairs} pages got no verdict (every call failed): rerun to "
                   "ask them again (answered pages come from the cache)")
        raise typer.Exit(1)
