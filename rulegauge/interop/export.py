"""Export a rulegauge run for ranx, ir-measures and trec_eval: TREC runs and qrels.

File format and tie rule: :mod:`rulegauge.interop.trec`. Page level: a page takes the
rank of its best-ranked chunk (first occurrence in the list) and that chunk's score;
ranks are renumbered 1..n over pages. A foreign hit (an id an arm read from outside that
matches no chunk: :mod:`rulegauge.corpus.foreign`) is written as its reply id at both levels,
in its place: it is in no qrels, so every tool scores it non-relevant, as rulegauge does.

Which questions (:data:`QUESTION_SETS`). ``answerable`` (the default) writes, in
every run file and in the qrels, exactly the questions rulegauge averages its
ranking metrics over (answerable ones), so ranx's ``evaluate``/``compare``/``fuse``
and ir-measures read the files as they are (ranx refuses runs and qrels whose query
ids differ unless ``make_comparable=True``; pytrec_eval silently drops a query with
no line, raising the mean). A question whose list is empty gets one line with the
docid :data:`NO_RESULT` at rank 1 and score 0: it is in no qrels, so every metric
of that question is 0, as in rulegauge. ``retrieved`` writes every question of
the gold set that has a ranked list, unanswerable ones included, and no
placeholder: the form to re-import as an external arm.

Requirements (any-of). ``qrels.txt`` lists every page of a question's requirements
as relevant, which is what ``hit@k`` (``Success@k``), ``P@k``, ``MRR@k`` (``RR``) and
``nDCG@k`` use. Rulegauge's ``recall@k`` is over *requirements*: a requirement is
met by any one of its alternative pages. ``qrels-requirements.txt`` holds one
query per requirement, ``<qid>::<n>`` (n from 1) with the requirement's alternatives
as relevant pages; over a run expanded the same way (:func:`requirement_rows`),
``Success@k`` of ``<qid>::<n>`` is whether requirement n is met and its mean over a
question's requirements is rulegauge's ``recall@k``. ``R@k`` over ``qrels.txt``
equals ``recall@k`` only where every requirement is a single page; with an any-of
group ``[a, b, c]`` found once, R@k counts 1/3 where recall@k counts 1.

Document ids. A page is written as ``doc#page``; a page of an imported collection
(``goldset import-beir``/``import-trec``) as the collection's own id, in runs and qrels
alike (:mod:`rulegauge.interop.docids`), so the export scores on the collection's qrels.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rulegauge.core.config_order import sort_configs
from rulegauge.core.errors import ConfigError, Problem, ValidationError
from rulegauge.core.names import name_problem
from rulegauge.core.registry import Registry
from rulegauge.core.tablerows import rows as table_rows
from rulegauge.corpus.foreign import foreign_flags
from rulegauge.corpus.records import page_keys
from rulegauge.interop.docids import collection_docids, renamed
from rulegauge.interop.trec import LEVELS, SCORE_MODES, write_qrels, write_run
from rulegauge.store.baseline import Side

# docid of the placeholder line of a question with an empty list (never relevant)
NO_RESULT = "rulegauge:no-result"
# query id of requirement n of question q in the requirements qrels
REQUIREMENT_SEP = "::"
QRELS_FILE, REQUIREMENTS_QRELS_FILE, ARMS_DIR = "qrels.txt", "qrels-requirements.txt", "arms"


def ranked_rows(df: pd.DataFrame, rank_col: str, score_col: str, level: str, scores: str,
                docids: Mapping[str, str] | None = None) -> pd.DataFrame:
    """(qid, docid, rank, score) from arm_ranks or fused rows of one arm or config; at page
    level, a collection's pages under its own ids (``docids``: :mod:`rulegauge.interop.docids`)."""
    if level not in LEVELS or scores not in SCORE_MODES:
        raise ValueError(f"level must be one of {LEVELS} and scores one of {SCORE_MODES}")
    d = df.sort_values(["question_id", rank_col], kind="stable")
    if level == "page":  # a foreign hit is a page of its own, written as its reply id (corpus/foreign)
        pages = np.asarray(page_keys(d["doc_id"], d["page"]), dtype=object)
        docid = np.where(foreign_flags(d), d["chunk_id"].astype(str).to_numpy(dtype=object), pages)
        d = d.assign(docid=docid).drop_duplicates(["question_id", "docid"])
        d = d.assign(docid=renamed(d["docid"], docids or {}))
    else:
        d = d.assign(docid=d["chunk_id"])
    rank = d.groupby("question_id").cumcount() + 1
    score = 1.0 / rank if scores == "rank" else d[score_col]
    return pd.DataFrame({"qid": d["question_id"].to_numpy(), "docid": d["docid"].to_numpy(),
                         "rank": rank.to_numpy(), "score": score.to_numpy()})


