"""Synthetic runs with tags, question digests and unlabelled questions (slices, overlap,
gold sets that grow), built on tests.helpers.comparison.write_run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from rulegauge.store.rundir import Run, RunWriter
from tests.helpers.comparison import write_run


def digest_of(qid: str, version: int = 1) -> str:
    """A stand-in question digest: equal ids and versions give equal digests."""
    return f"{qid}-v{version}".ljust(16, "0")[:16]


def tagged_run(path: Path, lists: Mapping[str, Sequence[str]], *,
               tags: Mapping[str, Sequence[str]] | None = None,
               versions: Mapping[str, int] | None = None, unlabelled: Sequence[str] = (),
               goldset_sha: str = "gold-1", **kw: object) -> Run:
    """``write_run`` plus each question's tags (questions table), its digest in the
    manifest (``versions[q]`` changes it) and the unlabelled ids (manifest)."""
    write_run(path, lists, goldset_sha=goldset_sha, **kw)  # type: ignore[arg-type]
    w = RunWriter(path)
    run = Run(path)
    q = run.table("questions").drop(columns=["run_id"])
    q["tags"] = [list((tags or {}).get(i, ())) for i in q["question_id"]]
    w.write_table("questions", q)
    goldset = dict(run.manifest["goldset"])
    goldset["question_digests"] = {i: digest_of(i, (versions or {}).get(i, 1)) for i in lists}
    if unlabelled:
        goldset["unlabelled"] = list(unlabelled)
    w.update_manifest({"goldset": goldset})
    return Run(path)
