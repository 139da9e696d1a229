"""Sides of a comparison: full runs and compact, committable baselines.

A *side* (:class:`Side`) is what ``harness.regression.compare`` reads: a ``manifest`` and
tables by name. A run directory (:class:`harness.store.rundir.Run`) is a side; so is a
baseline, which is a run directory holding only what comparing and gating need:

* ``metrics`` and ``answer_metrics`` (per question; every row kept);
* ``questions`` and ``configs`` (relevant pages, config names and kinds);
* ``answers`` with the answer text blanked (outcomes decide answer-metric scopes);
* ``fused`` restricted to rows of relevant pages, so that the per-arm ranks of
  the pages a regression moved ("why") are still known.

The manifest is the source run's (gold set, corpus and config hashes, packages,
git commit) plus a ``baseline`` section (name, source run, time saved). Tables
are hashed by :class:`harness.store.rundir.RunWriter` and checked when opened.
This module also reads the "why" evidence from a side's ``fused`` table.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness.core.atomic import atomic_dir
from harness.core.digest import file_sha256
from harness.core.errors import HarnessError
from harness.core.ordering import order
from harness.corpus.records import page_key, page_keys
from harness.store.provenance import now_iso
from harness.store.rundir import MANIFEST, Run, RunWriter, open_run
from harness.store.tables import TABLES

BASELINES_DIR = Path("runs") / "baselines"
# Table name -> sort key of its rows (stable files: the same run saves the same bytes).
_KEPT: dict[str, tuple[str, ...]] = {
    "metrics": ("config_id", "metric", "question_id"),
    "answer_metrics": ("config_id", "answerer", "metric", "question_id"),
    "answers": ("config_id", "answerer", "question_id"),
    "questions": ("question_id",),
    "configs": ("config_id",),
    "fused": ("config_id", "question_id", "fused_rank"),
}


@runtime_checkable
class Side(Protocol):
    """What a comparison reads: a run, a baseline or an imported set of rulings.

    Tables read: ``metrics`` (required); ``answer_metrics``, ``answers``,
    ``configs``, ``questions`` and ``fused`` when present.
    """

    manifest: dict[str, Any]

    @property
    def run_id(self) -> str: ...

    def has_table(self, name: str) -> bool: ...

    def table(self, name: str) -> pd.DataFrame: ...


def side_label(side: Side) -> str:
    """``baseline NAME (run ID)`` for a baseline, the run id otherwise."""
    name = (side.manifest.get("baseline") or {}).get("name")
    return f"baseline {name} (run {side.run_id})" if name else side.run_id


def side_configs(side: Side) -> pd.DataFrame:
    """config_id, name, kind of a side (from ``configs``, else the metric table's ids)."""
    if side.has_table("configs"):
        return side.table("configs")[["config_id", "name", "kind"]].reset_index(drop=True)
    ids = sorted(set(side.table("metrics")["config_id"]))
    return pd.DataFrame({"config_id": ids, "name": ids, "kind": [""] * len(ids)})


def resolve_config(selector: str, configs: pd.DataFrame, which: str) -> str:
    """A config id, or the id of the one config named ``selector``."""
    if selector in set(configs["config_id"]):
        return selector
    named = configs.loc[configs["name"] == selector, "config_id"].tolist()
    if len(named) == 1:
        return str(named[0])
    choices = ", ".join(f"{i} ({n})" if i != n else str(i)
                        for i, n in zip(configs["config_id"], configs["name"], strict=True))
    why = "is the name of several configs" if named else "is neither a config id nor a name"
    raise HarnessError(f"{which}: config {selector!r} {why}; choose one of: {choices}")


def _write(writer: RunWriter, name: str, df: pd.DataFrame) -> None:
    if name not in TABLES:  # a table whose schema module could not be imported
        out = writer.path / f"{name}.parquet"
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), out)
        writer.update_manifest({"tables": {name: {"sha256": file_sha256(out), "rows": len(df)}}})
        return
    arms = [c[len("rank_"):] for c in df.columns if c.startswith("rank_")]
    writer.write_table(name, df, {"rank_*": arms})


