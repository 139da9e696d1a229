"""Search arms, registered by name in :data:`ARMS`.

:func:`load_builtin_arms` registers the built-in arms and those of installed plug-in
packages (entry points ``rulegauge.arms``), through :mod:`rulegauge.core.plugins`.

Its modules: docs/design.md's module map (generated from their docstrings).
"""

from rulegauge.arms.base import ARMS, Arm, ArmContext, hits_from_scores
from rulegauge.arms.results import ArmResult, Hit
from rulegauge.core import plugins

# the re-exported names
__all__ = ["ARMS", "Arm", "ArmContext", "ArmResult", "Hit", "hits_from_scores", "load_builtin_arms"]


def load_builtin_arms() -> None:
    """Register the built-in arms and the plug-in arms of installed packages (idempotent;
    :mod:`rulegauge.core.plugins`). A new built-in arm is one entry point in pyproject.toml's
    ``[project.entry-points."rulegauge.arms"]``, as a plug-in's is."""
    plugins.load("rulegauge.arms")
