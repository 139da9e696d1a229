"""The cache root of rulegauge: where model weights, embeddings and page texts are kept.

Definition: :func:`cache_root` is ``cache_dir`` if given, else ``$RULEGAUGE_CACHE``, else
``~/.cache/rulegauge`` (``~`` expanded). Edge case: an empty ``$RULEGAUGE_CACHE`` counts as
unset. One home for the rule, so a run that embeds nothing (the kernel) never imports the
embedding code to find the page cache.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """``cache_dir`` if given, else ``$RULEGAUGE_CACHE``, else ``~/.cache/rulegauge``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("RULEGAUGE_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "rulegauge"
