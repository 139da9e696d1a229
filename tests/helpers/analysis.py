"""Synthetic run directories for the analysis tests (bands, report, query, notebooks).

The fused scores follow the weighted-RRF formula exactly from synthetic per-arm
ranks, so :func:`rulegauge.analysis.bands.validate` accepts them. Everything is drawn from a
seeded local generator: the same seed writes the same tables.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from rulegauge.core.ordering import order
from rulegauge.goldset.records import PageRef, Question
from rulegauge.metrics.ranking import DEFAULT_METRICS, parse, score_ranking
from rulegauge.store.rundir import RunWriter

ARMS = ("bm25", "dense", "boost")
DEPTHS = {"bm25": 10, "dense": 10, "boost": 6}
# config_id, kind, arms, weights, k
CONFIGS = (
    ("rrf-3", "grid", ("bm25", "dense", "boost"), (1.0, 1.0, 1.0), 60.0),
    ("rrf-2", "grid", ("bm25", "dense"), (1.0, 1.0), 60.0),
    ("rrf-3w", "grid", ("bm25", "dense", "boost"), (1.0, 1.5, 0.5), 30.0),
    ("arm-bm25", "arm", ("bm25",), (1.0,), 60.0),
    ("arm-dense", "arm", ("dense",), (1.0,), 60.0),
    ("arm-boost", "arm", ("boost",), (1.0,), 60.0),
)
Config = tuple[str, str, tuple[str, ...], tuple[float, ...], float]


def grid_configs(ks: tuple[float, ...] = (10.0, 30.0, 60.0, 90.0),
                 dense_weights: tuple[float, ...] = (0.5, 2.0)) -> tuple[Config, ...]:
    """A small real-looking grid: RRF k x two arm subsets (ids as rulegauge writes
    them, the service config ``rrf_k60_bm25+dense+boost`` among them), the dense
    weight swept at k = 60 over the three arms, and each arm alone."""
    out: list[Config] = []
    for arms in (("bm25", "dense", "boost"), ("bm25", "dense")):
        out += [(f"rrf_k{k:g}_{'+'.join(arms)}", "grid", arms, (1.0,) * len(arms), k) for k in ks]
    out += [(f"rrf_k60_bm25+dense+boost_w-dense{w:g}", "grid", ("bm25", "dense", "boost"),
             (1.0, w, 1.0), 60.0) for w in dense_weights]
    out += [(f"arm-{a}", "arm", (a,), (1.0,), 60.0) for a in ARMS]
    return tuple(out)


DOCS = (("g-rules", "rulebook", 24), ("g-errata", "errata", 2))


def _digest(ids: pd.Series) -> str:
    return hashlib.sha256("\n".join(map(str, ids)).encode()).hexdigest()


def _chunks() -> pd.DataFrame:
    rows = [(f"{d}#p{p:04d}.c{c:03d}", d, kind, p) for d, kind, pages in DOCS
            for p in range(1, pages + 1) for c in range(3)]
    return pd.DataFrame(rows, columns=["chunk_id", "doc_id", "doc_kind", "page"])


def _questions(rng: np.random.Generator, n: int, n_unanswerable: int) -> pd.DataFrame:
    rows = []
    for i in range(n):
        qid = f"q{i + 1:02d}"
        if i >= n - n_unanswerable:
            pages: list[str] = []
        else:
            pages = [f"g-rules#{int(p)}" for p in rng.choice(np.arange(1, 25), 1 + i % 2, False)]
        rows.append({"question_id": qid, "goldset": "synthetic", "language": "en",
                     "question": f"synthetic question {i + 1}?", "game": "G", "tags": ["synthetic"],
                     "requirements": json.dumps([[p] for p in sorted(pages)]),
                     "n_requirements": len(pages), "answerable": bool(pages),
                     "_pages": frozenset(pages)})
    return pd.DataFrame(rows)


def _arm_ranks(rng: np.random.Generator, chunks: pd.DataFrame, questions: pd.DataFrame
               ) -> dict[tuple[str, str], dict[str, int]]:
    """(question, arm) -> {chunk_id: rank} within the arm's depth."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    page_ids = (chunks["doc_id"] + "#" + chunks["page"].astype(str)).to_numpy()
    ids = chunks["chunk_id"].to_numpy()
    for _, q in questions.iterrows():
        rel = np.isin(page_ids, list(q["_pages"]))
        for arm in ARMS:
            if arm == "boost":  # doc priority: the base rulebook, matched errata sometimes
                errata = (chunks["doc_kind"] == "errata").to_numpy() * (rng.random() < 0.3)
                scores = errata * 2.0 + rel * 0.6 + rng.random(len(ids))
            else:
                scores = rel * 1.0 + rng.normal(0.0, 0.7, len(ids))
            idx = order(scores, ids)[:DEPTHS[arm]]
            out[(q["question_id"], arm)] = {str(ids[i]): r + 1 for r, i in enumerate(idx)}
    return out


