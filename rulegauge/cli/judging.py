"""Judging commands: ``rulegauge pool``, ``rulegauge judge`` and ``rulegauge judges ...``
(agreement, export, import)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from rulegauge.cli.errors import bad_input_exits_2, plain_console, print_note
from rulegauge.cli.json_out import JSON_HELP, echo_json, json_errors
from rulegauge.cli.judges_llm import llm_cmd
from rulegauge.cli.judges_ppi import overlap_cmd, ppi_cmd
from rulegauge.cli.outputs import check_output

if TYPE_CHECKING:
    from rulegauge.judging.compare_labels import LabelAgreement
    from rulegauge.judging.rankings import RankingAgreement

judges_app = typer.Typer(help="Judgment sets: LLM pre-judging, agreement between them, qrels "
                         "export and import.",
                         no_args_is_help=True)
RunsDir = Annotated[Path, typer.Option("--runs-dir", help="Folder that holds run directories.")]


def register(app: typer.Typer) -> None:
    app.command("pool")(pool_cmd)
    app.command("judge")(judge_cmd)
    judges_app.command("llm")(llm_cmd)
    judges_app.command("overlap")(overlap_cmd)
    judges_app.command("ppi")(ppi_cmd)
    app.add_typer(judges_app, name="judges")


def pool_cmd(
    runs: Annotated[list[str], typer.Argument(help="Runs to pool (directory, id or 'latest').")],
    depth: Annotated[int, typer.Option("--depth", "-k", min=1, help="Top K pages per list.")] = 10,
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="Config to pool (repeat; default: the service config).")] = None,
    judgments: Annotated[list[Path] | None, typer.Option(
        "--judgments", "-j", help="Judgments file (JSON lines or TREC qrels) whose pairs count as "
                                  "judged (repeat).")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Pool file to write.")] = Path(
        "pool.jsonl"),
    include_judged: Annotated[bool, typer.Option(
        "--include-judged", help="Keep pages already judged (listed gold pages too), to "
                                 "measure a judge's agreement with the gold set.")] = False,
    runs_dir: RunsDir = Path("runs"),
    as_json: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Pool the pages no judgment covers: the top K of the chosen configs and of every arm alone.

    Example: rulegauge pool latest --depth 5 -c rrf_k60_bm25+dense+boost -o pool.jsonl
    Example: rulegauge pool latest --depth 5 --json
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.judging.pool import PoolRequest, build_pool
    from rulegauge.judging.poolfile import write_pool
    from rulegauge.store.fits import Wants
    from rulegauge.store.rundir import open_run

    with json_errors(enabled=as_json):
        # latest: one with fused rows and the configs named
        opened = tuple(open_run(r, runs_dir, needs="fused", wants=Wants.of(configs=config)) for r in runs)
        check_output(out, tuple(judgments or ()), runs=opened)
        pool = build_pool(PoolRequest(opened, depth, tuple(config) if config else None,
                                      tuple(judgments or ()), include_judged=include_judged))
        write_pool(pool, out)
    asked = len({p.question_id for p in pool.pages})
    what = "pages" if include_judged else "unjudged pages"
    if as_json:
        echo_json({"out": str(out), "pages": len(pool.pages), "included_judged": include_judged,
                   "questions_pooled": asked, "questions": len(pool.questions), "depth": depth,
                   "configs": list(pool.configs), "runs": [r.run_id for r in opened],
                   "goldset": pool.goldset, "goldset_sha256": pool.goldset_sha256})
        return
    plain_console(soft_wrap=True).print(f"wrote {out}: {len(pool.pages)} {what} for {asked} of "
                          f"{len(pool.questions)} questions (top {depth} of "
                          f"{', '.join(pool.configs) or 'no config'} and every arm alone; "
                          f"gold set {pool.goldset} {pool.goldset_sha256[:12]})")


def judge_cmd(
    pool: Annotated[Path, typer.Argument(
        help="Pool file written by rulegauge pool, or proposals of rulegauge goldset generate.")],
    judgments: Annotated[Path | None, typer.Option(
        "--judgments", "-j", help="Judgments (or decisions) file to append to (default: "
                                  "POOL.judgments.jsonl, PROPOSALS.decisions.jsonl); "
                                  "judging resumes from it.")] = None,
    port: Annotated[int, typer.Option("--port", min=0, max=65535,
                                      help="Port on 127.0.0.1 (0: any free port).")] = 8765,
    unblinded: Annotated[bool, typer.Option(
        "--unblinded", help="Show which configs and arms found each page, at which rank, in "
                            "pool order (default: blind, a seeded random order).")] = False,
    seed: Annotated[int, typer.Option("--seed", min=0, max=2**32 - 1,
                                      help="Seed of the blind view's random order.")] = 0,
) -> None:
    """Serve the judging page on 127.0.0.1: keys 0-3 grade a page, s skips; Ctrl-C stops.
    Given a proposals file, serve the review page instead: a accepts, e edits, r rejects.

    The judging page is blind by default: pages in a random order (--seed), no config,
    arm or rank shown; --unblinded shows them. Each judgment records the view and seed.

    Several people can judge the same pool at once: each opens the page with ?judge=NAME
    (http://127.0.0.1:8765/?judge=ann).
    Example: rulegauge judge pool.jsonl --port 8765
    Example: rulegauge judge proposals.jsonl
    """
    from rulegauge.judging.blind import UNBLINDED, View
    from rulegauge.judging.poolfile import read_pool
    from rulegauge.judging.proposals import is_proposals_file, read_proposals
    from rulegauge.judging.review import ReviewSession
    from rulegauge.judging.server import make_server
    from rulegauge.judging.session import Session

    review = is_proposals_file(pool)
    target = judgments or pool.with_name(pool.stem + (".decisions.jsonl" if review
                                                      else ".judgments.jsonl"))
    with bad_input_exits_2():
        session: Session | ReviewSession = (ReviewSession(read_proposals(pool), target)
                                            if review else
                                            Session(read_pool(pool), target, pool_path=str(pool),
                                                    view=UNBLINDED if unblinded else View(seed=seed)))
        server = make_server(session, port)
    host, bound = server.server_address[:2]
    what = (f"reviewing {len(session.items)} proposed questions" if review else
            f"judging {len(session.items)} pooled pages of {cast(Session, session).pool.goldset}"
            + (", unblinded" if unblinded else f", blind (seed {seed})"))
    plain_console(stderr=True).print(f"{what}: http://{host!s}:{bound}/  (saved to {target}; "
                                     "Ctrl-C to stop)")
    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # SIGTERM stops like Ctrl-C: every judgment is already on disk

    signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    plain_console(stderr=True).print(f"stopped; {'decisions' if review else 'judgments'} are in "
                                     f"{target}")


def _print_agreement(r: LabelAgreement, ranking: RankingAgreement | None) -> None:
    c = plain_console(soft_wrap=True)

    def f(x: float | None) -> str:
        return "undefined" if x is None else f"{x:.3f}"

    c.print(f"A = {r.a}\nB = {r.b}  (reference)")
    c.print(f"pairs compared: {r.pairs}" + (f" ({r.assumed_zero} never judged by the gold set: "
            "taken as grade 0)" if r.assumed_zero else "")
            + (f"; {r.llm_pairs} of them LLM-judged [llm]" if r.llm_pairs else ""))
    ci = r.interval
    c.print(f"Cohen's kappa (grades 0-3): {f(r.kappa)}  95% bootstrap CI {f(ci.low)} to "
            f"{f(ci.high)} (percentile, over the {r.questions} questions: {ci.resamples} "
            "resamples, seeded)")
    c.print(f"Cohen's kappa (relevant >= 1 vs 0): {f(r.binary_kappa)}")
    c.print(f"agreement: {f(r.accuracy)}; always-most-common baseline (grade "
            f"{r.baseline_grade} of B): {f(r.baseline_accuracy)}, kappa 0.000")
    c.print("confusion (rows A, columns B):\n      B=0  B=1  B=2  B=3")
    for g, row in enumerate(r.confusion):
        c.print(f"A={g} " + " ".join(f"{n:4d}" for n in row))
    same = [(r.confusion[g][g], sum(row[g] for row in r.confusion)) for g in range(4)]
    c.print("per grade of B, the share A gave the same grade: " + ", ".join(
        f"{g}: {k}/{n}" for g, (k, n) in enumerate(same)))
    if ranking is not None:
        c.print(f"Kendall's tau between config rankings by {ranking.metric} "
                f"({len(ranking.configs)} configs, {ranking.questions} questions): "
                f"{f(ranking.tau)}" + ("" if ranking.p_value is None
                                       else f" (p = {ranking.p_value:.3g})"))


@judges_app.command("agreement")
def agreement_cmd(
    a: Annotated[Path, typer.Argument(help="Judgments file, or a gold set (.yaml).")],
    b: Annotated[Path, typer.Argument(help="Reference: judgments file or gold set (.yaml).")],
    run: Annotated[str | None, typer.Option(
        "--run", help="Run whose configs to rank under both label sets (Kendall's tau).")] = None,
    metric: Annotated[str, typer.Option("--metric", "-m", help="ir_measures metric of the "
                                        "rankings.")] = "nDCG@10",
    judge_a: Annotated[str | None, typer.Option("--judge-a", help="Only this judge of A (of a qrels "
                                                "file: its judge id, default the file's stem).")] = None,
    judge_b: Annotated[str | None, typer.Option("--judge-b", help="Only this judge of B (of a qrels "
                                                "file: its judge id, default the file's stem).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the bootstrap.")] = 0,
    resamples: Annotated[int, typer.Option("--resamples", min=10)] = 1000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
    runs_dir: RunsDir = Path("runs"),
) -> None:
    """Compare two judgment sets (or one with a gold set): kappa with a bootstrap CI beside the
    always-most-common baseline, a confusion matrix, Kendall's tau of config rankings.

    Example: rulegauge judges agreement llm.jsonl goldsets/sample.yaml --run latest

    A and B may be graded TREC qrels (told apart by content); --judge-a/--judge-b name their judges.

    Example: rulegauge judges agreement ann.qrels bob.qrels --json
    """
    from dataclasses import asdict

    from rulegauge.goldset.labels import is_goldset_path, load_labels, overlay
    from rulegauge.goldset.parse import load_goldset
    from rulegauge.judging.compare_labels import compare
    from rulegauge.judging.rankings import ranking_agreement
    from rulegauge.store.fits import Wants
    from rulegauge.store.rundir import open_run

    with bad_input_exits_2():
        gold = next((load_goldset(p, allow_outside=True) for p in (b, a) if is_goldset_path(p)),
                    None)
        la = load_labels(a, judge=judge_a, against=gold)
        lb = load_labels(b, judge=judge_b, against=gold)
        result = compare(la, lb, seed=seed, resamples=resamples)
        ranking = None
        if run is not None:
            # `--run latest` with a gold set given: the newest run of that gold set (by hash)
            wants = Wants(gold.sha256, gold.name) if gold is not None else None
            r = open_run(run, runs_dir, wants=wants)
            base = load_labels(Path(r.manifest["goldset"]["path"]))
            ranking = ranking_agreement(r, la if la.kind == "goldset" else overlay(base, la),
                                        lb if lb.kind == "goldset" else overlay(base, lb), metric)
    if as_json:
        plain_console(soft_wrap=True).print(json.dumps({"agreement": asdict(result), "ranking": asdict(ranking)
                                          if ranking else None}, indent=1), soft_wrap=True)
        return
    _print_agreement(result, ranking)


@judges_app.command("export")
def export_cmd(
    source: Annotated[Path, typer.Argument(help="Judgments file, or a gold set (.yaml).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="qrels file to write.")],
    judge: Annotated[str | None, typer.Option("--judge", help="Only this judge's.")] = None,
) -> None:
    """Write graded TREC qrels (qid 0 doc#page grade; 0 = judged non-relevant).

    Example: rulegauge judges export pool.judgments.jsonl -o judged.qrels
    """
    from rulegauge.goldset.labels import load_labels
    from rulegauge.interop.judgment_qrels import write_label_qrels

    with bad_input_exits_2():
        for written in (out, out.with_name(out.stem + ".llm.txt")):  # the LLM-only pairs' list
            check_output(written, (source,))
        labels = load_labels(source, judge=judge)
        path, marks = write_label_qrels(labels, out)
    plain_console(soft_wrap=True).print(f"wrote {path}: {len(labels.grades)} judged pairs")
    if marks is not None:
        print_note(f"{len(labels.llm)} pairs are LLM-judged only: listed in {marks}")


@judges_app.command("import")
def import_cmd(
    qrels: Annotated[Path, typer.Argument(help="qrels file: qid 0 doc#page grade (0-3).")],
    judge: Annotated[str, typer.Option("--judge", help="Who judged them (id, no spaces).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Judgments file to write.")],
    kind: Annotated[str, typer.Option("--kind", help="human or llm.")] = "human",
    goldset: Annotated[Path | None, typer.Option(
        "--goldset", "-g", help="Gold set to check against (and stamp its hash).")] = None,
) -> None:
    """Turn graded qrels into a judgments file (for rulegauge goldset merge).

    Example: rulegauge judges import judged.qrels --judge ann -g goldsets/sample.yaml -o ann.jsonl
    """
    from rulegauge.goldset.judgments import write_judgments
    from rulegauge.goldset.parse import load_goldset
    from rulegauge.interop.judgment_qrels import judgments_from_qrels

    with bad_input_exits_2():
        check_output(out, (qrels, goldset))
        gs = load_goldset(goldset, allow_outside=True) if goldset else None
        found = judgments_from_qrels(qrels, judge, kind, goldset=gs)
        write_judgments(out, found)
    plain_console(soft_wrap=True).print(f"wrote {out}: {len(found)} judgments by {judge} ({kind})")
