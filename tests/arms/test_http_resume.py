"""A killed ``http`` run (SIGKILL, in a subprocess) resumes asking only what is missing."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from rulegauge.pipeline.retrieval import RunOptions, run
from tests.helpers.reference_service import http_grid, reference_service


def _rulegauge() -> list[str]:
    script = Path(sys.executable).with_name("rulegauge")
    return [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "from rulegauge.cli import main; main()"]


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_sigkill_then_resume_asks_only_the_missing(tmp_path):
    runs = tmp_path / "runs"
    with reference_service(delay_s=0.15) as svc:
        grid = http_grid(tmp_path / "g.toml", svc.url, extra="concurrency = 1")
        journal = runs / "k" / "arms-journal" / "live.jsonl"
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
        with subprocess.Popen([*_rulegauge(), "run", "-c", str(grid), "--out", str(runs), "--run-id", "k"],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) as proc:
            end = time.monotonic() + 120
            while _lines(journal) < 8 and proc.poll() is None and time.monotonic() < end:
                time.sleep(0.05)
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            assert proc.stderr is not None
            err = proc.stderr.read().decode()
        assert proc.returncode == -signal.SIGKILL, err
        done = _lines(journal)
        assert 8 <= done < 57
        before = len(svc.asked)
        resumed = run(RunOptions(config=grid, runs_dir=runs, run_id="k"))
        asked_again = svc.asked[before:]
        # the preflight asks the first question once; then only the questions not journaled
        assert len(asked_again) == 1 + (57 - done)
        assert asked_again[0] == "bw-01" and "bw-01" not in asked_again[1:]
        assert _lines(journal) == 57
        fresh = run(RunOptions(config=grid, runs_dir=runs, run_id="fresh"))

    def ranks(path: Path) -> pd.DataFrame:
        df = pd.read_parquet(path / "arm_ranks.parquet")
        return df.drop(columns="run_id").sort_values(["arm", "question_id", "rank"]).reset_index(drop=True)

    pd.testing.assert_frame_equal(ranks(resumed.path), ranks(fresh.path))
