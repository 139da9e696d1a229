"""Regression commands: compare two runs, gate a run against a baseline, save baselines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from rulegauge.cli.errors import bad_input_exits_2, print_error, warn_deprecated
from rulegauge.cli.json_out import JSON_HELP, echo_json, json_errors
from rulegauge.cli.output import TABLE_FORMATS, format_console, make_console
from rulegauge.core import atomic
from rulegauge.core.errors import RulegaugeError

baseline_app = typer.Typer(help="Compact, committable baselines of runs.", no_args_is_help=True)

RunsDir = Annotated[Path, typer.Option("--runs-dir", help="Folder of run directories.")]
Force = Annotated[bool, typer.Option("--force", help="Go on even if gold sets or corpora differ.")]
PolicyShort = Annotated[Path | None, typer.Option(
    "-p", hidden=True, help="Deprecated spelling of --policy (-p means --param everywhere).")]
CandidateConfig = Annotated[str | None, typer.Option(
    "--candidate-config", help="The candidate's config id or name, paired with the one --config.")]


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_cmd)
    app.command("gate")(gate_cmd)
    from rulegauge.cli.power import power_cmd  # its own module: the command lives apart from compare's

    app.command("power")(power_cmd)
    app.add_typer(baseline_app, name="baseline")


def _selectors(config: list[str], candidate_config: str | None) -> list[str | tuple[str, str]]:
    if candidate_config is None:
        return list(config)
    if len(config) != 1:
        raise RulegaugeError("--candidate-config pairs with exactly one --config "
                           f"(got {len(config)})")
    return [(config[0], candidate_config)]


def compare_cmd(
    base: Annotated[str, typer.Argument(help="Base: run dir, run id, baseline name or 'latest'.")],
    candidate: Annotated[str, typer.Argument(help="Candidate: run dir, run id or baseline name.")],
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="Config id or name (repeatable; default: every shared config).")
    ] = None,
    candidate_config: CandidateConfig = None,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", help="Metric to compare (repeatable; default: all).")] = None,
    force: Force = False,
    seed: Annotated[int, typer.Option(help="Seed of the permutation test and bootstrap.")] = 0,
    n_resamples: Annotated[int, typer.Option(help="Resamples per test.")] = 10_000,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, tsv, markdown or json.")] = "table",
    policy: Annotated[Path | None, typer.Option(
        "--policy", help="Gate policy TOML: compare its config and metrics with its seed, "
                         "resamples and CI level (the gate's Holm family).")] = None,
    runs_dir: RunsDir = Path("runs"),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout (--format json).")
                       ] = False,
    policy_short: PolicyShort = None,
    reference: Annotated[str | None, typer.Option(
        "--reference", help="Compare every candidate config with this base config (the report's "
                            "family); prints the best one's stability and ties.")] = None,
    adjustment: Annotated[str, typer.Option(
        "--adjustment", help="Multiplicity adjustment over the family: holm or bh.")] = "holm",
    alpha: Annotated[float, typer.Option(
        "--alpha", help="Level of the significant flag (adjusted p < alpha).")] = 0.05,
    slice_: Annotated[list[str] | None, typer.Option(
        "--slice", help="Also compare a slice of the questions on its own, one family each "
                        "(repeatable): tag=errata, game=G, language=ru, answerable=false, "
                        "labelled=false, questions=ID,ID.")] = None,
    overlap_depth: Annotated[int, typer.Option(
        "--overlap-depth", help="Depth k of the RBO and Jaccard of the two runs' lists.")] = 10,
    rbo_p: Annotated[float, typer.Option("--rbo-p", help="RBO persistence p, in (0, 1).")] = 0.9,
) -> None:
    """Compare CANDIDATE with BASE per metric and per question (exit 2 on bad input).

    One multiplicity rule covers one family: every metric and config pair compared here
    (printed under the table; Holm, or --adjustment bh); --policy compares exactly what
    `rulegauge gate` does; --reference compares every candidate config with one base
    config, the family of `rulegauge report`.

    Example: rulegauge compare sample latest --config rrf_k60_bm25+dense+boost --format markdown

    Example: rulegauge compare latest latest --reference rrf_k60_bm25+dense+boost -m recall@5

    Every compared config pair also gets the RBO_ext@k and Jaccard@k of the two runs' fused
    lists (no judgment read); --slice and a policy's slices add one table (and family) per slice.

    Example: rulegauge compare sample latest -c rrf_k60_bm25+dense+boost --slice tag=errata
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.cli.compare_extras import json_with_extras, markdown_extras, print_extras
    from rulegauge.regression.compare import compare_runs
    from rulegauge.regression.gate_pair import gate_pair
    from rulegauge.regression.gate_report import COMPARISON_FORMATS, comparison_renderables
    from rulegauge.regression.overlap import comparison_overlap
    from rulegauge.regression.policy import load_policy
    from rulegauge.regression.slice_select import parse_slice
    from rulegauge.regression.slices import compare_slices
    from rulegauge.store.baseline import load_side
    from rulegauge.store.fits import Wants

    policy = _policy(policy, policy_short)
    fmt = "json" if as_json else fmt
    with bad_input_exits_2():
        render = COMPARISON_FORMATS.get(fmt) if fmt != "tsv" else None
        b = load_side(base, runs_dir)
        # `latest` as the candidate: the newest run of the base's gold set (unless --force)
        c = load_side(candidate, runs_dir, wants=None if force else Wants.of(manifest=b.manifest))
        metrics, confidence, scope = metric or None, 0.95, ""
        slices = [parse_slice(t) for t in slice_ or []]
        selectors: list[str | tuple[str, str]] | None
        if reference is not None:
            if policy is not None or config or candidate_config:
                raise RulegaugeError("--reference pairs every candidate config with one base config; "
                                   "drop --policy, --config and --candidate-config")
            selectors, scope = _against(reference, b, c)
        elif policy is None:
            selectors = _selectors(config or [], candidate_config) or None
        else:
            if metric or len(config or []) > 1:
                raise RulegaugeError("--policy sets the metrics and the config pair; drop --metric "
                                   "and give at most one --config")
            pol = load_policy(policy)
            selectors = [gate_pair(pol, b, c, config[0] if config else None, candidate_config)]
            metrics = list(pol.metric_names())
            seed, n_resamples, confidence = pol.seed, pol.n_resamples, pol.confidence
            adjustment, alpha = pol.adjustment, pol.family_alpha
            slices += pol.slices
        comparison = compare_runs(b, c, configs=selectors, metrics=metrics, force=force,
                                  seed=seed, n_resamples=n_resamples, confidence=confidence,
                                  adjustment=adjustment, alpha=alpha, scope=scope)
        if reference is not None and c.has_table("configs"):
            comparison = _with_stability(comparison, c, seed, n_resamples)
        overlaps, notes = comparison_overlap(b, c, comparison.pairs, overlap_depth, rbo_p)
        sliced = compare_slices(slices, b, c, comparison, metrics, force=force,
                                adjustment=adjustment, alpha=alpha)
    if render is None or fmt == "table":  # tsv, or the rich tables at full width off a terminal
        with format_console(fmt, markup=True) as console:
            console.print(*comparison_renderables(comparison), sep="\n")
            print_extras(console, overlaps, notes, sliced)
    elif fmt == "json":  # one document: the comparison, its overlap and its slices
        typer.echo(json_with_extras(comparison, overlaps, notes, sliced))
    else:
        typer.echo(render(comparison), nl=False)
        typer.echo("\n".join(markdown_extras(overlaps, notes, sliced)), nl=False)


