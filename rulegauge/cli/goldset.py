"""``rulegauge goldset``: build gold sets from judgements or from document structure, and
(:mod:`rulegauge.cli.goldset_generate`) from generated questions people reviewed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from rulegauge.cli.errors import bad_input_exits_2
from rulegauge.cli.outputs import check_output
from rulegauge.core.errors import Problem, ValidationError

if TYPE_CHECKING:
    from rulegauge.goldset.collection_import import Imported
    from rulegauge.goldset.derive import Derivation

goldset_app = typer.Typer(help="Build gold sets from judgements or document structure.",
                          no_args_is_help=True)

Out = Annotated[Path, typer.Option("--out", "-o", help="Gold set YAML to write.")]
SHARD_HELP = "Documents per corpus file (1-100,000; a file is also cut at 64 MiB)."
Seed = Annotated[int, typer.Option("--seed", help="Seed of the sample (same seed, same file).")]


def register(app: typer.Typer) -> None:
    from rulegauge.cli.goldset_generate import accept_cmd, generate_cmd

    goldset_app.command("generate")(generate_cmd)
    goldset_app.command("accept")(accept_cmd)
    app.add_typer(goldset_app, name="goldset")


@goldset_app.command("from-qrels")
def from_qrels_cmd(
    qrels: Annotated[Path, typer.Argument(help="qrels file: qid 0 doc#page relevance")],
    questions: Annotated[Path, typer.Argument(
        help="questions: TSV qid<TAB>question[<TAB>lang] or JSONL")],
    documents: Annotated[Path, typer.Option(
        "--documents", help="Gold set YAML whose documents to reuse.")],
    out: Out,
    name: Annotated[str | None, typer.Option(
        "--name", help="Gold set name (default: output file stem).")] = None,
) -> None:
    """Build a v1 gold set from judgements and validate it.

    Example: rulegauge goldset from-qrels qrels.txt qs.tsv --documents goldsets/sample.yaml -o g.yaml
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.goldset.parse import load_goldset
    from rulegauge.interop.qrels import goldset_from_qrels

    with bad_input_exits_2():
        check_output(out, (qrels, questions, documents))
        path = goldset_from_qrels(qrels, questions, documents, out, name)
        gs = load_goldset(path, allow_outside=True)
    Console(markup=False, highlight=False).print(f"wrote {path}: {len(gs.questions)} questions")


@goldset_app.command("import-beir")
def import_beir_cmd(
    source: Annotated[Path, typer.Argument(
        help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write (must not exist): "
                                      "goldset.yaml and the corpus files.")],
    split: Annotated[str, typer.Option("--split", help="qrels split: qrels/<split>.tsv.")] = "test",
    language: Annotated[str, typer.Option("--language", help="Language of documents and queries.")] = "en",
    shard_size: Annotated[int, typer.Option("--shard-size", help=SHARD_HELP)] = 50_000,
    name: Annotated[str | None, typer.Option(
        "--name", help="Gold set name (default: the folder's name).")] = None,
) -> None:
    """Import a BEIR-format collection: a gold set with graded requirements (one per
    judged document, its score as grade) and the corpus as a few JSONL files (one page per
    document), streamed with progress on stderr.

    Example: rulegauge goldset import-beir tests/fixtures/beir/tidepool --split test -o tidepool
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.cli.progress import rich_progress
    from rulegauge.goldset.beir import BeirImport, import_beir

    with bad_input_exits_2(), rich_progress() as progress:
        check_output(out, (source,))
        r = import_beir(BeirImport(source, out, split, shard_size, language, name), progress)
    _wrote(r)


def _wrote(r: Imported) -> None:
    Console(markup=False, highlight=False, soft_wrap=True).print(
        f"wrote {r.goldset}: {r.questions} questions ({r.unanswerable} without a relevant document), "
        f"{r.relevant} relevant and {r.judged_zero} judged-0 documents; {r.documents} documents in "
        f"{len(r.shards)} corpus file(s)")


@goldset_app.command("import-trec")
def import_trec_cmd(
    topics: Annotated[Path, typer.Argument(help="TREC topics (<top> ... </top>) or a qid<TAB>query TSV.")],
    qrels: Annotated[Path, typer.Argument(help="TREC qrels: qid iteration docid relevance.")],
    corpus: Annotated[Path, typer.Option("--corpus", help="Corpus: JSONL (_id, title, text) or TSV "
                                         "(id<TAB>text or id<TAB>title<TAB>text).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder to write (must not exist): "
                                      "goldset.yaml and the corpus files.")],
    language: Annotated[str, typer.Option("--language", help="Language of documents and queries.")] = "en",
    shard_size: Annotated[int, typer.Option("--shard-size", help=SHARD_HELP)] = 50_000,
    name: Annotated[str | None, typer.Option(
        "--name", help="Gold set name (default: the corpus's folder name).")] = None,
) -> None:
    """Import TREC topics and graded qrels with a JSONL or TSV corpus: a gold set with graded
    requirements and the corpus as a few JSONL files (one page per document), streamed with
    progress on stderr, as import-beir.

    Example: rulegauge goldset import-trec tests/fixtures/trec/tidepool/topics.txt tests/fixtures/trec/tidepool/qrels.txt --corpus tests/fixtures/trec/tidepool/corpus.tsv -o tidepool-trec
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.cli.progress import rich_progress
    from rulegauge.goldset.trec import TrecImport, import_trec

    with bad_input_exits_2(), rich_progress() as progress:
        check_output(out, (topics, qrels, corpus))
        r = import_trec(TrecImport(topics, qrels, corpus, out, shard_size, language, name), progress)
    _wrote(r)


