"""Builders of damaged or planted run folders for the fault tier (issue 25 and after).

Each builder writes into a case folder ``root``: real tiny runs (the lexical arms over
``docs/rules.txt``, made in-process), synthetic runs (:mod:`tests.helpers.analysis`),
planted links, damaged manifests and tables. Checks that run after the command
(``after_*``) assert what must still hold: a link's target untouched, a complete run
still complete.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from tests.helpers import fault_inputs as fi

Build = Callable[[Path], None]
VICTIM = "victim.txt"
VICTIM_TEXT = "precious content\nsecond line without newline"
_HOLDERS: dict[str, subprocess.Popen[str]] = {}  # lock holders started by held_lock
POLICY = '[gate]\nconfig = "rrf-3"\nn_resamples = 200\n[metrics."hit@5"]\nmax_drop = 0.5\n'


def victim(root: Path) -> Path:
    return fi.write(root, VICTIM, VICTIM_TEXT)


def after_victim_intact(root: Path) -> None:
    assert (root / VICTIM).read_text(encoding="utf-8") == VICTIM_TEXT


def real_run(root: Path, run_id: str = "a1", *, answer: bool = False) -> Path:
    """A complete tiny run (bm25 + boost over the 3-page rules text), optionally answered
    by the extractive answerer."""
    from rulegauge.answering.stage import answering_stage
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.retrieval import run

    fi.tiny(root)
    answerers: tuple[tuple[str, dict[str, Any]], ...] = (("extractive", {}),) if answer else ()
    result = run(RunOptions(goldset=root / "g.yaml", config=root / "lexical.toml",
                            runs_dir=root / "runs", run_id=run_id, cache_dir=root / ".cache",
                            stages=answering_stage(answerers)))
    return result.path


def synthetic(root: Path, run_id: str, **kw: Any) -> Path:
    from tests.helpers.fault_templates import synthetic_run  # built once per process, copied

    return synthetic_run(root / "runs" / run_id, **kw)


def with_policy(root: Path) -> None:
    fi.write(root, "policy.toml", POLICY)


def gate_pair(status: str = "complete", keep: int | None = None) -> Build:
    """Base ``base`` and candidate ``cand`` synthetic runs (14 questions); the candidate's
    ``status`` set, its metrics cut to ``keep`` questions (hash recomputed)."""
    def build(root: Path) -> None:
        from rulegauge.store.rundir import Run, RunWriter

        with_policy(root)
        synthetic(root, "base")
        cand = synthetic(root, "cand", seed=1, status=status)
        if keep is not None:
            m = Run(cand).table("metrics")
            qids = sorted(m["question_id"].unique())[:keep]
            with RunWriter(cand) as w:
                w.write_table("metrics", m[m["question_id"].isin(qids)].drop(columns="run_id"))
    return build


def manifest_patch(patch: Callable[[dict[str, Any]], Any], run_id: str = "s1",
                   real: bool = False) -> Build:
    """A run whose manifest is rewritten by ``patch`` (its return value is the new JSON)."""
    def build(root: Path) -> None:
        path = real_run(root, run_id) if real else synthetic(root, run_id)
        with_policy(root)
        synthetic(root, "base")
        mp = path / "manifest.json"
        m = json.loads(mp.read_text(encoding="utf-8"))
        mp.write_text(json.dumps(patch(m)), encoding="utf-8")
    return build


def manifest_bytes(data: bytes) -> Build:
    def build(root: Path) -> None:
        path = synthetic(root, "s1")
        (path / "manifest.json").write_bytes(data)
    return build


def table_columns(table: str, drop: list[str] | None = None, keep: list[str] | None = None,
                  run_id: str = "s1", real: bool = False) -> Build:
    """A run whose ``table`` loses columns; the manifest's hash is recomputed (so only the
    schema check can tell)."""
    def build(root: Path) -> None:
        from rulegauge.core.digest import file_sha256

        path = real_run(root, run_id) if real else synthetic(root, run_id)
        with_policy(root)
        synthetic(root, "base")
        p = path / f"{table}.parquet"
        t = pq.read_table(p)
        t = t.drop_columns(drop) if drop else t.select(keep or [])
        pq.write_table(t, p)
        mp = path / "manifest.json"
        m = json.loads(mp.read_text(encoding="utf-8"))
        m["tables"][table] = {"sha256": file_sha256(p), "rows": t.num_rows}
        mp.write_text(json.dumps(m), encoding="utf-8")
    return build


def planted_link(rel: str, target: str = VICTIM, *, folder: bool = False,
                 real: str | None = None) -> Build:
    """``runs/r1/<rel>`` is a link to ``root/<target>`` (a file, or a folder when
    ``folder``); ``real``: make the run (id) first, answered."""
    def build(root: Path) -> None:
        if real:
            real_run(root, real, answer=True)
        else:
            fi.tiny(root)
        victim(root)
        if folder:
            (root / target).mkdir(exist_ok=True)
        run_dir = root / "runs" / (real or "r1")
        link = run_dir / rel
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        elif link.exists() or link.is_symlink():
            link.unlink()
        link.symlink_to(root / target)
    return build


def after_folder_empty(name: str) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        assert not any((root / name).iterdir()), list((root / name).iterdir())
    return check


def after_complete(run_id: str) -> Callable[[Path], None]:
    def check(root: Path) -> None:
        m = json.loads((root / "runs" / run_id / "manifest.json").read_text(encoding="utf-8"))
        assert m["status"] == "complete", m.get("status")
    return check


def edited_goldset(root: Path) -> None:
    real_run(root, "r1")
    text = (root / "g.yaml").read_text(encoding="utf-8")
    (root / "g.yaml").write_text(text.replace("How far does a boat move?", "How far now?"),
                                 encoding="utf-8")


def unrecorded_table(root: Path) -> None:
    """A run r1 that lost ``metrics`` from its manifest (status running) while a
    foreign ``metrics.parquet`` stands in its place."""
    path = real_run(root, "r1")
    mp = path / "manifest.json"
    m = json.loads(mp.read_text(encoding="utf-8"))
    del m["tables"]["metrics"]
    m["status"] = "running"
    mp.write_text(json.dumps(m), encoding="utf-8")
    pq.write_table(pa.table({"bogus": [1, 2, 3]}), path / "metrics.parquet")


def after_metrics_recorded(root: Path) -> None:
    from rulegauge.store.rundir import Run

    run = Run(root / "runs" / "r1")
    assert run.complete and "answerable" in run.table("metrics").columns


def journal_bytes(data: bytes) -> Build:
    def build(root: Path) -> None:
        path = real_run(root, "a1", answer=True)
        with open(path / "answers-journal" / "extractive.jsonl", "ab") as f:
            f.write(data)
    return build


def big_file(name: str, size: int, goldset: bool = False) -> Build:
    """A sparse file of ``size`` NUL bytes as the only document (or as the gold set)."""
    def build(root: Path) -> None:
        if goldset:
            fi.tiny(root)
            with open(root / "g.yaml", "wb") as f:
                f.truncate(size)
            return
        fi.with_document(name, b"")(root)
        with open(root / "docs" / name, "wb") as f:
            f.truncate(size)
    return build


def many_questions(n: int) -> Build:
    def build(root: Path) -> None:
        qs = "".join(f'  - {{id: q{i}, language: en, question: "Q{i}?", pages: [rb#2]}}\n'
                     for i in range(n))
        fi.write(root, "docs/rules.txt", fi.RULES)
        fi.write(root, "g.yaml", fi.goldset_text(questions=qs))
    return build


def linked_goldset(root: Path) -> None:
    """``g.yaml`` is a link to ``elsewhere/real.yaml``; the documents lie beside the link."""
    fi.tiny(root)
    (root / "elsewhere").mkdir()
    os.replace(root / "g.yaml", root / "elsewhere" / "real.yaml")
    (root / "g.yaml").symlink_to(root / "elsewhere" / "real.yaml")


def suite(concurrency: int) -> Build:
    def build(root: Path) -> None:
        real_run(root, "a1")
        fi.write(root, "suite.toml", f'[suite]\nname = "s"\n[answerers.x]\nprovider = "extractive"\n'
                                     f"concurrency = {concurrency}\n")
    return build


def held_lock(seconds: float = 60.0) -> Build:
    """A synthetic pair whose candidate run is locked by a live process (it exits by itself)."""
    def build(root: Path) -> None:
        gate_pair()(root)
        code = ("import fcntl, os, sys, time\n"
                "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
                "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\n"
                f"time.sleep({seconds})\n")
        proc = subprocess.Popen([sys.executable, "-c", code, str(root / "runs" / "cand" / ".lock")],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        _HOLDERS[str(root)] = proc
    return build


def after_stop_holder(root: Path) -> None:
    """End the lock holder :func:`held_lock` started (the process it keeps)."""
    proc = _HOLDERS.pop(str(root))
    proc.terminate()
    proc.wait(timeout=30)
    if proc.stdout is not None:
        proc.stdout.close()


def linked_table(root: Path) -> None:
    """A synthetic run s1 whose ``metrics.parquet`` is a link to a copy beside the run
    (same bytes, so the hash matches: only the link check can tell)."""
    path = synthetic(root, "s1")
    os.replace(path / "metrics.parquet", root / "elsewhere.parquet")
    (path / "metrics.parquet").symlink_to(root / "elsewhere.parquet")