def _requirements(questions: pd.DataFrame) -> dict[str, list[list[str]]]:
    return {str(q.question_id): json.loads(q.requirements) for q in table_rows(questions, index=True)}


def qrels_rows(questions: pd.DataFrame, docids: Mapping[str, str] | None = None) -> list[tuple[str, str, int]]:
    """Page-level qrels from a run's ``questions`` table: every listed page is relevant (1);
    a collection's pages under its own ids (``docids``)."""
    ids = docids or {}
    rows = {(qid, ids.get(page, page), 1) for qid, reqs in _requirements(questions).items()
            for req in reqs for page in req}
    return sorted(rows)


def requirement_qid(qid: str, n: int) -> str:
    """Query id of requirement ``n`` (from 1) of question ``qid``."""
    return f"{qid}{REQUIREMENT_SEP}{n}"


def split_requirement_qid(qid: str) -> tuple[str, int | None]:
    """``("q", 2)`` for ``"q::2"``; ``(qid, None)`` for a plain question id."""
    base, sep, n = qid.rpartition(REQUIREMENT_SEP)
    return (base, int(n)) if sep and base and n.isdigit() and int(n) >= 1 else (qid, None)


def requirement_qrels_rows(questions: pd.DataFrame,
                           docids: Mapping[str, str] | None = None) -> list[tuple[str, str, int]]:
    """One query per requirement (``<qid>::<n>``), its alternative pages relevant (1)."""
    ids = docids or {}
    rows = {(requirement_qid(qid, n), ids.get(page, page), 1) for qid, reqs in _requirements(questions).items()
            for n, req in enumerate(reqs, start=1) for page in req}
    return sorted(rows)