def _against(reference: str, base: Any, candidate: Any) -> tuple[list[str | tuple[str, str]], str]:
    """(every candidate config paired with ``reference`` of the base, the family's scope);
    the reference against itself is left out when both sides are one run."""
    from rulegauge.regression.pairing import against_reference
    from rulegauge.store.baseline import resolve_config, side_configs

    ref = resolve_config(reference, side_configs(base), "base")
    pairs = against_reference(base, candidate, ref)
    if not pairs:
        raise RulegaugeError(f"--reference {reference}: the candidate has no other config to compare")
    return list(pairs), f"every candidate config against {ref}"


def _with_stability(comparison: Any, side: Any, seed: int, n_resamples: int) -> Any:
    """The comparison with, per metric, the best candidate config's stability."""
    from dataclasses import replace

    from rulegauge.metrics.info import metric_info
    from rulegauge.regression.stability import best_config, best_stability

    out = []
    compared = {p.candidate for p in comparison.pairs} | {p.base for p in comparison.pairs}
    metrics = side.table("metrics")
    metrics = metrics[metrics["config_id"].isin(compared)]
    for name in dict.fromkeys(m.metric for m in comparison.metrics if m.answerer is None):
        info = metric_info(name)
        rows = [m for m in comparison.metrics if m.metric == name and m.answerer is None]
        if info is None or not rows or not (metrics["metric"] == name).any():
            continue
        # ties in numeric config order, as tune and the report (never as id text); one run on
        # both sides: the reference itself competes too, as in their ranking
        values = {m.config.candidate: m.candidate_value for m in rows}
        if comparison.base == comparison.candidate:
            values.setdefault(rows[0].config.base, rows[0].base_value)
        best = best_config(values, higher_is_better=bool(info.higher_is_better))
        out.append(best_stability(metrics, name, best,
                                  n_resamples=min(n_resamples, 1000), test_resamples=n_resamples,
                                  seed=seed))
    return replace(comparison, stability=tuple(out))


