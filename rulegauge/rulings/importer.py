"""``rulegauge rulings import``: ruling pages -> a run directory of kind ``rulings``.

Every file is parsed on its own: a page that cannot be parsed is reported (file
name and what was missing) and the others are still imported. The run holds the
tables ``rulings``, ``ruling_refs``, ``ruling_reads``, ``ruling_citations`` and
``ruling_decodes`` (``rulegauge.rulings.tables``) and a manifest with ``kind:
rulings``, every source file's SHA-256, its parse warnings and the decode
parameters. A directory argument stands for the ``*.txt`` files inside it
(sorted). Two files with the same name get their SHA-256 prefix appended to
the ruling id.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from rulegauge.core.errors import Problem, RulegaugeError
from rulegauge.rulings import frames
from rulegauge.rulings.joint import RowDecoding
from rulegauge.rulings.parse import parse_bytes, ruling_id
from rulegauge.rulings.records import ParseFailure, Ruling
from rulegauge.store.provenance import base_manifest, now_iso
from rulegauge.store.rundir import RunWriter, failure_reason, new_run_id, run_path


@dataclass(frozen=True)
class ImportResult:
    """What an import wrote: the run directory, parsed rulings, failures, decodings."""

    path: Path
    rulings: tuple[Ruling, ...]
    failures: tuple[ParseFailure, ...]
    decoded: tuple[tuple[str, tuple[RowDecoding, ...]], ...]

    def decodings(self, question_id: str) -> tuple[RowDecoding, ...]:
        return dict(self.decoded).get(question_id, ())


def expand(paths: Sequence[Path]) -> list[Path]:
    """Files to import: files as given, directories as their ``*.txt`` files."""
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(x for x in p.glob("*.txt") if x.is_file()) if p.is_dir() else [p]
    return out


def parse_files(paths: Sequence[Path]) -> tuple[list[Ruling], list[ParseFailure]]:
    """Parse every file; unreadable files and unparseable pages become failures."""
    rulings: list[Ruling] = []
    failures: list[ParseFailure] = []
    seen: set[str] = set()
    for path in expand(paths):
        try:
            data = path.read_bytes()
        except OSError as exc:
            failures.append(ParseFailure(str(path), None, ("readable file",),
                                         (Problem(str(path), exc.strerror or str(exc)),)))
            continue
        qid = ruling_id(path)
        if qid in seen:
            qid = f"{qid}-{hashlib.sha256(data).hexdigest()[:8]}"
        result = parse_bytes(data, str(path), qid)
        if isinstance(result, ParseFailure):
            failures.append(result)
        else:
            seen.add(qid)
            rulings.append(result)
    return rulings, failures


def import_rulings(paths: Sequence[Path], runs_dir: Path = Path("runs"), run_id: str | None = None,
                   depth: int = 100, rounding: str = "half_up") -> ImportResult:
    """Parse, decode and write the rulings run (see the module docstring).

    Raises :class:`RulegaugeError` when no page could be imported (nothing is
    written then) or when the run directory already exists.
    """
    rulings, failures = parse_files(paths)
    if not rulings:
        detail = "; ".join(str(f) for f in failures) or "no files given"
        raise RulegaugeError(f"no ruling page imported: {detail}")
    rid = run_id or new_run_id("rulings")
    path = run_path(Path(runs_dir), rid)  # a run id is a folder name inside runs_dir
    if path.exists() and any(path.iterdir()):
        raise RulegaugeError(f"{path} already exists; choose another --run-id")
    decoded = {r.question_id: frames.decode_ruling(r, depth, rounding) for r in rulings}
    writer = RunWriter(path)
    manifest = base_manifest(rid)
    manifest.update(kind="rulings", rulings=_manifest_section(rulings, failures, depth, rounding))
    writer.update_manifest(manifest)
    try:
        writer.write_table("rulings", frames.rulings_frame(rulings, decoded))
        writer.write_table("ruling_refs", frames.refs_frame(rulings))
        writer.write_table("ruling_reads", frames.reads_frame(rulings))
        writer.write_table("ruling_citations", frames.citations_frame(rulings))
        dec = [frames.decodes_frame(r, decoded[r.question_id]) for r in rulings]
        writer.write_table("ruling_decodes", pd.concat(dec, ignore_index=True))
    except BaseException as exc:  # never left running: the manifest says failed, and why
        with contextlib.suppress(Exception):
            writer.mark_failed(failure_reason(exc))
        raise
    writer.update_manifest({"status": "complete", "finished": now_iso()})
    return ImportResult(path, tuple(rulings), tuple(failures),
                        tuple((q, d) for q, d in decoded.items()))


def _manifest_section(rulings: Sequence[Ruling], failures: Sequence[ParseFailure], depth: int,
                      rounding: str) -> dict[str, object]:
    sources: list[dict[str, object]] = [{"file": r.source_file, "sha256": r.source_sha256, "question_id": r.question_id,
                "status": "imported", "warnings": [str(p) for p in r.warnings]} for r in rulings]
    sources += [{"file": f.source_file, "sha256": f.source_sha256, "status": "failed",
                 "missing": list(f.missing), "warnings": [str(p) for p in f.warnings]}
                for f in failures]
    return {"sources": sources, "imported": len(rulings), "failed": len(failures),
            "decode": {"depth": depth, "rounding": rounding, "decimals": 6}}