def _compact(run: Side, name: str, configs: set[str] | None) -> pd.DataFrame:
    df = run.table(name)
    if configs is not None and "config_id" in df.columns:
        df = df[df["config_id"].isin(configs)]
    if name == "fused":
        df = df[df["relevant"].astype(bool)]
    if name == "answers":
        df = df.assign(text="")
    return df.sort_values(list(_KEPT[name]), kind="stable").reset_index(drop=True)


def save_baseline(run: Side, path: Path, configs: Sequence[str] | None = None,
                  *, overwrite: bool = False) -> Path:
    """Write the compact baseline of a complete ``run`` to the directory ``path``.

    ``configs`` (ids or names) keeps only those configs; default all. The
    directory is written beside ``path`` and renamed into place, so a failed
    save never leaves a half-written baseline. An existing baseline is replaced
    only with ``overwrite``. Returns ``path``.
    """
    path = Path(path)
    if run.manifest.get("status") != "complete":
        raise HarnessError(f"run {run.run_id} is not complete (status "
                           f"{run.manifest.get('status')!r}); only complete runs make baselines")
    if path.exists() and not overwrite:
        raise HarnessError(f"{path} already exists; pass overwrite to replace it")
    if not run.has_table("metrics"):
        raise HarnessError(f"run {run.run_id} has no metrics table")
    keep = None
    if configs:
        cfg = side_configs(run)
        keep = {resolve_config(c, cfg, f"run {run.run_id}") for c in configs}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(path, replace=True) as tmp:
        writer = RunWriter(tmp)
        manifest = {k: v for k, v in run.manifest.items() if k != "tables"}
        manifest["baseline"] = {"name": path.name, "source_run": run.run_id, "saved": now_iso(),
                                "configs": sorted(keep) if keep is not None else "all",
                                "fused": "rows of relevant pages only", "answers": "text blanked"}
        writer.update_manifest(manifest)
        for name in _KEPT:
            if run.has_table(name):
                _write(writer, name, _compact(run, name, keep))
        writer.close()
        (tmp / ".lock").unlink(missing_ok=True)  # a baseline is committed: no lock file in it
    return path


def load_side(ref: str | Path, runs_dir: Path = Path("runs"),
              baselines_dir: Path | None = None) -> Run:
    """Open a run or a baseline: a directory path, a baseline name under
    ``baselines_dir`` (default ``<runs_dir>/baselines``), a run id under
    ``runs_dir``, or ``latest`` (the newest complete run)."""
    bdir = Path(baselines_dir) if baselines_dir is not None else Path(runs_dir) / "baselines"
    p = Path(ref)
    if (p / MANIFEST).exists():
        return Run(p)
    if str(ref) != "latest" and (bdir / str(ref) / MANIFEST).exists():
        return Run(bdir / str(ref))
    if str(ref) == "latest" or (Path(runs_dir) / str(ref) / MANIFEST).exists():
        return open_run(ref, runs_dir)
    raise HarnessError(f"{ref}: not a run or baseline (looked for {p / MANIFEST}, "
                       f"{Path(runs_dir) / str(ref) / MANIFEST} and {bdir / str(ref) / MANIFEST})")


@dataclass(frozen=True)
class ArmRank:
    """An arm's best rank of a page's chunks before and after (None: not ranked
    within the config's depth, or the arm is not in that side's config)."""

    arm: str
    before: int | None
    after: int | None


@dataclass(frozen=True)
class PageMove:
    """A relevant page's rank in the page list before and after, with every arm's rank.
    None: not retrieved, or unknown when the side has no ``fused`` table."""

    page: str
    before: int | None
    after: int | None
    arms: tuple[ArmRank, ...]


def parse_requirements(text: str) -> tuple[str, ...]:
    """Page ids listed in a ``questions.requirements`` JSON cell (list of lists)."""
    return tuple(dict.fromkeys(str(p) for req in json.loads(text) for p in req))


def relevant_pages(base: Side, candidate: Side) -> dict[str, tuple[str, ...]]:
    """Question id -> relevant page ids, from the base's ``questions`` table (else the
    candidate's), else from the ``relevant`` rows of the ``fused`` tables."""
    for side in (base, candidate):
        if side.has_table("questions"):
            q = side.table("questions")
            return {str(i): parse_requirements(r)
                    for i, r in zip(q["question_id"], q["requirements"], strict=True)}
    out: dict[str, dict[str, None]] = {}
    for side in (base, candidate):
        if side.has_table("fused"):
            f = side.table("fused")
            f = f[f["relevant"].astype(bool)]
            for qid, doc, page in zip(f["question_id"], f["doc_id"], f["page"], strict=True):
                out.setdefault(str(qid), {})[page_key(str(doc), int(page))] = None
    return {q: tuple(sorted(p)) for q, p in out.items()}


