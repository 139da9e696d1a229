"""The embedded sample: where its gold set is, and the grid ``rulegauge run`` uses on it.

The sample (*Lanterns of Brackwater*: ``goldsets/sample.yaml`` and the documents under
``goldsets/sample/``) is written once, in the repository's ``goldsets/``; the wheel carries a copy as
package data under ``rulegauge/data/sample/`` (``setup.py`` copies it at build time), so
``rulegauge run``, ``serve-search`` and :mod:`rulegauge.testing` find it after ``pip install``
as in a clone. :func:`sample_goldset` is the packaged copy when there is one (an installed wheel),
else the repository's (a clone, an editable install).

:func:`sample_grid`: ``rulegauge run`` without ``-g`` and ``-c`` runs the sample on the default grid
(bm25, dense, boost); where the ``[dense]`` extra is not installed (the light core), on
``rulegauge/data/lexical-grid.toml`` (bm25 and boost), with a warning naming the extra, so the first
command of a bare install runs rather than asking for torch. A team's own gold set (``-g``) or grid
(``-c``) is never changed: a grid naming the dense arm without the extra is exit 2 with the
``pip install``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.extras import install_command, missing_modules

log = logging.getLogger(__name__)

DATA = Path(__file__).resolve().parents[1] / "data"
PACKAGED = DATA / "sample" / "sample.yaml"
REPOSITORY = Path(__file__).resolve().parents[2] / "goldsets" / "sample.yaml"
LEXICAL_GRID = DATA / "lexical-grid.toml"


def sample_goldset() -> Path:
    """The embedded sample's gold set: the wheel's packaged copy, else the repository's."""
    for path in (PACKAGED, REPOSITORY):
        if path.is_file():
            return path
    raise RulegaugeError(f"the embedded sample is missing: neither {PACKAGED} (the wheel's package data) "
                         f"nor {REPOSITORY} (a clone) exists; reinstall rulegauge or give a gold set with -g")


def sample_grid(goldset: Path | None, config: Path | None) -> Path | None:
    """The grid for a run of ``goldset`` with ``config`` (``None``: the default grid); the lexical
    grid for the sample without ``-c`` when the ``[dense]`` extra is missing (module docstring)."""
    if goldset is not None or config is not None:
        return config
    missing = missing_modules("dense")
    if not missing:
        return None
    log.warning("the [dense] extra is not installed (%s): the sample runs on the lexical grid %s "
                "(bm25 and boost, no dense arm); %s for the default grid", ", ".join(missing[:2]),
                LEXICAL_GRID.name, install_command("dense"))
    return LEXICAL_GRID
