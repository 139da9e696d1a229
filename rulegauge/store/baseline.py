"""Sides of a comparison: full runs and compact, committable baselines.

A *side* (:class:`Side`) is what ``rulegauge.regression.compare`` reads: a ``manifest`` and
tables by name. A run directory (:class:`rulegauge.store.rundir.Run`) is a side; so is a
baseline, which is a run directory holding only what comparing and gating need:

* ``metrics`` and ``answer_metrics`` (per question; every row kept);
* ``questions`` and ``configs`` (relevant pages, config names and kinds);
* ``answers`` with the answer text blanked (outcomes decide answer-metric scopes);
* ``fused`` restricted to rows of relevant pages, so that the per-arm ranks of
  the pages a regression moved ("why", :mod:`rulegauge.regression.evidence`) are still known,
  and to the top :data:`BASELINE_FUSED_TOP` of every list, so that the overlap of two runs'
  lists (RBO, Jaccard: :mod:`rulegauge.regression.overlap`) is known to that depth.

What a baseline keeps of each table is declared on the table (``kept=`` in
:mod:`rulegauge.store.tables`, :class:`rulegauge.store.schema.Kept`).

The manifest is the source run's (gold set, corpus and config hashes, packages,
git commit) plus a ``baseline`` section (name, source run, time saved). Tables
are hashed by :class:`rulegauge.store.rundir.RunWriter` and checked when opened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from rulegauge.core.atomic import atomic_dir
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import RulegaugeError
from rulegauge.store.fits import Wants
from rulegauge.store.provenance import now_iso
from rulegauge.store.rundir import MANIFEST, Run, RunWriter, open_run
from rulegauge.store.schema import Kept, backfilled, kept_tables, known_table

BASELINES_DIR = Path("runs") / "baselines"
BASELINE_FUSED_TOP = 10
"""Ranks of every fused list a baseline keeps (``manifest.baseline.fused_top``)."""


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
    raise RulegaugeError(f"{which}: config {selector!r} {why}; choose one of: {choices}")


def _write(writer: RunWriter, name: str, df: pd.DataFrame) -> None:
    if not known_table(name):  # a table whose schema module could not be imported
        out = writer.path / f"{name}.parquet"
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), out)
        writer.update_manifest({"tables": {name: {"sha256": file_sha256(out), "rows": len(df)}}})
        return
    arms = [c[len("rank_"):] for c in df.columns if c.startswith("rank_")]
    writer.write_table(name, backfilled(name, df), {"rank_*": arms})  # an older run's table: as written now


def _compact(run: Side, name: str, kept: Kept, configs: set[str] | None) -> pd.DataFrame:
    """The rows of table ``name`` a baseline keeps (its declared :class:`Kept`)."""
    df = run.table(name)
    if configs is not None and "config_id" in df.columns:
        df = df[df["config_id"].isin(configs)]
    if kept.only is not None:
        keep = df[kept.only].astype(bool)
        if kept.top is not None:
            keep |= df[kept.top] <= BASELINE_FUSED_TOP
        df = df[keep]
    if kept.blank:
        df = df.assign(**dict.fromkeys(kept.blank, ""))
    return df.sort_values(list(kept.sort), kind="stable").reset_index(drop=True)


def save_baseline(run: Side, path: Path, configs: Sequence[str] | None = None,
                  *, overwrite: bool = False, files: Mapping[str, str] | None = None) -> Path:
    """Write the compact baseline of a complete ``run`` to the directory ``path``.

    ``configs`` (ids or names) keeps only those configs; default all. ``files``: more
    text files (name -> text) written into the folder with the tables (the expected
    numbers: :mod:`rulegauge.regression.expected`). The directory is written beside
    ``path`` and renamed into place, so a failed save never leaves a half-written
    baseline. An existing baseline is replaced only with ``overwrite``; without it, one
    another process saves meanwhile is kept (checked at the rename:
    :class:`rulegauge.core.atomic.TargetExists`). Returns ``path``.
    """
    path = Path(path)
    if run.manifest.get("status") != "complete":
        raise RulegaugeError(f"run {run.run_id} is not complete (status "
                           f"{run.manifest.get('status')!r}); only complete runs make baselines")
    if path.exists() and not overwrite:
        raise RulegaugeError(f"{path} already exists; replace it with --overwrite "
                             "(rulegauge baseline save) or overwrite=True")
    if not run.has_table("metrics"):
        raise RulegaugeError(f"run {run.run_id} has no metrics table")
    keep = None
    if configs:
        cfg = side_configs(run)
        keep = {resolve_config(c, cfg, f"run {run.run_id}") for c in configs}
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(path, replace=overwrite) as tmp:  # without: TargetExists if one appears meanwhile
        writer = RunWriter(tmp)
        manifest = {k: v for k, v in run.manifest.items() if k != "tables"}
        manifest["baseline"] = {"name": path.name, "source_run": run.run_id, "saved": now_iso(),
                                "configs": sorted(keep) if keep is not None else "all",
                                "fused": f"rows of relevant pages and the top {BASELINE_FUSED_TOP} "
                                         "of every list", "fused_top": BASELINE_FUSED_TOP,
                                "answers": "text blanked"}
        writer.update_manifest(manifest)
        for name, kept in kept_tables(run.manifest.get("tables") or ()).items():
            if run.has_table(name):
                _write(writer, name, _compact(run, name, kept, keep))
        writer.close()
        (tmp / ".lock").unlink(missing_ok=True)  # a baseline is committed: no lock file in it
        for name, text in (files or {}).items():
            (tmp / name).write_text(text, encoding="utf-8")
    return path


def load_side(ref: str | Path, runs_dir: Path = Path("runs"),
              baselines_dir: Path | None = None, *, metrics: Sequence[str] = (),
              wants: Wants | None = None) -> Run:
    """Open a run or a baseline: a directory path, a baseline name under
    ``baselines_dir`` (default ``<runs_dir>/baselines``), a run id under
    ``runs_dir``, or ``latest`` (the newest complete run that scored ``metrics``:
    :func:`rulegauge.store.rundir.open_run`; ``wants``: of that gold set and with those configs)."""
    bdir = Path(baselines_dir) if baselines_dir is not None else Path(runs_dir) / "baselines"
    p = Path(ref)
    if (p / MANIFEST).exists():
        return Run(p)
    if str(ref) != "latest" and (bdir / str(ref) / MANIFEST).exists():
        return Run(bdir / str(ref))
    if str(ref) == "latest" or (Path(runs_dir) / str(ref) / MANIFEST).exists():
        return open_run(ref, runs_dir, metrics=metrics, wants=wants)
    raise RulegaugeError(f"{ref}: not a run or baseline (looked for {p / MANIFEST}, "
                       f"{Path(runs_dir) / str(ref) / MANIFEST} and {bdir / str(ref) / MANIFEST})")