def _fused(chunks: pd.DataFrame, questions: pd.DataFrame,
           ranks: dict[tuple[str, str], dict[str, int]],
           configs: tuple[Config, ...] = CONFIGS) -> pd.DataFrame:
    info = chunks.set_index("chunk_id")
    frames = []
    for cid, _kind, arms, weights, k in configs:
        ceiling = sum(weights) / (k + 1)
        for _, q in questions.iterrows():
            voted = sorted({c for a in arms for c in ranks[(q["question_id"], a)]})
            score = np.array([sum(w / (k + ranks[(q["question_id"], a)][c])
                                  for a, w in zip(arms, weights, strict=True)
                                  if c in ranks[(q["question_id"], a)]) for c in voted])
            idx = order(score, voted)
            df = pd.DataFrame({"chunk_id": [voted[i] for i in idx], "fused_score": score[idx]})
            df["doc_id"] = info.loc[df["chunk_id"], "doc_id"].to_numpy()
            df["page"] = info.loc[df["chunk_id"], "page"].to_numpy()
            page_id = df["doc_id"] + "#" + df["page"].astype(str)
            df["page_rank"] = page_id.map({p: i + 1 for i, p in enumerate(dict.fromkeys(page_id))})
            df["relevant"] = page_id.isin(q["_pages"])
            df["foreign"] = False
            df["question_id"], df["config_id"] = q["question_id"], cid
            df["fused_rank"] = np.arange(1, len(df) + 1)
            df["ceiling"], df["n_arms"] = ceiling, len(arms)
            df["score_ratio"] = df["fused_score"] / ceiling
            for a in ARMS:
                r = ranks[(q["question_id"], a)]
                df[f"rank_{a}"] = pd.array(
                    [r.get(c) if a in arms else None for c in df["chunk_id"]], dtype="Int32")
            df["arms_voted"] = df[[f"rank_{a}" for a in arms]].notna().sum(axis=1)
            frames.append(df)
    return pd.concat(frames, ignore_index=True)


def _metrics(fused: pd.DataFrame, questions: pd.DataFrame,
             configs: tuple[Config, ...] = CONFIGS) -> pd.DataFrame:
    """Every default metric through :func:`rulegauge.metrics.ranking.score_ranking`."""
    rows = []
    groups = dict(iter(fused.groupby(["question_id", "config_id"], sort=False)))
    for _, q in questions.iterrows():
        question = Question(q["question_id"], q["question"], "en", tuple(
            (PageRef(p.split("#")[0], int(p.split("#")[1])),) for p in sorted(q["_pages"])))
        for cid, _kind, _arms, weights, k in configs:
            f = groups.get((q["question_id"], cid), fused.iloc[:0])
            values = score_ranking(list(f["doc_id"] + "#" + f["page"].astype(str)), question,
                                   DEFAULT_METRICS, float(f["fused_score"].iloc[0]) if len(f)
                                   else 0.0, sum(weights) / (k + 1))
            for metric, value in values.items():
                if parse(metric).kind == "ranking" and not question.answerable:
                    value = parse(metric).default
                rows.append({"question_id": q["question_id"], "config_id": cid, "metric": metric,
                             "value": value, "answerable": question.answerable})
    return pd.DataFrame(rows)


