"""The engine arms give the same ranks to the bit in any process: the sample through
SQLite FTS5, tantivy and PostgreSQL (a throwaway cluster each run) under two
PYTHONHASHSEEDs, every arm_ranks row compared."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

from tests.helpers.common import REPO
from tests.helpers.engines import require_postgres, require_tantivy

pytestmark = pytest.mark.slow

GRID = """
[arms.fts5]
kind = "sqlite-fts5"
[arms.tantivy]
kind = "tantivy"
stemmer = "english"
[arms.pg]
kind = "postgres"
query = "any"
rank = "ts_rank_cd"
[grid]
arms = [["fts5", "tantivy", "pg"]]
"""


def test_engine_ranks_are_identical_across_processes(tmp_path):
    require_tantivy()
    require_postgres()
    cfg = tmp_path / "engines.toml"
    cfg.write_text(GRID, encoding="utf-8")
    tables = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        res = subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()", "run", "-c", str(cfg),
                              "--out", str(tmp_path / "runs"), "--run-id", f"s{seed}", "--quiet"],
                             capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
        tables.append(pd.read_parquet(tmp_path / "runs" / f"s{seed}" / "arm_ranks.parquet").drop(columns="run_id"))
    assert set(tables[0]["arm"]) == {"fts5", "tantivy", "pg"} and len(tables[0]) > 100
    pd.testing.assert_frame_equal(tables[0], tables[1], check_exact=True)
