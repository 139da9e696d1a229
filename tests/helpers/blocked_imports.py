"""Run the ``rulegauge`` command in a subprocess where some top-level modules cannot be imported.

``blocked_env(tmp_path, ("torch", "matplotlib"))`` returns an environment whose
``sitecustomize`` puts a finder first on ``sys.meta_path`` that refuses those modules (and
their submodules) with :class:`ModuleNotFoundError`, as an environment without the extra
would: ``import`` and :func:`importlib.util.find_spec` both fail for them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

SITECUSTOMIZE = '''
import os, sys

BLOCKED = set(os.environ["RULEGAUGE_TEST_BLOCKED"].split(","))


class _Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Refuse())
'''


def blocked_env(tmp_path: Path, modules: Sequence[str]) -> dict[str, str]:
    """``os.environ`` plus a ``PYTHONPATH`` whose ``sitecustomize`` blocks ``modules``."""
    site = tmp_path / "blocked-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, "RULEGAUGE_TEST_BLOCKED": ",".join(modules)}
