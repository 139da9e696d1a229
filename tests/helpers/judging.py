"""Helpers of the judging tests: a copy of the sample gold set, a fast lexical run of it."""

from __future__ import annotations

import shutil
from pathlib import Path

from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import run
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL, REPO

LEXICAL_CONFIG = "rrf_k60_bm25+boost"


def sample_copy(folder: Path) -> Path:
    """``folder/goldsets/sample.yaml`` and its documents (a gold set we may rewrite)."""
    gs = folder / "goldsets"
    gs.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "goldsets" / "sample.yaml", gs / "sample.yaml")
    shutil.copytree(REPO / "goldsets" / "sample", gs / "sample", dirs_exist_ok=True)
    return gs / "sample.yaml"


def lexical_run(goldset: Path, runs_dir: Path, run_id: str) -> Run:
    """A model-free run (bm25 + boost) of ``goldset``."""
    return Run(run(RunOptions(goldset=goldset, config=LEXICAL, runs_dir=runs_dir,
                              run_id=run_id)).path)
