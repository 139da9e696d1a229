"""``harness goldset``: build gold sets from judgements or from document structure."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.errors import bad_input_exits_2

goldset_app = typer.Typer(help="Build gold sets from judgements or document structure.",
                          no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(goldset_app, name="goldset")


@goldset_app.command("from-qrels")
def from_qrels_cmd(
    qrels: Path = typer.Argument(..., help="qrels file: qid 0 doc#page relevance"),
    questions: Path = typer.Argument(..., help="questions: TSV qid<TAB>question[<TAB>lang] or JSONL"),
    documents: Path = typer.Option(..., "--documents", help="Gold set YAML whose documents to reuse."),
    out: Path = typer.Option(..., "--out", "-o", help="Gold set YAML to write."),
    name: str = typer.Option(None, "--name", help="Gold set name (default: output file stem)."),
) -> None:
    """Build a v1 gold set from judgements and validate it.

    Example: harness goldset from-qrels qrels.txt questions.tsv --documents goldsets/sample.yaml -o imported.yaml
    """
    from rich.console import Console

    from harness.goldset import load_goldset
    from harness.qrels import goldset_from_qrels

    with bad_input_exits_2():
        path = goldset_from_qrels(qrels, questions, documents, out, name)
        gs = load_goldset(path)
    Console().print(f"wrote {path}: {len(gs.questions)} questions")
