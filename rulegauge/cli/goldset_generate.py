"""``rulegauge goldset generate`` (questions proposed per page) and ``rulegauge goldset accept``
(reviewed proposals -> a gold set); registered by :mod:`rulegauge.cli.goldset`."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from rulegauge.cli.errors import bad_input_exits_2, plain_console, print_note
from rulegauge.cli.outputs import check_output

if TYPE_CHECKING:
    from rulegauge.judging.generate import Counts

RULE_BASED = ("extractive",)
"""Answerers whose questions come from the rule-based generator (no model)."""


def summary_line(out: Path, c: Counts, dedup_rule: str) -> str:
    return (f"wrote {out}: {c.proposals} proposals from {c.pages_read} pages read "
            f"({c.documents} documents); empty pages: {c.empty_pages}; duplicates removed: "
            f"{c.duplicates_removed} ({dedup_rule}); unparseable replies: "
            f"{c.unparseable_replies}; not in the language asked: {c.wrong_language}; answers not "
            f"in their page: {c.answers_not_in_page}; "
            f"failed calls: {c.failed_calls}; unsupported page x language: {c.unsupported}; "
            f"blank pages: {c.blank_pages}; calls: {c.calls}, cached: {c.cached}")


def _generator(answerer: str, suite: Path | None, param: list[str], seed: int,
               cache: Path, timeout: float) -> tuple[Any, Any, dict[str, Any]]:
    """(generator, answerer to close or None, what the header says of it)."""
    from rulegauge.answering.specs import parse_specs, split_label
    from rulegauge.cli.answer import parse_answerer_params
    from rulegauge.judging.endpoint import model_of, open_chat, secrets_of, seeded_chat, suite_answerer
    from rulegauge.judging.generate import ChatGenerator, RuleGenerator
    from rulegauge.judging.llm import ReplyCache
    from rulegauge.judging.llmgen import LlmGenerator

    params = parse_answerer_params(param)
    if suite is not None:
        spec = suite_answerer(suite, answerer)
    else:
        spec = parse_specs([(answerer, params.get(split_label(answerer)[0], {}))])[0]
    about = {"answerer": spec.label, "provider": spec.name, "seed": seed}
    if spec.name in RULE_BASED:
        return RuleGenerator(), None, about
    chat = open_chat(spec, timeout, "generator preflight failed; nothing was asked")
    return ChatGenerator(LlmGenerator(seeded_chat(chat), model_of(chat), ReplyCache(cache, secrets_of(chat)),
                                      seed)), chat, about


def generate_cmd(
    docs: Annotated[list[Path], typer.Argument(
        help="Documents (.pdf .txt .md .jsonl), folders of them, or gold-set YAML files.")],
    answerer: Annotated[str, typer.Option(
        "--answerer", "-a", help="Answerer NAME (or LABEL=NAME; a label of --suite): "
                                 "extractive = the rule-based generator; a chat answerer "
                                 "(openai, ollama, llama-cpp) = an LLM.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Proposals file to write.")] = Path(
        "proposals.jsonl"),
    lang: Annotated[list[str] | None, typer.Option(
        "--lang", "-l", help="Question language (repeat; default: each page's own).")] = None,
    per_page: Annotated[int, typer.Option("--per-page", "-n", min=1, max=20,
                                          help="At most N questions per page and language.")] = 3,
    page: Annotated[list[str] | None, typer.Option(
        "--page", help="Read only this page, DOC#N (repeat).")] = None,
    max_pages: Annotated[int | None, typer.Option(
        "--max-pages", min=1, help="Read at most N non-blank pages.")] = None,
    similarity: Annotated[float, typer.Option(
        "--similarity", min=0.01, max=1.0, help="Near-duplicate threshold: token Jaccard "
                                               "at or above it.")] = 0.8,
    suite: Annotated[Path | None, typer.Option(
        "--suite", "-s", help="Answerer suite TOML; --answerer names one of its labels.")] = None,
    param: Annotated[list[str] | None, typer.Option(
        "--param", "-p", help="Answerer parameter LABEL.KEY=VALUE (repeatable).")] = None,
    seed: Annotated[int, typer.Option("--seed", help="Sampling seed of the LLM.")] = 0,
    cache: Annotated[Path | None, typer.Option(
        "--cache", help="LLM reply cache (default: OUT.cache.jsonl); reruns ask nothing twice.")
    ] = None,
    allow_outside: Annotated[bool, typer.Option(
        "--allow-outside", help="Gold sets may name documents outside their folder.")] = False,
    timeout: Annotated[float, typer.Option("--preflight-timeout", min=0.1)] = 20.0,
) -> None:
    """Propose questions per page, each with its page, heading path and answering sentence;
    near-duplicates removed. Writes OUT (review it with rulegauge judge OUT) and
    OUT.manifest.json (counts: pages read, empty pages, duplicates, unparseable replies).
    Exit 2 on bad input or a dead endpoint (before any work); 1 when calls failed.

    Example: rulegauge goldset generate goldsets/sample.yaml --answerer extractive -o proposals.jsonl
    Example: rulegauge goldset generate rules.pdf -a openai -p openai.model=qwen -p openai.base_url=http://127.0.0.1:8080 --lang en --lang de
    """
    from fractions import Fraction

    from rulegauge.answering.specs import close
    from rulegauge.cli.ingest import gather_sources
    from rulegauge.cli.progress import rich_progress
    from rulegauge.core import atomic
    from rulegauge.corpus.ingest import spec_from_path
    from rulegauge.corpus.records import DocumentSpec
    from rulegauge.judging.generate import GenerateRequest, generate, load
    from rulegauge.judging.proposals import write_proposals

    with bad_input_exits_2():
        specs = tuple(s if isinstance(s, DocumentSpec) else spec_from_path(s)
                      for s in gather_sources(docs, allow_outside))
        for written in (out, out.with_name(out.name + ".manifest.json"),
                        *(() if cache else (out.with_name(out.name + ".cache.jsonl"),))):
            check_output(written, (*docs, *(s.path for s in specs), suite, cache))
        req = GenerateRequest(specs, tuple(lang or ()), per_page, tuple(page or ()), max_pages,
                              Fraction(str(similarity)).limit_denominator(1000))
        loaded = load(req)
        gen, chat, about = _generator(answerer, suite, param or [], seed,
                                      cache or out.with_name(out.name + ".cache.jsonl"), timeout)
    try:
        total = sum(len(n) for _, n in loaded)
        with rich_progress() as stage:
            bars = cast(AbstractContextManager[Callable[[int], None]],
                        stage(f"proposing with {about['answerer']}", total))
            with bars as bar:
                result = generate(req, gen, loaded, bar)
    finally:
        if chat is not None:
            close(chat)
    head = result.proposals.header
    head["generator"] = {**head["generator"], **about}
    with bad_input_exits_2():
        write_proposals(result.proposals, out)
        side = out.with_name(out.name + ".manifest.json")
        atomic.write_text(side, json.dumps({**result.manifest, "generator": head["generator"],
                                            "proposals": str(out)}, indent=1,
                                           ensure_ascii=False) + "\n")
    plain_console(soft_wrap=True).print(summary_line(out, result.counts, head["dedup"]["rule"])
                                        + f"; manifest {side}")
    if result.counts.failed_calls:
        print_note(f"{result.counts.failed_calls} calls failed (listed in {side}): rerun to "
                   "ask them again (answered pages come from the cache)")
        raise typer.Exit(1)


def accept_cmd(
    proposals: Annotated[Path, typer.Argument(help="Proposals file (rulegauge goldset generate).")],
    decisions: Annotated[Path, typer.Argument(
        help="Decisions file of the review (rulegauge judge PROPOSALS).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Gold set YAML to write.")],
    name: Annotated[str | None, typer.Option(
        "--name", help="Gold set name (default: the output file's stem).")] = None,
    reviewer: Annotated[str | None, typer.Option(
        "--reviewer", help="Whose decisions (needed when several people reviewed).")] = None,
) -> None:
    """Turn the accepted and edited proposals into a gold set (derived: true, with provenance:
    generator, model, prompt hash, document hashes, reviewer).

    Example: rulegauge goldset accept proposals.jsonl proposals.decisions.jsonl -o generated.yaml
    """
    from rulegauge.judging.accept import accept
    from rulegauge.judging.proposals import read_proposals

    with bad_input_exits_2():
        check_output(out, (proposals, decisions))
        named = read_proposals(proposals).header.get("documents") or []  # the gold set names them
        check_output(out, [d.get("path") for d in named if isinstance(d, dict)])
        r = accept(proposals, decisions, out, name=name, reviewer=reviewer)
    counts = ", ".join(f"{n} {k}" for k, n in r.decisions)
    plain_console(soft_wrap=True).print(f"wrote {r.path}: {r.questions} questions "
                                        f"(decisions of {r.reviewer}: {counts})")
