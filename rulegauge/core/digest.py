"""Content hashes used for provenance (files, tables, model weights)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path | str) -> str:
    """SHA-256 hex digest of a file's bytes (``hashlib.file_digest``, streamed)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
