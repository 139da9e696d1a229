"""Boolean flags in ``--help`` without a value placeholder.

typer (0.29) shows every option's type in the help's type column, flags too: ``--quiet <bool>``
reads as if the flag took a value (``--quiet true``), which it refuses. A flag (an option that is
``is_flag`` and not a count) takes no value, so its type column stays empty; every other option keeps
its placeholder (``--top <integer>``). Applied once, when the command line is built
(:func:`plain_flags`), to typer's own option class, so every command group, a plug-in's too, gets it.

Reference: click's ``Option.is_flag``; typer ``core.TyperOption.display_type_rich``.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption

_ORIGINAL = TyperOption.display_type_rich


def _display_type_rich(self: TyperOption, ctx: Any) -> str | None:
    if self.is_flag and not self.count and self.metavar is None:
        return None  # a flag takes no value: no placeholder
    return _ORIGINAL(self, ctx)


def plain_flags() -> None:
    """Show boolean flags without a placeholder in every command's help (idempotent)."""
    TyperOption.display_type_rich = _display_type_rich  # type: ignore[method-assign]