def requirement_rows(rows: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """A run's (qid, docid, rank, score) rows repeated under each requirement's query id,
    to score against :func:`requirement_qrels_rows` (``Success@k`` = requirement met)."""
    reqs = _requirements(questions)
    keys = pd.DataFrame([(qid, requirement_qid(qid, n)) for qid, rs in reqs.items()
                         for n in range(1, len(rs) + 1)], columns=["qid", "req_qid"])
    out = rows.merge(keys, on="qid", how="inner")
    return out.assign(qid=out["req_qid"]).drop(columns=["req_qid"])[list(rows.columns)]


def _answerable(rows: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    qids = [str(q) for q, a in zip(questions["question_id"], questions["answerable"], strict=True)
            if a]
    rows = rows[rows["qid"].isin(set(qids))]
    empty = sorted(set(qids) - set(rows["qid"]))
    pad = pd.DataFrame({"qid": empty, "docid": [NO_RESULT] * len(empty),
                        "rank": [1] * len(empty), "score": [0.0] * len(empty)})
    return pd.concat([rows, pad], ignore_index=True) if empty else rows.reset_index(drop=True)


# which questions a run file holds (see the module docstring)
QUESTION_SETS: Registry[Callable[[pd.DataFrame, pd.DataFrame], pd.DataFrame]] = \
    Registry("export question set")
QUESTION_SETS.add("answerable", _answerable)
QUESTION_SETS.add("retrieved", lambda rows, questions: rows.reset_index(drop=True))


@dataclass(frozen=True)
class ExportResult:
    """What an export wrote: ``files`` (every one checked to exist), the questions in
    the runs, and the questions padded with the :data:`NO_RESULT` line, per file name."""

    out_dir: Path
    files: tuple[Path, ...]
    questions: int
    padded: tuple[tuple[str, int], ...]


def _safe_name(name: str, what: str, problems: list[Problem]) -> None:
    problem = name_problem("arm name" if what.startswith("arm") else "config id", name)
    if problem:  # the one check of names that become paths (rulegauge.core.names)
        problems.append(Problem(what, f"{name!r} cannot be a file name: {problem}"))


def _check_foreign_ids(arm_ranks: pd.DataFrame, fused: pd.DataFrame, questions: pd.DataFrame,
                       problems: list[Problem]) -> None:
    """A foreign hit's reply id is written as its docid: one with whitespace cannot be, and one
    spelling a page the qrels list would read as that (relevant) page."""
    ids = {str(i) for df in (arm_ranks, fused) for i in df["chunk_id"][foreign_flags(df)].unique()}
    listed = {p for reqs in _requirements(questions).values() for req in reqs for p in req}
    problems += [Problem(f"foreign id {i!r}", "a TREC docid cannot contain whitespace")
                 for i in sorted(ids) if any(c.isspace() for c in i)]
    problems += [Problem(f"foreign id {i!r}", "spells a page the qrels list as relevant; the exported "
                         "run would score it relevant where rulegauge does not") for i in sorted(ids & listed)]


def _check_ids(questions: pd.DataFrame, problems: list[Problem]) -> None:
    for qid in questions["question_id"].astype(str):
        if not qid or any(c.isspace() for c in qid):
            problems.append(Problem(f"question {qid!r}", "a TREC query id cannot contain "
                                                         "whitespace"))


def export_run(run: Side, out_dir: Path, level: str = "page", scores: str = "rank",
               configs: list[str] | None = None, arms: list[str] | None = None,
               questions: str = "answerable") -> ExportResult:
    """Write ``<config_id>.trec`` per fused config (the ids of the metrics table, so
    ``arm-bm25.trec`` is the single-arm config), ``arms/<name>.trec`` per arm (the
    arm's own ranked list, its scores), ``qrels.txt`` and ``qrels-requirements.txt``
    from a :class:`rulegauge.store.rundir.Run`.

    Every target name is decided before anything is written; two outputs with one
    name, an unknown config or arm, or an id that cannot be a file name or TREC
    query id raise :class:`ValidationError` (nothing written).
    """
    if level not in LEVELS or scores not in SCORE_MODES:
        raise ConfigError(f"level must be one of {', '.join(LEVELS)}; scores one of "
                          f"{', '.join(SCORE_MODES)}")
    select = QUESTION_SETS.get(questions)
    out_dir = Path(out_dir)
    qs = run.table("questions")
    ar, fused = run.table("arm_ranks"), run.table("fused")
    have_arms, have_cfgs = sorted(ar["arm"].unique()), sort_configs(map(str, fused["config_id"].unique()))
    arm_list = sorted(have_arms) if arms is None else list(dict.fromkeys(arms))
    cfg_list = have_cfgs if configs is None else list(dict.fromkeys(configs))
    problems: list[Problem] = []
    _check_ids(qs, problems)
    docids = collection_docids(run)
    _check_foreign_ids(ar, fused, qs, problems)
    scored = set(run.table("configs")["config_id"].astype(str)) if run.has_table("configs") else set()
    problems += [Problem(f"--config {c}", (
        f"scored, but its fused rows were not stored (the run stores them for {len(have_cfgs)} of "
        f"{len(scored)} configs); store them: rulegauge run --from {run.run_id} -c GRID --fused-config {c}")
        if c in scored else "no such config in the run; it has " + ", ".join(have_cfgs))
        for c in cfg_list if c not in have_cfgs]
    problems += [Problem(f"arm {a}", "no such arm in the run; it has " + ", ".join(have_arms))
                 for a in arm_list if a not in have_arms]
    jobs: list[tuple[Path, pd.DataFrame, str, str]] = []
    for arm in arm_list:
        _safe_name(arm, f"arm {arm}", problems)
        jobs.append((out_dir / ARMS_DIR / f"{arm}.trec", ar[ar["arm"] == arm], "arm", arm))
    for cid in cfg_list:
        _safe_name(cid, f"config {cid}", problems)
        jobs.append((out_dir / f"{cid}.trec", fused[fused["config_id"] == cid], "config", cid))
    targets = [j[0] for j in jobs] + [out_dir / QRELS_FILE, out_dir / REQUIREMENTS_QRELS_FILE]
    seen: dict[str, list[str]] = {}
    for t in targets:  # case-folded: on a case-insensitive file system "A" overwrites "a"
        seen.setdefault(str(t).casefold(), []).append(str(t.relative_to(out_dir)))
    problems += [Problem(names[0], f"{len(names)} outputs would share one file name: "
                         + ", ".join(names)) for names in seen.values() if len(names) > 1]
    if problems:
        raise ValidationError(problems, "cannot export this run")
    (out_dir / ARMS_DIR).mkdir(parents=True, exist_ok=True) if arm_list else \
        out_dir.mkdir(parents=True, exist_ok=True)
    written, padded = [], []
    for path, rows, kind, name in jobs:
        rank_col, score_col = ("rank", "score") if kind == "arm" else ("fused_rank", "fused_score")
        tag = f"rulegauge-{name}" if kind == "arm" else name
        ranked = ranked_rows(rows, rank_col, score_col, level, scores, docids)
        out = select(ranked, qs)
        padded.append((str(path.relative_to(out_dir)), int((out["docid"] == NO_RESULT).sum())))
        written.append(write_run(out, path, tag))
    answerable = qs[qs["answerable"].astype(bool)] if questions == "answerable" else qs
    written.append(write_qrels(qrels_rows(answerable, docids), out_dir / QRELS_FILE))
    written.append(write_qrels(requirement_qrels_rows(answerable, docids), out_dir / REQUIREMENTS_QRELS_FILE))
    missing = [str(p) for p in written if not p.is_file()]
    if missing:  # never claim a file that is not there
        raise ValidationError([Problem(m, "was not written") for m in missing], "export failed")
    n_questions = int(answerable["answerable"].astype(bool).sum()) if questions == "answerable" \
        else len(qs)
    return ExportResult(out_dir, tuple(written), n_questions, tuple(padded))


def to_ir_measures(run: Side, config_id: str, level: str = "page", *, requirements: bool = False
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(qrels, run) DataFrames with ir-measures' column names for one config, over the
    answerable questions (padded as in the export). ``requirements=True``: one query
    per requirement (``Success@k`` per query, averaged per question = ``recall@k``)."""
    fused = run.table("fused")
    qs = run.table("questions")
    qs = qs[qs["answerable"].astype(bool)]
    docids = collection_docids(run)
    rows = _answerable(ranked_rows(fused[fused["config_id"] == config_id], "fused_rank",
                                   "fused_score", level, "rank", docids), qs)
    if requirements:
        rows = requirement_rows(rows, qs)
        qrels = pd.DataFrame(requirement_qrels_rows(qs, docids), columns=["query_id", "doc_id", "relevance"])
    else:
        qrels = pd.DataFrame(qrels_rows(qs, docids), columns=["query_id", "doc_id", "relevance"])
    return qrels, rows.rename(columns={"qid": "query_id", "docid": "doc_id"})[["query_id", "doc_id", "score"]]


def to_ranx(run: Side, config_id: str, level: str = "page", *, requirements: bool = False
            ) -> tuple[Any, Any]:
    """(ranx.Qrels, ranx.Run) for one config, with the same query ids (no
    ``make_comparable`` needed)."""
    from ranx import Qrels, Run  # deferred: heavy import

    qrels, ranked = to_ir_measures(run, config_id, level, requirements=requirements)
    qd: dict[str, dict[str, int]] = {}
    for r in table_rows(qrels, index=True):
        qd.setdefault(r.query_id, {})[r.doc_id] = int(r.relevance)
    rd: dict[str, dict[str, float]] = {}
    for r in table_rows(ranked, index=True):
        rd.setdefault(r.query_id, {})[r.doc_id] = float(r.score)
    return Qrels.from_dict(qd), Run.from_dict(rd, name=config_id)