def _policy(policy: Path | None, policy_short: Path | None) -> Path | None:
    """--policy, or the deprecated -p (warned); both at once is bad input."""
    if policy_short is None:
        return policy
    warn_deprecated("-p for --policy", "--policy (-p means --param in every command)")
    if policy is not None and policy != policy_short:
        print_error("give the policy once: --policy (-p is its deprecated spelling)")
        raise typer.Exit(2)
    return policy_short


def _write_outputs(outputs: dict[str, Path | None], text_for: Callable[[str], str]) -> None:
    for fmt, path in outputs.items():
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_text(path, text_for(fmt))  # a failed write names the file


def gate_cmd(
    baseline: Annotated[str, typer.Option(
        "--baseline", "-b", help="Baseline name or directory (or a run) to gate against.")],
    run: Annotated[str, typer.Option("--run", "-r", help="Candidate run: dir, id or 'latest'.")],
    legacy_json: Annotated[Path | None, typer.Argument(
        hidden=True, metavar="DEPRECATED_JSON_FILE", help="The file of the deprecated `--json FILE`.")] = None,
    policy: Annotated[Path | None, typer.Option(
        "--policy", help="Policy TOML (docs/gate.md; required).")] = None,
    config: Annotated[str | None, typer.Option(
        "--config", "-c", help="Config id or name to gate (overrides the policy).")] = None,
    candidate_config: CandidateConfig = None,
    force: Force = False,
    markdown: Annotated[Path | None, typer.Option(help="Write the Markdown report here.")] = None,
    junit: Annotated[Path | None, typer.Option(help="Write JUnit XML here.")] = None,
    json_file: Annotated[Path | None, typer.Option(
        "--json-file", help="Write the JSON report here.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the JSON report on stdout (--format json; the file: --json-file).")
                       ] = False,
    runs_dir: RunsDir = Path("runs"),
    fmt: Annotated[str, typer.Option("--format", "-f", help="What stdout shows: table, tsv, "
                                     "markdown (the --markdown report) or json (the --json one).")
                   ] = "table",
    policy_short: PolicyShort = None,
) -> None:
    """Gate a run against a baseline: exit 0 pass, 1 regression, 2 bad input.

    `--json` prints the JSON report on stdout, `--json-file FILE` writes it; the old
    `--json FILE` still writes FILE (deprecated, warned on stderr), as `-p` still means
    `--policy` here (deprecated: `-p` is `--param`).

    Example: rulegauge gate --baseline sample --run latest --policy gate.toml --junit gate.xml

    Example: rulegauge gate -b sample -r latest --policy gate.toml --json-file gate.json --json
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.metrics.info import metric_info
    from rulegauge.regression.gate import EXIT_BAD_INPUT, run_gate
    from rulegauge.regression.gate_report import GATE_FORMATS, gate_renderables, render_error
    from rulegauge.regression.policy import load_policy
    from rulegauge.store.baseline import load_side

    policy = _policy(policy, policy_short)
    if legacy_json is not None:
        if not as_json or json_file is not None:
            print_error(f"unexpected argument {str(legacy_json)!r} (the JSON file is --json-file FILE)")
            raise typer.Exit(2)
        warn_deprecated("--json FILE", "--json-file FILE (--json alone prints the JSON on stdout)")
        json_file, as_json = legacy_json, False  # the old meaning: a file, tables on stdout
    if policy is None:
        print_error("missing option --policy (a gate policy TOML, docs/gate.md)")
        raise typer.Exit(2)
    fmt = "json" if as_json else fmt
    outputs = {"markdown": markdown, "junit": junit, "json": json_file}
    try:
        TABLE_FORMATS.get(fmt)
        pol = load_policy(policy)
        # `--run latest`: the newest run that scored the policy's ranking metrics
        ranking = [i.name for n in pol.metric_names() if (i := metric_info(n)) is not None and i.kind == "ranking"]
        result = run_gate(pol, load_side(baseline, runs_dir),
                          load_side(run, runs_dir, metrics=ranking), force=force, config=config,
                          candidate_config=candidate_config)
    except RulegaugeError as exc:
        message = str(exc)
        _write_outputs(outputs, lambda f: render_error(message, f))
        if fmt == "json":  # stdout still carries one JSON document
            typer.echo(render_error(message, "json"), nl=False)
        print_error(message)
        raise typer.Exit(EXIT_BAD_INPUT) from None
    _write_outputs(outputs, lambda f: GATE_FORMATS.get(f)(result))
    if fmt in ("markdown", "json"):
        typer.echo(GATE_FORMATS.get(fmt)(result), nl=False)
    else:
        with format_console(fmt, markup=True) as console:
            console.print(*gate_renderables(result), sep="\n")
    raise typer.Exit(result.exit_code)


@baseline_app.command("save")
def baseline_save_cmd(
    run: Annotated[str, typer.Argument(help="Run to keep: directory, run id or 'latest'.")],
    name: Annotated[str, typer.Argument(help="Baseline name (a folder under --dir).")],
    out_dir: Annotated[Path, typer.Option("--dir", help="Folder that holds baselines.")
                       ] = Path("runs") / "baselines",
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="Keep only these configs (repeatable; default all).")] = None,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing baseline.")] = False,
    runs_dir: RunsDir = Path("runs"),
    policy: Annotated[Path | None, typer.Option(
        "--policy", help="Gate policy TOML: expected.yaml holds its gated config and slices "
                         "(default: every config kept, no slice).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help=JSON_HELP)] = False,
) -> None:
    """Save a compact baseline of RUN: per-question metrics, manifest, relevant pages' ranks,
    the top 10 of every fused list, and expected.yaml (each metric's aggregate, for review).

    Example: rulegauge baseline save latest sample --dir runs/baselines --policy docs/ci/gate-policy.toml
    Example: rulegauge baseline save latest sample --dir runs/baselines --overwrite --json
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.regression.expected import EXPECTED, expected_scope, expected_yaml
    from rulegauge.store.baseline import save_baseline
    from rulegauge.store.rundir import open_run

    with json_errors(enabled=as_json):
        if not name or "/" in name or "\\" in name or name.startswith("."):
            plain = Path(name).name or "our-game"
            where = Path(name).parent if Path(name).name and str(Path(name).parent) != "." else out_dir
            raise RulegaugeError(f"baseline name {name!r}: use a plain folder name and --dir for the folder "
                                 f"that holds baselines: rulegauge baseline save {run} {plain} --dir {where}")
        opened = open_run(run, runs_dir)
        kept, slices = expected_scope(opened, config or [], policy)
        path = save_baseline(opened, out_dir / name, configs=config or None, overwrite=overwrite,
                             files={EXPECTED: expected_yaml(opened, kept, slices)})
    size = sum(p.stat().st_size for p in path.iterdir())
    if as_json:
        echo_json({"baseline": name, "path": str(path), "run_id": opened.run_id, "bytes": size,
                   "files": sorted(p.name for p in path.iterdir())})
        return
    make_console().print(Text.assemble(("saved", "green"), f" baseline {name} -> {path} "
                                                 f"({size / 1024:.1f} KiB)"))
