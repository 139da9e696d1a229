"""The engine arms on the gold sets, against real engines (CI: a throwaway PostgreSQL with
pgvector, tantivy, SQLite): ``docs/grids/engines.toml`` run as docs/arms.md says, measured
with its SQL (``docs/examples/engines-overlap.sql``), and the lexical arms' figures compared
with docs/arms.md's table; the vector arms against the ``dense`` arm (same vectors; their
floats may differ by CPU). Every engine records its version in the manifest."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.pipeline.retrieval import RunOptions, run
from rulegauge.store.query import query
from tests.helpers.common import REPO, SHARED
from tests.helpers.engines import require_postgres, require_tantivy

pytestmark = pytest.mark.slow

GRID = REPO / "docs" / "grids" / "engines.toml"
SQL = (REPO / "docs" / "examples" / "engines-overlap.sql").read_text(encoding="utf-8")
LEXICAL = ("bm25", "fts5", "fts5_porter", "tantivy", "tantivy_en", "pg", "pg_any", "pg_any_cd")
VECTOR = ("pgvector", "pgvector_hnsw")


def documented() -> dict[str, tuple[float, ...]]:
    """arm -> (sample overlap, recall, empty, SH overlap, recall, empty) from docs/arms.md."""
    text = (REPO / "docs" / "arms.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\w+) \| [^|]+ \| ([\d.]+) \| ([\d.]+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| (\d+) \|$",
                      text, flags=re.MULTILINE)
    return {r[0]: tuple(float(x) for x in r[1:]) for r in rows}


def measure(goldset: Path | None, tmp_path: Path, run_id: str) -> pd.DataFrame:
    require_tantivy()
    require_postgres(vector=True)
    runs = tmp_path / "runs"
    run(RunOptions(goldset=goldset, config=GRID, runs_dir=runs, run_id=run_id, metrics=("recall@5",),
                   allow_outside=goldset is not None))
    manifest = json.loads((runs / run_id / "manifest.json").read_text(encoding="utf-8"))
    arms = manifest["arms"]
    assert arms["fts5"]["version"] and arms["tantivy"]["version"]
    assert arms["pg"]["server_version_num"] >= 150000 and arms["pgvector"]["pgvector"]
    assert arms["pg"]["database"] == "throwaway cluster" and "password" not in json.dumps(arms)
    return query(SQL, runs).set_index("arm")


def check(got: pd.DataFrame, want: dict[str, tuple[float, ...]], offset: int) -> None:
    for arm in LEXICAL:
        row = got.loc[arm]
        assert (row["overlap@10"], row["recall@5"], row["empty"]) == pytest.approx(
            want[arm][offset:offset + 3], abs=5e-4), arm
    for arm in VECTOR:
        assert got.loc[arm, "recall@5"] == pytest.approx(got.loc["dense", "recall@5"], abs=0.02), arm
        assert got.loc[arm, "overlap@10"] == pytest.approx(got.loc["dense", "overlap@10"], abs=0.05), arm
        assert got.loc[arm, "empty"] == 0


def test_engine_arms_on_the_sample(tmp_path):
    check(measure(None, tmp_path, "engines-sample"), documented(), 0)


@pytest.mark.shared
def test_engine_arms_on_secret_hitler(tmp_path):
    check(measure(SHARED / "goldsets" / "secret-hitler.yaml", tmp_path, "engines-sh"), documented(), 3)
