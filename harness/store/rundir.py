"""The run store: ``runs/<run_id>/`` with ``manifest.json`` and Parquet tables.

Writes are atomic (temporary file, then rename), so an interrupted run never
leaves a half-written table; tables already written survive and a resumed run
skips them. Each table's SHA-256 is recorded in the manifest and checked when a
run is opened (:class:`harness.core.errors.ProvenanceError` on mismatch).
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from harness.core.atomic import atomic_path, write_bytes
from harness.core.digest import file_sha256
from harness.core.errors import HarnessError, ProvenanceError
from harness.store.tables import TABLES

MANIFEST = "manifest.json"


def new_run_id(prefix: str = "run") -> str:
    """``run-YYYYmmdd-HHMMSS-xxxx``: sortable by time, unique by a random suffix."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    return f"{prefix}-{stamp}-{secrets.token_hex(2)}"


def to_arrow(name: str, df: pd.DataFrame, families: dict[str, list[str]] | None = None) -> pa.Table:
    """Cast ``df`` to the registered schema of table ``name`` (column order from the
    schema; missing or extra columns raise)."""
    schema = TABLES.get(name).schema(families)
    missing = [f.name for f in schema if f.name not in df.columns]
    extra = [c for c in df.columns if c not in schema.names]
    if missing or extra:
        raise HarnessError(f"table {name}: missing columns {missing}, unexpected columns {extra}")
    return pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)


class RunWriter:
    """Writes tables and the manifest of one run directory."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)

    @property
    def run_id(self) -> str:
        return self.path.name

    def has_table(self, name: str) -> bool:
        return (self.path / f"{name}.parquet").exists()

    def write_table(self, name: str, df: pd.DataFrame,
                    families: dict[str, list[str]] | None = None) -> Path:
        """Write ``df`` as ``<name>.parquet`` atomically and record its hash."""
        table = to_arrow(name, df, families)
        out = self.path / f"{name}.parquet"
        with atomic_path(out) as tmp:
            pq.write_table(table, tmp)
        self.update_manifest({"tables": {name: {"sha256": file_sha256(out), "rows": table.num_rows}}})
        return out

    def read_manifest(self) -> dict[str, Any]:
        p = self.path / MANIFEST
        return json.loads(p.read_text(encoding="utf-8")) if p.exists() else {}

    def update_manifest(self, patch: dict[str, Any]) -> dict[str, Any]:
        """Deep-merge ``patch`` into the manifest and write it atomically."""
        m = _merge(self.read_manifest(), patch)
        write_bytes(self.path / MANIFEST,
                    json.dumps(m, indent=2, sort_keys=True, ensure_ascii=False).encode())
        return m


def _merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        out[k] = _merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


class Run:
    """A finished (or partial) run directory opened for reading."""

    def __init__(self, path: Path, *, verify: bool = True) -> None:
        self.path = Path(path)
        mp = self.path / MANIFEST
        if not mp.exists():
            raise HarnessError(f"{self.path}: not a run directory (no {MANIFEST})")
        try:
            self.manifest: dict[str, Any] = json.loads(mp.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ProvenanceError(f"{mp}: manifest is not valid JSON ({exc})") from exc
        if verify:
            self.verify()

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id", self.path.name))

    def verify(self) -> None:
        """Check every table's hash against the manifest; report all mismatches."""
        bad = []
        for name, info in self.manifest.get("tables", {}).items():
            p = self.path / f"{name}.parquet"
            if not p.exists():
                bad.append(f"{name}.parquet is missing")
            elif file_sha256(p) != info.get("sha256"):
                bad.append(f"{name}.parquet does not match the hash in the manifest")
        if bad:
            raise ProvenanceError(f"{self.path}: " + "; ".join(bad))

    def tables(self) -> list[str]:
        return sorted(self.manifest.get("tables", {}))

    def has_table(self, name: str) -> bool:
        return name in self.manifest.get("tables", {})

    def table(self, name: str) -> pd.DataFrame:
        if not self.has_table(name):
            raise HarnessError(f"run {self.run_id} has no table {name!r} (has: {', '.join(self.tables())})")
        df: pd.DataFrame = pq.read_table(self.path / f"{name}.parquet").to_pandas()
        return df

    def __repr__(self) -> str:
        return f"Run({str(self.path)!r})"


def _manifests(runs_dir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """(run directory, manifest) under ``runs_dir``, oldest first by the manifest's
    ``created`` time, then name; an unreadable manifest counts as empty."""
    runs_dir = Path(runs_dir)
    if not runs_dir.exists():
        return []
    found = []
    for p in runs_dir.iterdir():
        mp = p / MANIFEST
        if p.is_dir() and mp.exists():
            try:
                m = json.loads(mp.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                m = {}
            found.append((str(m.get("created", "")), p.name, p, m))
    return [(p, m) for _, _, p, m in sorted(found, key=lambda t: (t[0], t[1]))]


def list_runs(runs_dir: Path) -> list[Path]:
    """Run directories under ``runs_dir`` (those with a manifest), oldest first."""
    return [p for p, _ in _manifests(runs_dir)]


def open_run(ref: str | Path, runs_dir: Path = Path("runs"), *, verify: bool = True) -> Run:
    """Open a run by path, by id under ``runs_dir``, or ``latest``."""
    if str(ref) == "latest":
        runs = [p for p, m in _manifests(runs_dir) if m.get("status") == "complete"]
        if not runs:
            raise HarnessError(f"no complete run under {runs_dir}")
        return Run(runs[-1], verify=verify)
    p = Path(ref)
    if not (p / MANIFEST).exists() and (Path(runs_dir) / str(ref) / MANIFEST).exists():
        p = Path(runs_dir) / str(ref)
    return Run(p, verify=verify)