def _answers(rng: np.random.Generator, questions: pd.DataFrame
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two answerers on config rrf-3: ``extractive`` abstains on unanswerable
    questions, ``echo`` answers everything and sometimes fails the fence."""
    from rulegauge.answering.answer_metrics import answer_metric_names

    answers, metrics = [], []
    for answerer in ("extractive", "echo"):
        for _, q in questions.iterrows():
            abstain = answerer == "extractive" and not q["answerable"]
            outcome = "abstained" if abstain else "answered"
            fence = answerer == "extractive" or rng.random() < 0.7
            latency = float(rng.gamma(2.0, 40.0 if answerer == "extractive" else 400.0))
            answers.append({
                "question_id": q["question_id"], "config_id": "rrf-3", "answerer": answerer,
                "answerer_name": answerer, "model_id": f"synthetic-{answerer}",
                "prompt_hash": "0" * 64, "request_hash": "1" * 64,
                "text": "" if abstain else "Take five lantern tokens [1].", "outcome": outcome,
                "latency_ms": latency, "tokens_in": None, "tokens_out": None, "error": None,
                "fence_passed": fence, "fence_reason": "ok" if fence else "letter density 0.2"})
            special = {"abstained": float(abstain), "latency_ms": latency, "error": 0.0,
                       "fence_pass": float(fence),
                       "abstention_correct": float(abstain == (not q["answerable"]))}
            for name in answer_metric_names():
                metrics.append({"question_id": q["question_id"], "config_id": "rrf-3",
                                "answerer": answerer, "metric": name,
                                "value": special.get(name, float(rng.random())),
                                "answerable": bool(q["answerable"])})
    return pd.DataFrame(answers), pd.DataFrame(metrics)


def write_synthetic_run(path: Path, seed: int = 0, n_questions: int = 14, n_unanswerable: int = 2,
                        with_answers: bool = False, status: str = "complete",
                        created: str = "2025-01-01T00:00:00+00:00",
                        configs: tuple[Config, ...] = CONFIGS) -> Path:
    """Write a complete synthetic run directory at ``path`` and return it (``configs``:
    :data:`CONFIGS` by default, or e.g. :func:`grid_configs`)."""
    rng = np.random.default_rng(seed)
    chunks = _chunks()
    questions = _questions(rng, n_questions, n_unanswerable)
    fused = _fused(chunks, questions, _arm_ranks(rng, chunks, questions), configs)
    w = RunWriter(path)
    # identity as a real run carries it (gold set and corpus hashes), so compare and gate pair
    # synthetic runs over the same questions and chunks as they pair real ones
    identity = {"goldset": {"sha256": _digest(questions["question_id"])},
                "corpus": {"content_hash": _digest(chunks["chunk_id"])}}
    w.update_manifest({"run_id": w.run_id, "created": created, "status": "running", **identity})
    w.write_table("questions", questions.drop(columns="_pages"))
    w.write_table("configs", pd.DataFrame([
        {"config_id": cid, "name": cid, "kind": kind, "method": "rrf", "k": k, "arms": list(arms),
         "weights": list(weights), "depths": [DEPTHS[a] for a in arms],
         "ceiling": sum(weights) / (k + 1), "params": json.dumps({"k": k})}
        for cid, kind, arms, weights, k in configs]))
    w.write_table("fused", fused, {"rank_*": list(ARMS)})
    w.write_table("metrics", _metrics(fused, questions, configs))
    if with_answers:
        answers, answer_metrics = _answers(rng, questions)
        w.write_table("answers", answers)
        w.write_table("answer_metrics", answer_metrics)
    w.update_manifest({"status": status})
    return path
