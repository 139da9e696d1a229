"""Search arms, registered by name in :data:`ARMS`.

Importing this package registers the built-in arms (``bm25``, ``dense``,
``boost``, ``external``).
"""

from harness.arms.base import ARMS, Arm, ArmContext, ArmResult, Hit, hits_from_scores

__all__ = ["ARMS", "Arm", "ArmContext", "ArmResult", "Hit", "hits_from_scores", "load_builtin_arms"]


def load_builtin_arms() -> None:
    """Import the modules that register the built-in arms (idempotent)."""
    import importlib

    for mod in ("bm25", "boost", "dense", "external"):
        try:
            importlib.import_module(f"harness.arms.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"harness.arms.{mod}":
                raise
