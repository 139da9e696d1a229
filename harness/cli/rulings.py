"""``harness rulings``: import production ruling pages, decode fused scores, score on gold."""

from __future__ import annotations

from contextlib import contextmanager
from collections.abc import Iterator
from pathlib import Path

import typer

from harness.cli.errors import bad_input_exits_2, err_console


def register(app: typer.Typer) -> None:
    sub = typer.Typer(help="Production ruling pages: import, decode fused scores, score on gold.",
                      no_args_is_help=True)
    sub.command("import")(import_cmd)
    sub.command("decode")(decode_cmd)
    sub.command("score")(score_cmd)
    app.add_typer(sub, name="rulings")


@contextmanager
def _bad_input() -> Iterator[None]:
    """HarnessError and ValueError (bad numbers) exit with 2 and a message."""
    with bad_input_exits_2():
        try:
            yield
        except ValueError as exc:
            err_console.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
            raise typer.Exit(2) from None


def _fence(row: dict) -> str:
    passed, density = row.get("fence_passed"), row.get("fence_letter_density")
    if passed is None:
        return "-"
    verdict = "passed" if passed else "failed"
    return verdict if density is None or density != density else f"{verdict} {density:.5f}"


def import_cmd(
    files: list[Path] = typer.Argument(..., help="Ruling page files, or folders of *.txt pages."),
    out: Path = typer.Option(Path("runs"), "--out", "-o", help="Folder that holds run directories."),
    run_id: str = typer.Option(None, "--run-id", help="Run id (default: rulings-<time>-<random>)."),
    depth: int = typer.Option(100, "--depth", help="Deepest per-arm rank tried when decoding."),
    rounding: str = typer.Option("half_up", "--rounding", help="How production rounded scores: half_up or half_even."),
    goldset: Path = typer.Option(None, "--goldset", "-g", help="Also score the rulings on this gold set."),
    mapping: Path = typer.Option(None, "--mapping", help="Mapping file: production games/documents/questions -> gold."),
) -> None:
    """Parse ruling pages into a rulings run (Parquet) and decode their fused scores.

    Example: harness rulings import ../shared/rulings/ --goldset goldsets/sample.yaml
    """
    from rich.console import Console
    from rich.table import Table

    from harness.rulings.decode import ROUNDINGS
    from harness.rulings.importer import import_rulings

    with _bad_input():
        ROUNDINGS.get(rounding)
        if depth < 1:
            raise ValueError(f"--depth must be >= 1, got {depth}")
        result = import_rulings(files, out, run_id, depth, rounding)
    console = Console()
    table = Table("ruling", "question", "outcome", "decoded unique", "fence (reported)",
                  title=f"rulings run {result.path}")
    for r in result.rulings:
        dec = result.decodings(r.question_id)
        q = str(r.get("question") or "-")
        table.add_row(r.question_id, q if len(q) <= 60 else q[:57] + "...",
                      str(r.get("outcome") or "-"),
                      f"{sum(d.ranks is not None for d in dec)}/{len(dec)}", _fence(dict(r.values)))
    console.print(table)
    for r in result.rulings:
        for w in r.warnings:
            err_console.print(f"[yellow]warning:[/yellow] {w}", markup=True, highlight=False)
    for f in result.failures:
        err_console.print(f"[red]not imported:[/red] {f}", markup=True, highlight=False)
    if goldset is not None:
        _score(result.path, goldset, mapping)


def _score(run_path: Path, goldset: Path, mapping: Path | None) -> None:
    from rich.console import Console
    from rich.table import Table

    from harness.rulings.score import score_run

    with _bad_input():
        scored = score_run(run_path, goldset, mapping)
    m = scored.table("ruling_matches")
    metrics = scored.table("metrics")
    table = Table("ruling", "gold question", "hit@5", "citation P / R", "fence recomputed",
                  "agrees", title="production against gold")
    for row in m.to_dict("records"):
        gq = row["gold_question_id"]
        hit = metrics[(metrics["question_id"] == gq) & (metrics["metric"] == "hit@5")]["value"]
        cp, cr = row["citation_precision"], row["citation_recall"]
        table.add_row(row["question_id"], gq or f"- ({row['reason']})",
                      f"{hit.iloc[0]:g}" if row["counted"] and len(hit) else "-",
                      f"{cp:.2f} / {cr:.2f}" if cp is not None and cp == cp else "-",
                      _fence(row), str(row["fence_agrees"]))
    Console().print(table)


def score_cmd(
    run: str = typer.Argument(..., help="Rulings run: a path, an id under --runs-dir, or latest."),
    goldset: Path = typer.Option(..., "--goldset", "-g", help="Gold set YAML."),
    mapping: Path = typer.Option(None, "--mapping", help="Mapping file: production games/documents/questions -> gold."),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Folder that holds run directories."),
) -> None:
    """Match a rulings run to gold questions and score production's search and answers.

    Example: harness rulings score rulings-20260101-120000-ab12 --goldset goldsets/sample.yaml
    """
    from harness.store import open_run

    with _bad_input():
        path = open_run(run, runs_dir).path
    _score(path, goldset, mapping)


def decode_cmd(
    score: str = typer.Argument(..., help="Fused RRF score as printed, e.g. 0.048916."),
    k: float = typer.Option(60.0, "--k", help="RRF k."),
    arms: int = typer.Option(3, "--arms", help="Number of arms fused."),
    depth: int = typer.Option(100, "--depth", help="Deepest per-arm rank tried."),
    decimals: int = typer.Option(6, "--decimals", help="Decimals production printed."),
    weights: str = typer.Option(None, "--weights", help="Per-arm weights, comma-separated (default all 1)."),
    rounding: str = typer.Option("half_up", "--rounding", help="half_up or half_even."),
    carried_by: int = typer.Option(None, "--carried-by", help="Keep tuples in which exactly this many arms ranked the chunk."),
) -> None:
    """List every per-arm rank tuple whose fused RRF sum rounds to SCORE.

    Example: harness rulings decode 0.048916 --k 60 --arms 3 --depth 100
    """
    from rich.console import Console

    from harness.rulings.decode import decode_score

    with _bad_input():
        ws = [float(w) for w in weights.split(",")] if weights else None
        d = decode_score(score, k, arms, depth, decimals, ws, rounding)
    cands = d.with_voters(carried_by) if carried_by is not None else d.candidates
    console = Console()
    console.print(f"score {score} (k={d.k:g}, {d.arms} arms, depth {d.depth}, {d.rounding}; "
                  f"ceiling {d.ceiling:.6f}): {len(d.candidates)} candidate(s)"
                  + (f", {len(cands)} with {carried_by} arm(s) voting" if carried_by is not None
                     else "") + (" — unique" if len(cands) == 1 else ""), highlight=False)
    for c in cands:
        console.print("  (" + ", ".join("-" if r is None else str(r) for r in c) + ")",
                      highlight=False)
    if d.flags:
        console.print("flags: " + ", ".join(d.flags), highlight=False)
