"""``rulegauge rulings``: import production ruling pages, decode fused scores, score on gold."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from rulegauge.cli.errors import bad_input_exits_2, err_console, print_error
from rulegauge.cli.output import FORMAT_HELP, TABLE_FORMATS, format_console, make_console
from rulegauge.core.errors import Problem

Files = Annotated[list[Path], typer.Argument(help="Ruling page files, or folders of *.txt pages.")]
Out = Annotated[Path, typer.Option("--out", "-o", help="Folder that holds run directories.")]
RunId = Annotated[str | None, typer.Option("--run-id", help="Run id (default: timestamped).")]
Depth = Annotated[int, typer.Option("--depth", help="Deepest per-arm rank tried when decoding.")]
Rounding = Annotated[str, typer.Option("--rounding", help="half_up or half_even.")]
GoldOpt = Annotated[Path | None, typer.Option("--goldset", "-g", help="Also score on it.")]
GoldReq = Annotated[Path, typer.Option("--goldset", "-g", help="Gold set YAML.")]
MappingOpt = Annotated[Path | None, typer.Option(
    "--mapping", help="Mapping file: production games, documents, questions -> gold "
    "(default: mapping.yaml beside the pages).")]
RunRef = Annotated[str, typer.Argument(help="Rulings run: a path, an id under --runs-dir, latest.")]
RunsDir = Annotated[Path, typer.Option("--runs-dir", help="Folder that holds run directories.")]
Score = Annotated[str, typer.Argument(help="Fused RRF score as printed, e.g. 0.048916.")]
Fmt = Annotated[str, typer.Option("--format", help=FORMAT_HELP)]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON on stdout (--format json).")]


def register(app: typer.Typer) -> None:
    sub = typer.Typer(help="Production ruling pages: import, decode fused scores, score on gold.",
                      no_args_is_help=True)
    sub.command("import")(import_cmd)
    sub.command("decode")(decode_cmd)
    sub.command("score")(score_cmd)
    app.add_typer(sub, name="rulings")


@contextmanager
def _bad_input() -> Iterator[None]:
    """RulegaugeError and ValueError (bad numbers) exit with 2 and a message."""
    with bad_input_exits_2():
        try:
            yield
        except ValueError as exc:
            print_error(str(exc))
            raise typer.Exit(2) from None


def _na(x: Any) -> Any:
    """None for null cells (None, NaN, pandas NA), else the value."""
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    import pandas as pd

    return None if x is None or (not isinstance(x, list | tuple) and pd.isna(x)) else x


def _fence(row: dict[str, Any]) -> str:
    passed, density = _na(row.get("fence_passed")), _na(row.get("fence_letter_density"))
    if passed is None:
        return "-"
    verdict = "passed" if passed else "failed"
    return verdict if density is None else f"{verdict} {density:.5f}"


def import_cmd(files: Files, out: Out = Path("runs"), run_id: RunId = None, depth: Depth = 100,
               rounding: Rounding = "half_up", goldset: GoldOpt = None,
               mapping: MappingOpt = None, fmt: Fmt = "table", as_json: AsJson = False) -> None:
    """Parse ruling pages into a rulings run (Parquet) and decode their fused scores.

    Example: rulegauge rulings import ../shared/rulings/ --out runs/
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.arms.rrf_rounding import ROUNDINGS
    from rulegauge.rulings.importer import import_rulings

    fmt = "json" if as_json else fmt
    with _bad_input():
        ROUNDINGS.get(rounding)
        TABLE_FORMATS.get(fmt)
        if depth < 1:
            raise ValueError(f"--depth must be >= 1, got {depth}")
        result = import_rulings(files, out, run_id, depth, rounding)
    table = Table("ruling", "question", "outcome", "decoded unique", "fence (reported)",
                  title=f"rulings run {result.path}")
    for r in result.rulings:
        dec = result.decodings(r.question_id)
        q = str(r.get("question") or "-")
        table.add_row(r.question_id, q if len(q) <= 60 else q[:57] + "...",
                      str(r.get("outcome") or "-"),
                      f"{sum(d.ranks is not None for d in dec)}/{len(dec)}", _fence(dict(r.values)))
    with format_console(fmt) as console:
        console.print(table)
    for line in grouped_warnings([w for r in result.rulings for w in r.warnings], len(result.rulings)):
        err_console.print(f"warning: {line}", markup=False, highlight=False)
    for f in result.failures:
        err_console.print(f"not imported: {f}", markup=False, highlight=False)
    if goldset is not None:
        mapping = mapping or folder_mapping(files)
        _score(result.path, goldset, mapping, fmt)