class SideEvidence:
    """Page ranks and per-arm ranks from one side's ``fused`` table, per (question, config)."""

    def __init__(self, side: Side, config_ids: set[str]) -> None:
        self.available = side.has_table("fused")
        self.arms: tuple[str, ...] = ()
        self._groups: dict[tuple[str, str], pd.DataFrame] = {}
        self.label = side.run_id
        self.wanted = frozenset(config_ids)
        self.stored: frozenset[str] = frozenset()
        # fused rows cut to a depth per question (harness run --fused-depth); 0 = whole lists
        self.depth = int((side.manifest.get("fused_rows") or {}).get("depth", 0) or 0)
        if self.available:
            f = side.table("fused")
            f = f[f["config_id"].isin(config_ids)]
            self.stored = frozenset(str(c) for c in f["config_id"].unique())
            self.arms = tuple(c[len("rank_"):] for c in f.columns if c.startswith("rank_"))
            f = f.assign(page_id=page_keys(f["doc_id"].astype(str), f["page"]))
            self._groups = {(str(k[0]), str(k[1])): g
                            for k, g in f.groupby(["question_id", "config_id"], sort=False)}

    def ranks(self, question_id: str, config_id: str
              ) -> tuple[dict[str, tuple[int, dict[str, int]]], set[str]]:
        """(page id -> (page rank, {arm: best rank of the page's chunks}), arms that
        ranked any chunk of the question); arms that did not rank a page are absent."""
        g = self._groups.get((question_id, config_id))
        if g is None:
            return {}, set()
        voting = {a for a in self.arms if g[f"rank_{a}"].notna().any()}
        out = {}
        for pid, rows in g.groupby("page_id", sort=False):
            arms = {a: int(v) for a in self.arms if pd.notna(v := rows[f"rank_{a}"].min())}
            out[str(pid)] = (int(rows["page_rank"].min()), arms)
        return out, voting


def evidence_notes(ev: SideEvidence) -> list[str]:
    """What the "why" of a comparison cannot show on one side: configs scored without
    stored fused rows (their pages show as not retrieved) and lists cut to a depth."""
    out = []
    missing = sorted(ev.wanted - ev.stored)
    if missing:
        out.append(f"{ev.label}: no fused rows stored for {', '.join(missing)}, so the why of its changes "
                   f"shows no page ranks (store them: harness run --from {ev.label} -c GRID "
                   f"--fused-config ID)")
    if ev.depth > 0 and ev.stored:
        out.append(f"{ev.label}: fused rows stored to depth {ev.depth} per question: a page ranked "
                   f"deeper shows as not retrieved")
    return out


def page_moves(question_id: str, pages: Sequence[str], base: SideEvidence, base_config: str,
               candidate: SideEvidence, candidate_config: str) -> tuple[PageMove, ...]:
    """Every listed page's move, best-ranked first (by the better of before/after; never
    retrieved last), ties by page id. Arms shown: those that ranked any chunk of the
    question on either side (a baseline keeps relevant rows only, so there: any relevant page)."""
    rb, vb = base.ranks(question_id, base_config)
    rc, vc = candidate.ranks(question_id, candidate_config)
    voting = vb | vc
    arm_names = [a for a in dict.fromkeys(base.arms + candidate.arms) if a in voting]
    moves = []
    for pid in pages:
        b, c = rb.get(pid), rc.get(pid)
        arms = tuple(ArmRank(a, b[1].get(a) if b else None, c[1].get(a) if c else None)
                     for a in arm_names)
        moves.append(PageMove(pid, b[0] if b else None, c[0] if c else None, arms))
    best = [min([r for r in (m.before, m.after) if r is not None], default=np.nan) for m in moves]
    return tuple(moves[i] for i in order(-np.asarray(best, float), [m.page for m in moves]))
