"""How an error names a component: its kind, name, plug-in group and the package it came from.

``component("fusion method", "rulegauge.fusion", "acme-max")`` is ``fusion method 'acme-max'
(rulegauge.fusion, from acme-rulegauge==0.1.0)``, and ``from builtin`` for rulegauge's own: the
form a broken plug-in is reported in (:class:`rulegauge.core.plugins.BrokenPlugin`), so whoever
reads a contract error knows which package to fix (docs/plugins.md). The origin is the one
:func:`rulegauge.core.plugins.origin` records.
"""

from __future__ import annotations

from rulegauge.core import plugins


def component(kind: str, group: str, name: str) -> str:
    """``KIND 'NAME' (GROUP, from PACKAGE)`` (module docstring)."""
    return f"{kind} {name!r} ({group}, from {plugins.origin(group, name)})"
