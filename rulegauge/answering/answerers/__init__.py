"""Answerers, registered by name in :data:`ANSWERERS`.

:func:`load_builtin_answerers` registers the built-in answerers (entry points
``rulegauge.answerers`` in pyproject.toml) and those of installed plug-in packages;
:func:`make_answerer` builds one from its name and keyword parameters (from the
config file), reporting unknown names and parameters with the valid choices.
"""

from __future__ import annotations

import inspect
from typing import Any

from rulegauge.answering.answerers.base import ANSWERERS, Answerer
from rulegauge.core import plugins
from rulegauge.core.errors import ConfigError

# the re-exported names
__all__ = ["ANSWERERS", "Answerer", "load_builtin_answerers", "make_answerer"]



def load_builtin_answerers() -> None:
    """Register the built-in answerers (``production`` included) and those of installed
    plug-in packages (entry points ``rulegauge.answerers``; :mod:`rulegauge.core.plugins`).

    The ``llama-cpp`` module registers even without llama-cpp-python installed;
    only constructing that answerer needs the extra.
    """
    plugins.load("rulegauge.answerers")


def make_answerer(name: str, **params: Any) -> Answerer:
    """Construct the answerer registered as ``name`` with keyword ``params``.

    Unknown names raise :class:`rulegauge.core.errors.RegistryError` listing the
    answerers; unknown or missing parameters raise
    :class:`rulegauge.core.errors.ConfigError` listing the accepted ones.
    """
    load_builtin_answerers()
    cls = ANSWERERS.get(name)
    sig = inspect.signature(type(cls).__init__ if not isinstance(cls, type) else cls)
    accepted = [p for p in sig.parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    missing = [p.name for p in sig.parameters.values()
               if p.name != "self" and p.default is inspect.Parameter.empty
               and p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in params]
    if unknown or missing:
        detail = []
        if unknown:
            detail.append(f"unknown parameter(s) {', '.join(unknown)}")
        if missing:
            detail.append(f"missing required parameter(s) {', '.join(missing)}")
        raise ConfigError(f"answerer {name!r}: {'; '.join(detail)}; it accepts: "
                          f"{', '.join(accepted)}")
    answerer: Answerer = cls(**params)
    return answerer
