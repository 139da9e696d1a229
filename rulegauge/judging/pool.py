"""``rulegauge pool RUN... --depth K``: the pages a judge should read next.

Definition (depth-K pooling, as in TREC): for each question, the distinct pages in the
top K pages of each chosen config (from the run's stored ``fused`` rows, chunks
collapsed to pages in fused order: ``page_rank <= K``) and of every arm alone (from
``arm_ranks``: each page ranked by its best chunk, ties by page id), minus the pages
some judgment already covers (the gold set's listed and ``judged:`` pages, and the
pairs of any ``--judgments`` file). Each pooled page records which run, config or arm
found it at which page rank, and its text (the run's chunks put back at their
offsets). Pages come in the order best rank first, then page id. A foreign hit (an id
that matches no chunk of the corpus: its page is 0, :mod:`rulegauge.corpus.foreign`) is
never pooled: the run holds no text of it to judge, and it is non-relevant by definition.

Checks (all reported together, exit 2): every run must be of the same gold set (the
manifest's SHA-256), the gold set file must still hash as the runs recorded, the
configs must exist and be stored in ``fused``; a config stored only to
``--fused-depth`` rows whose stored list ends before K pages is refused, saying how
to store it whole. Without ``-c``, the service config (RRF k=60 over bm25, dense and
boost) is pooled beside the arms. ``include_judged`` keeps the covered pages (the gold
set's own pages among them, never marked as such on the judging page), so that a
judge's agreement with the gold set can be measured on the pages the gold set judged.

Reference: Sparck Jones & van Rijsbergen (1975) pooling; Voorhees & Harman, *TREC*
(2005), ch. 3.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.limits import count_problem
from rulegauge.corpus.foreign import FOREIGN_PAGE
from rulegauge.corpus.records import page_key, page_keys
from rulegauge.goldset.judgments import load_judgments
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import GoldSet
from rulegauge.judging.poolfile import FoundBy, Pool, PoolPage, PoolQuestion
from rulegauge.regression.service import service_config
from rulegauge.store.rundir import Run


@dataclass(frozen=True)
class PoolRequest:
    """What to pool: runs, depth K, configs (None = the service config), judgments to skip."""

    runs: tuple[Run, ...]
    depth: int
    configs: tuple[str, ...] | None = None
    judgments: tuple[Path, ...] = ()
    include_judged: bool = False
    """Keep the pages a judgment covers (to measure a judge against the gold set)."""


def runs_goldset(runs: Sequence[Run]) -> GoldSet:
    """The gold set the runs were scored on (one for all, unchanged since): every problem raised."""
    problems = []
    first = runs[0].manifest.get("goldset", {})
    for r in runs[1:]:
        other = r.manifest.get("goldset", {})
        if other.get("sha256") != first.get("sha256"):
            problems.append(Problem(str(r.path), f"run {r.run_id} is of another gold set "
                                    f"({other.get('path')}) than run {runs[0].run_id} "
                                    f"({first.get('path')}); pool runs of one gold set"))
    path = Path(str(first.get("path", "")))
    if not path.is_file():
        problems.append(Problem(str(runs[0].path), f"the run's gold set {path} is missing"))
    elif file_sha256(path) != first.get("sha256"):
        problems.append(Problem(str(path), f"the gold set changed since run {runs[0].run_id} "
                                "(its SHA-256 differs from the manifest's); rerun first"))
    if problems:
        raise ValidationError(problems, "cannot pool these runs")
    return load_goldset(path, allow_outside=True)


def page_texts(chunks: pd.DataFrame, wanted: set[str]) -> dict[str, str]:
    """Page id -> page text, the page's chunks placed at their character offsets
    (overlaps written once, gaps as one space)."""
    chunks = chunks[[k in wanted for k in page_keys(chunks["doc_id"], chunks["page"])]]
    out: dict[str, str] = {}
    for key, g in chunks.sort_values(["char_start", "chunk_id"]).groupby(
            ["doc_id", "page"], sort=True):
        doc, page = str(key[0]), int(str(key[1]))
        parts: list[str] = []
        end = 0  # the page offset covered so far
        for start, stop, body in zip(g["char_start"], g["char_end"], g["text"], strict=True):
            if start >= end:
                parts += [" "] if parts and start > end else []
                parts.append(str(body))
            elif stop > end:
                parts.append(str(body)[end - int(start):])
            end = max(end, int(stop))
        out[page_key(doc, page)] = "".join(parts)
    return out


def _config_pages(run: Run, configs: Sequence[str], depth: int) -> tuple[pd.DataFrame,
                                                                          list[Problem]]:
    known = set(run.table("configs")["config_id"])
    stored = run.manifest.get("fused_rows") or {}
    problems = [Problem(str(run.path), f"run {run.run_id} has no config {c!r}; configs: "
                        + ", ".join(sorted(known))) for c in configs if c not in known]
    problems += [Problem(str(run.path), f"run {run.run_id} stored no fused rows of {c!r}; "
                         f"store them: rulegauge run --from {run.path} --fused-config {c}")
                 for c in configs if c in known and c not in (stored.get("configs") or [])]
    if problems or not configs:
        return pd.DataFrame(), problems
    fused = run.arrow("fused", ["question_id", "config_id", "doc_id", "page", "page_rank"]
                      ).to_pandas()
    fused = fused[fused["config_id"].isin(list(configs))]
    cut = int(stored.get("depth") or 0)
    if cut > 0:
        sizes = fused.groupby(["question_id", "config_id"]).agg(
            rows=("page_rank", "size"), pages=("page_rank", "max"))
        short = sizes[(sizes["rows"] >= cut) & (sizes["pages"] < depth)]
        for (qid, cid), _ in short.iterrows():
            problems.append(Problem(str(run.path), f"question {qid}: config {cid} is stored to "
                                    f"{cut} fused rows, fewer than the top {depth} pages; "
                                    f"rulegauge run --from {run.path} --fused-config {cid} "
                                    "--fused-depth 0"))
            break  # one example names the fix
    top = fused[fused["page_rank"] <= depth]
    top = top.groupby(["question_id", "config_id", "doc_id", "page"], as_index=False)[
        "page_rank"].min()
    return top.rename(columns={"config_id": "source", "page_rank": "rank"}).assign(
        kind="config"), problems


def _arm_pages(run: Run, depth: int) -> pd.DataFrame:
    ranks = run.arrow("arm_ranks", ["question_id", "arm", "doc_id", "page", "rank"]).to_pandas()
    best = ranks.groupby(["question_id", "arm", "doc_id", "page"], as_index=False)["rank"].min()
    best["key"] = page_keys(best["doc_id"], best["page"])
    best = best.sort_values(["question_id", "arm", "rank", "key"], kind="stable")
    best["rank"] = best.groupby(["question_id", "arm"]).cumcount() + 1
    top = best[best["rank"] <= depth].drop(columns="key")
    out: pd.DataFrame = top.rename(columns={"arm": "source"}).assign(kind="arm")
    return out


def build_pool(request: PoolRequest) -> Pool:
    """The pool of ``request`` (module docstring); raises with every problem found."""
    problem = count_problem("depth", request.depth)
    if problem:  # the bound of every depth (core/limits): each list is read this deep
        raise RulegaugeError(f"--depth: {problem}")
    goldset = runs_goldset(request.runs)
    covered = {(q.question_id, p) for q in goldset.questions for p in q.judged_pages()}
    covered |= {j.pair for j in load_judgments(request.judgments, goldset)}
    found, problems = [], []
    for run in request.runs:
        configs = request.configs
        if configs is None:
            service = service_config(run.table("configs"))
            configs = (service,) if service else ()
            if not service:
                problems.append(Problem(str(run.path), f"run {run.run_id} has no service config "
                                        "(rrf k=60 over bm25, dense, boost); choose with -c"))
        cfg, found_problems = _config_pages(run, configs, request.depth)
        problems += found_problems
        for part in (cfg, _arm_pages(run, request.depth)):
            if not part.empty:
                found.append(part.assign(run_id=run.run_id))
    if problems:
        raise ValidationError(problems, "cannot pool these runs")
    hits = pd.concat(found, ignore_index=True)
    hits = hits[hits["page"] != FOREIGN_PAGE]  # a foreign hit: no text in the run to judge (corpus/foreign)
    hits["page_id"] = page_keys(hits["doc_id"], hits["page"])
    if not request.include_judged:
        hits = hits[[(q, p) not in covered for q, p in zip(hits["question_id"],
                                                          hits["page_id"], strict=True)]]
    texts = page_texts(request.runs[0].table("chunks"), set(hits["page_id"]))
    gold_ids = {p for q in goldset.questions for p in q.relevant_pages}
    gold_texts = page_texts(request.runs[0].table("chunks"), gold_ids)
    by_q = {qid: g for qid, g in hits.groupby("question_id", sort=False)}
    questions, pages = [], []
    for q in goldset.questions:
        questions.append(PoolQuestion(q.question_id, q.question, q.language,
                                      tuple((p, g, gold_texts.get(p, ""))
                                            for p, g in sorted(q.page_grades.items()))))
        g = by_q.get(q.question_id)
        if g is None:
            continue
        for page_id, rows in g.groupby("page_id", sort=False):
            found_by = tuple(sorted(FoundBy(str(r), str(s), str(k), int(n)) for r, s, k, n in zip(
                rows["run_id"], rows["source"], rows["kind"], rows["rank"], strict=True)))
            pages.append(PoolPage(q.question_id, str(page_id), found_by,
                                  texts.get(str(page_id), "")))
    pages.sort(key=lambda p: (p.question_id, min(f.rank for f in p.found_by), p.page))
    order = {q.question_id: i for i, q in enumerate(goldset.questions)}
    pages.sort(key=lambda p: order[p.question_id])  # stable: gold order, then best rank, page
    configs_used = sorted({f.source for p in pages for f in p.found_by if f.kind == "config"})
    return Pool(goldset.name, goldset.path, goldset.sha256, tuple(r.run_id for r in request.runs),
                request.depth, tuple(request.configs or configs_used), tuple(questions),
                tuple(pages))