@goldset_app.command("merge")
def merge_cmd(
    gold: Annotated[Path, typer.Argument(help="Gold set YAML to start from.")],
    judgments: Annotated[list[Path], typer.Argument(help="Judgments files (JSON lines, or graded "
                                                     "TREC qrels: told apart by content).")],
    out: Out,
    allow_outside: Annotated[bool, typer.Option(
        "--allow-outside", help="Accept GOLD's documents outside its folder.")] = False,
    judge: Annotated[str | None, typer.Option(
        "--judge", help="Judge id of the qrels files' lines (default: each file's stem).")] = None,
    kind: Annotated[str, typer.Option("--kind", help="Judge kind of the qrels files' lines: "
                                      "human or llm.")] = "human",
) -> None:
    """Write a new gold-set version with the judgments as judged: lists (grade 0 included),
    with provenance (source and judgments hashes, judge ids).

    Example: rulegauge goldset merge goldsets/sample.yaml pool.judgments.jsonl -o goldsets/sample-v2.yaml

    Example: rulegauge goldset merge goldsets/sample.yaml ann.qrels --judge ann -o goldsets/sample-v2.yaml
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.cli.errors import print_note
    from rulegauge.goldset.merge import merge_judgments

    with bad_input_exits_2():
        check_output(out, (gold, *judgments))
        r = merge_judgments(gold, list(judgments), out, allow_outside=allow_outside, qrels_judge=judge,
                            qrels_kind=kind)
    grades = ", ".join(f"{n} x grade {g}" for g, n in r.grades) or "nothing new"
    judges = ", ".join(f"{i} ({k}) {n}" for i, k, n in r.judges) or "-"
    Console(markup=False, highlight=False, soft_wrap=True).print(
        f"wrote {r.path}: {r.added} judgments added ({grades}; judges: {judges}); "
        f"{r.already_present} already in {gold.name}")
    for line in r.listed_judged_zero:
        print_note(f"listed page judged not relevant (check the gold set): {line}")


@goldset_app.command("migrate")
def migrate_cmd(
    gold: Annotated[Path, typer.Argument(help="Gold set YAML of the old edition.")],
    document: Annotated[list[str], typer.Option(
        "--document", "-d", help="ID=NEW_FILE: the new edition of document ID (repeat).")],
    out: Out,
    min_confidence: Annotated[float, typer.Option(
        "--min-confidence", min=0.0, max=1.0, help="Carry a label only at this containment or more.")] = 0.8,
    review: Annotated[Path | None, typer.Option(
        "--review", help="Judgments of the review file (rulegauge judge OUT.review.jsonl): "
                         "carries the flagged labels reviewers placed.")] = None,
    allow_outside: Annotated[bool, typer.Option(
        "--allow-outside", help="Accept GOLD's documents outside its folder.")] = False,
) -> None:
    """Carry a gold set to a new edition of its documents: pages aligned by content (word
    shingles; an edition sharing none, e.g. a translation, by multilingual sentence
    embeddings), each label mapped to the new page holding it with a confidence, with
    provenance. Unmatched or ambiguous labels are listed, never guessed: their questions
    are held out and their candidates written to OUT.review.jsonl (rulegauge judge serves
    it). Exit 0 only when every question was carried, 1 when a question is held out or a
    label flagged (written without them), 2 bad input (a new edition with no text; review
    rows that review nothing of this migration).

    Example: rulegauge goldset migrate goldsets/sample.yaml --document bw-rules=goldsets/sample/brackwater-rulebook-en2.txt -o sample-en2.yaml
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from fractions import Fraction

    from rulegauge.cli.errors import plain_console, print_note
    from rulegauge.goldset.migrate import migrate, parse_documents
    from rulegauge.judging.migration_review import review_pool
    from rulegauge.judging.poolfile import write_pool

    side = out.with_name(out.stem + ".review.jsonl")
    with bad_input_exits_2():
        docs = parse_documents(document)
        check_output(out, (gold, *docs.values(), review))
        check_output(side, (gold, *docs.values(), review, out))
        m = migrate(gold, docs, out, allow_outside=allow_outside, review=review,
                    min_confidence=Fraction(str(min_confidence)).limit_denominator(1000))
        if m.flagged:
            write_pool(review_pool(m), side)
        else:
            side.unlink(missing_ok=True)  # a review file of an earlier migration is stale
    c = plain_console(soft_wrap=True)
    moved = [x for x in m.labels if x.how != "document unchanged"]
    kinds = ", ".join(f"{d.doc_id}: {d.alignment.old_pages} -> {d.alignment.new_pages} pages, "
                      f"inserted {list(d.alignment.inserted) or 'none'}" for d in m.documents)
    c.print(f"wrote {m.path}: {m.carried} of {len(m.source.questions)} questions carried ({kinds}); "
            f"labels on the new edition: {len(moved) - len(m.flagged)} carried"
            + (f" ({m.reviewed} by review)" if m.reviewed else "")
            + f", {len(m.flagged)} flagged")
    for d in (d for d in m.documents if d.note):  # no shared text: why, and how the pages were aligned
        print_note(d.note)
    for x in m.flagged:
        c.print(f"flagged {x.question_id} {x.old}: {x.flag}"
                + (f" (candidates: {', '.join(x.candidates)})" if x.candidates else ""))
    flagged_questions = {x.question_id for x in m.flagged}
    for qid, why in m.held_out:  # held out with no label flagged (pages merged)
        if qid not in flagged_questions:
            c.print(f"held out {qid}: {why}")
    if m.flagged:
        print_note(f"{len(m.held_out)} question(s) held out of {m.path.name}; review their candidates "
                   f"with: rulegauge judge {side}, then rerun with --review "
                   f"{side.with_name(side.stem + '.judgments.jsonl')}")
    elif m.held_out:
        print_note(f"{len(m.held_out)} question(s) held out of {m.path.name} (listed above)")
    if m.held_out or m.flagged:  # CI sees every question the new version lacks
        raise typer.Exit(1)