def grouped_warnings(warnings: list[Problem], pages: int) -> list[str]:
    """One line per distinct warning, with the pages it concerns: a warning repeated across
    pages prints once ("... in all 4 pages", or the files that have it)."""
    by_message: dict[str, list[str]] = {}
    for w in warnings:
        by_message.setdefault(w.message, []).append(w.where)
    lines = []
    for message, places in by_message.items():
        if len(places) == 1:
            lines.append(f"{places[0]}: {message}" if places[0] else message)
        elif len(places) == pages:
            lines.append(f"{message}: in all {pages} pages")
        else:
            lines.append(f"{message}: in {len(places)} of {pages} pages ({', '.join(places)})")
    return lines


def folder_mapping(files: list[Path]) -> Path | None:
    """The ``mapping.yaml`` beside the ruling pages (in a folder given, or the pages' one
    folder), used when ``--mapping`` is not given; a note says so."""
    folders = {p if p.is_dir() else p.parent for p in files}
    found = [f / "mapping.yaml" for f in sorted(folders) if (f / "mapping.yaml").is_file()]
    if len(found) != 1:
        return None
    err_console.print(f"note: using the mapping beside the pages: {found[0]}", markup=False,
                      highlight=False)
    return found[0]


def _score(run_path: Path, goldset: Path, mapping: Path | None, fmt: str = "table") -> None:
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.core.tablerows import records
    from rulegauge.rulings.evaluate import score_run

    with _bad_input():
        scored = score_run(run_path, goldset, mapping)
    matches, metrics = scored.table("ruling_matches"), scored.table("metrics")
    table = Table("ruling", "gold question", "hit@5", "citation P / R", "fence recomputed",
                  "agrees with page", title="production against gold")
    for row in records(matches):
        gq, cp, cr = _na(row["gold_question_id"]), _na(row["citation_precision"]), _na(
            row["citation_recall"])
        hit = metrics[(metrics["question_id"] == gq) & (metrics["metric"] == "hit@5")]["value"]
        table.add_row(row["question_id"], gq or f"- ({_na(row['reason'])})",
                      f"{hit.iloc[0]:g}" if row["counted"] and len(hit) else "-",
                      f"{cp:.2f} / {cr:.2f}" if cp is not None and cr is not None else "-",
                      _fence(row), str(_na(row["fence_agrees"])))
    with format_console(fmt) as console:
        console.print(table)


def score_cmd(run: RunRef, goldset: GoldReq, mapping: MappingOpt = None,
              runs_dir: RunsDir = Path("runs"), fmt: Fmt = "table", as_json: AsJson = False) -> None:
    """Match a rulings run to gold questions and score production's search and answers.

    Example: rulegauge rulings score rulings-20260101-120000-ab12 --goldset goldsets/sample.yaml
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.store.rundir import open_run

    fmt = "json" if as_json else fmt
    with _bad_input():
        TABLE_FORMATS.get(fmt)
        path = open_run(run, runs_dir, kind="rulings").path
    _score(path, goldset, mapping, fmt)


def decode_cmd(
    score: Score,
    k: Annotated[float, typer.Option("--k", help="RRF k.")] = 60.0,
    arms: Annotated[int, typer.Option("--arms", help="Number of arms fused.")] = 3,
    depth: Annotated[int, typer.Option("--depth", help="Deepest per-arm rank tried.")] = 100,
    decimals: Annotated[int, typer.Option("--decimals", help="Decimals production printed.")] = 6,
    weights: Annotated[str | None, typer.Option(
        "--weights", help="Per-arm weights, comma-separated (default: all 1).")] = None,
    rounding: Rounding = "half_up",
    carried_by: Annotated[int | None, typer.Option(
        "--carried-by", help="Keep tuples in which exactly this many arms ranked it.")] = None,
) -> None:
    """List every per-arm rank tuple whose fused RRF sum rounds to SCORE.

    Example: rulegauge rulings decode 0.048916 --k 60 --arms 3 --depth 100
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.arms.rrf_decode import decode_score

    with _bad_input():
        ws = [float(w) for w in weights.split(",")] if weights else None
        d = decode_score(score, k, arms, depth, decimals, ws, rounding)
    cands = d.with_voters(carried_by) if carried_by is not None else d.candidates
    head = (f"score {score} (k={d.k:g}, {d.arms} arms, depth {d.depth}, {d.rounding}; ceiling "
            f"{d.ceiling:.6f}): {len(d.candidates)} candidate(s)")
    if carried_by is not None:
        head += f", {len(cands)} with exactly {carried_by} arm(s) ranking it"
    console = make_console()
    console.print(head + (" - unique" if len(cands) == 1 else ""), highlight=False)
    for c in cands:
        console.print("  (" + ", ".join("-" if r is None else str(r) for r in c) + ")",
                      highlight=False)
    if d.flags:
        console.print("flags: " + ", ".join(d.flags), highlight=False)
