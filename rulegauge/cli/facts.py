"""``rulegauge facts``: how well the fact verdicts agree with answers labelled by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from rulegauge.cli.errors import bad_input_exits_2, plain_console
from rulegauge.core.errors import ConfigError

if TYPE_CHECKING:
    from rulegauge.answering.fact_labels import Agreement

facts_app = typer.Typer(help="Reference facts: agreement of fact_recall and the judge with labels.",
                        no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(facts_app, name="facts")


def _as_dict(a: Agreement) -> dict[str, Any]:
    return {"items": a.items, "no_verdict": a.no_verdict, "accuracy": a.accuracy,
            "kappa": a.kappa, "precision": a.precision, "recall": a.recall,
            "by_kind": {k: {"agree": v[0], "items": v[1]} for k, v in a.by_kind.items()},
            "disagreements": [{"line": lab.line, "question_id": lab.question_id,
                               "fact": lab.fact, "kind": lab.kind, "label": lab.stated,
                               "verdict": v, "answer": lab.answer}
                              for lab, v in a.disagreements]}


def _judge(suite_path: Path, label: str | None) -> Any:
    from rulegauge.answering.answerers import make_answerer
    from rulegauge.answering.suite import load_suite

    suite = load_suite(suite_path)
    label = label or suite.judge
    spec = next((a for a in suite.answerers if a.label == label), None)
    if spec is None:
        raise ConfigError(f"{suite_path}: no answerer labelled {label!r} to judge with "
                          f"(labels: {', '.join(a.label for a in suite.answerers)})")
    return make_answerer(spec.provider, **dict(spec.params))


@facts_app.command("agreement")
def agreement_cmd(
    labels: Annotated[Path, typer.Argument(help="Labels file (YAML: items q, fact, stated, kind, answer).")],
    goldset: Annotated[Path | None, typer.Option(
        "--goldset", "-g", help="Gold set of the labels (default: the file's `goldset:`, beside it).")] = None,
    suite: Annotated[Path | None, typer.Option(
        "--suite", help="Answerer suite whose judge also gives verdicts (TOML, docs/answerers.md).")] = None,
    judge: Annotated[str | None, typer.Option("--judge", help="Label of the judging answerer in --suite.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
) -> None:
    """Agreement of fact_recall's matcher (and optionally the fact judge) with hand labels.

    Example: rulegauge facts agreement goldsets/sample-fact-labels.yaml
    """
    # deferred: yaml, sklearn and the gold-set parser load on use
    from rulegauge.answering.fact_labels import agreement, judge_verdict, labels_goldset, load_labels, matcher_verdict
    from rulegauge.goldset.parse import load_goldset

    with bad_input_exits_2():
        gs = load_goldset(goldset or labels_goldset(labels), check_pages=False)
        items = load_labels(labels, gs)
        results = {"matcher": agreement(items, matcher_verdict(gs))}
        if suite is not None:
            results["judge"] = agreement(items, judge_verdict(_judge(suite, judge), gs))
    out = {name: _as_dict(a) for name, a in results.items()}
    con = plain_console(soft_wrap=True)
    if as_json:
        con.print(json.dumps(out, indent=2, ensure_ascii=False))
        return
    for name, a in results.items():
        con.print(f"{name}: {a.items} labelled pairs, accuracy {a.accuracy:.3f}, Cohen's kappa "
                  f"{a.kappa:.3f}, precision {a.precision:.3f}, recall {a.recall:.3f}"
                  + (f", no verdict {a.no_verdict}" if a.no_verdict else ""))
        for kind, (agree, n) in a.by_kind.items():
            con.print(f"  {kind}\t{agree}/{n}")
        for lab, v in a.disagreements:
            con.print(f"  disagrees: {labels}:{lab.line} {lab.question_id} fact {lab.fact} "
                      f"label {lab.stated} verdict {v}: {lab.answer}")