def _by_language(values: list[str], option: str) -> dict[str, Path]:
    """Parse repeated ``LANG=PATH`` options; malformed ones raise (exit 2)."""
    out: dict[str, Path] = {}
    problems = []
    for v in values:
        lang, sep, path = (x.strip() for x in v.partition("="))
        if not sep or not lang or not path:
            problems.append(Problem(option, f"expected LANG=PATH, got {v!r}"))
        elif lang in out:
            problems.append(Problem(option, f"language {lang!r} given twice"))
        else:
            out[lang] = Path(path)
    if problems:
        raise ValidationError(problems, "bad options")
    return out


def _report(result: Derivation, kind: str) -> None:
    """Validate the written gold set (rulegauge.goldset.parse.load_goldset) and say what it holds."""
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.goldset.parse import load_goldset

    gs = load_goldset(result.path, allow_outside=True)
    skipped = ", ".join(f"{n} {why}" for why, n in result.skipped) or "none"
    Console(markup=False).print(f"wrote {result.path}: {len(gs.questions)} derived questions from "
                    f"{result.candidates} {kind} (skipped: {skipped})", highlight=False)


@goldset_app.command("from-outline")
def from_outline_cmd(
    pdf: Annotated[Path, typer.Argument(help="PDF whose bookmarks (outline) give the questions.")],
    out: Out,
    doc_id: Annotated[str | None, typer.Option(
        "--doc-id", help="Document id (default: the PDF's stem).")] = None,
    game: Annotated[str | None, typer.Option(
        "--game", help="Game name (default: the PDF's stem).")] = None,
    edition: Annotated[str, typer.Option("--edition", help="Edition tag of the document.")] = "1",
    language: Annotated[str, typer.Option(
        "--language", help="Language of the document and of the questions.")] = "en",
    max_questions: Annotated[int | None, typer.Option(
        "--max", min=1, help="Sample at most N usable bookmarks.")] = None,
    seed: Seed = 0,
    min_depth: Annotated[int, typer.Option(
        "--min-depth", min=1, help="Shallowest bookmark level (1 = top).")] = 1,
    max_depth: Annotated[int | None, typer.Option(
        "--max-depth", min=1, help="Deepest bookmark level.")] = None,
    continuation: Annotated[bool, typer.Option(
        "--continuation", help="Also accept the next page when the section goes on there.")
    ] = False,
) -> None:
    """Derive "where are the rules for X?" questions from a PDF's bookmarks (derived: true).

    Example: rulegauge goldset from-outline srd.pdf -o srd-outline.yaml --doc-id srd --max 40
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.goldset.derive import from_outline

    with bad_input_exits_2():
        check_output(out, (pdf,))
        result = from_outline(pdf, out, doc_id=doc_id, game=game, edition=edition,
                              language=language, max_questions=max_questions, seed=seed,
                              min_depth=min_depth, max_depth=max_depth, continuation=continuation)
        _report(result, "usable bookmarks")


@goldset_app.command("parallel")
def parallel_cmd(
    doc: Annotated[list[str], typer.Option(
        "--doc", help="LANG=PATH of a parallel document (repeat).")],
    ask: Annotated[list[str], typer.Option("--ask", help="Language to ask in (repeat).")],
    out: Out,
    answer: Annotated[str, typer.Option(
        "--answer", help="Language of the document whose page must be found.")] = "en",
    pages_tsv: Annotated[list[str] | None, typer.Option(
        "--pages-tsv", help="LANG=PATH of a page/file/title table "
                            "(default: <document stem>.pages.tsv beside it).")] = None,
    mode: Annotated[list[str] | None, typer.Option(
        "--mode", help="Question mode (repeat): title (default) or first-sentence.")] = None,
    max_items: Annotated[int | None, typer.Option(
        "--max", min=1, help="Sample at most N items (pages), each asked in every language.")
    ] = None,
    seed: Seed = 0,
    doc_id: Annotated[str | None, typer.Option(
        "--doc-id", help="Id of the answer document (default: its stem).")] = None,
    game: Annotated[str | None, typer.Option(
        "--game", help="Game name (default: the answer document's stem).")] = None,
) -> None:
    """Derive questions asked in one language that must find a page in another (derived: true).

    Example: rulegauge goldset parallel --doc en=en.txt --doc ru=ru.txt --ask ru -o p.yaml --max 30
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.goldset.parallel import parallel

    with bad_input_exits_2():
        tables = _by_language(pages_tsv or [], "--pages-tsv")
        docs = _by_language(doc, "--doc")
        check_output(out, (*docs.values(), *tables.values(),
                           *(p.with_name(p.stem + ".pages.tsv") for p in docs.values())))
        result = parallel(docs, ask, out, answer=answer,
                          pages_tsv=tables,
                          modes=tuple(mode or ("title",)), max_items=max_items, seed=seed,
                          doc_id=doc_id, game=game)
        _report(result, "candidate questions")
