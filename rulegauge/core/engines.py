"""Execution engines: where a run's heavy work (embedding, answering) executes.

Definition: :data:`ENGINES` maps an engine name to an :class:`Engine`; ``local`` (the
default) does everything in this process, ``ray`` fans embedding and answering out over
a Ray cluster (:mod:`rulegauge.core.cluster`, which registers it: plug-in group
``rulegauge.engines``, its module imported only when ``ray`` is asked for; docs/scale-out.md).
Each stage keeps its own
registry of fan-outs keyed by these names (``rulegauge.embedding.fanout.EMBED_RUNNERS``,
``rulegauge.answering.fanout.ASKERS``): the engine decides *where* work runs, never *what*
it computes, so every table of a run is the same under every engine.

:func:`open_engine` turns an :class:`EngineChoice` (``--engine``, ``--address``) into a
running session and yields an :class:`EngineInfo`; :meth:`EngineInfo.describe` is what
the manifest records (engine name, address, nodes, CPUs).

Edge cases: ``--address`` is refused for an engine that takes none (``local``); an
engine whose library is missing is refused before anything runs, naming the extra to
install. A plug-in engine whose start or stop raises is exit 2 naming it and its package
(:func:`rulegauge.core.plugins.guarded`), never a traceback. Nothing here imports Ray:
``local`` needs no Ray at all.

Reference: the Ray architecture whitepaper (Moritz et al. 2018, "Ray: A Distributed
Framework for Emerging AI Applications", OSDI) for the driver/worker split.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

from rulegauge.core import plugins
from rulegauge.core.errors import ConfigError
from rulegauge.core.registry import Registry, kind_check

LOCAL = "local"


@dataclass(frozen=True)
class EngineInfo:
    """A running engine: its name, the cluster address (None: this process or a
    cluster started for the run) and the cluster size."""

    name: str
    nodes: int
    cpus: int
    address: str | None = None

    def describe(self) -> dict[str, Any]:
        """The manifest's ``engine`` section."""
        return {"name": self.name, "address": self.address, "nodes": self.nodes,
                "cpus": self.cpus}


@dataclass(frozen=True)
class Engine:
    """A registered engine. ``open(address)`` is a context manager yielding the
    :class:`EngineInfo` of a ready session; ``extra`` names the optional dependency
    group it needs (None: none)."""

    name: str
    description: str
    open: Callable[[str | None], AbstractContextManager[EngineInfo]]
    takes_address: bool = False
    extra: str | None = None


@dataclass(frozen=True)
class EngineChoice:
    """What the user asked for: ``--engine NAME`` and ``--address ADDRESS``."""

    name: str = LOCAL
    address: str | None = None

    def check(self) -> Engine:
        """The chosen engine (unknown names raise listing the choices); an address
        given to an engine that takes none raises."""
        engine = ENGINES.get(self.name)
        if self.address is not None and not engine.takes_address:
            raise ConfigError(f"--address is for a cluster engine "
                              f"({', '.join(n for n, e in engines().items() if e.takes_address)}); "
                              f"engine {self.name!r} runs in this process")
        return engine


@contextmanager
def _local(address: str | None) -> Iterator[EngineInfo]:
    yield EngineInfo(LOCAL, 1, os.cpu_count() or 1)


GROUP = "rulegauge.engines"
"""The plug-in group of the other engines (``ray``: :mod:`rulegauge.core.cluster`, a product)."""
ENGINES: Registry[Engine] = Registry("engine", group=GROUP, door=plugins.DOOR,
                                     accepts=kind_check("an Engine", base=Engine))
ENGINES.add(LOCAL, Engine(LOCAL, "everything in this process (default; no extra needed)", _local))


def engines() -> Registry[Engine]:
    """Every engine, ``local`` and the group's, each loaded (e.g. to read its description)."""
    plugins.load(GROUP)
    return ENGINES


def engine_help() -> str:
    """The ``--engine`` help: every engine by name, from the metadata (no engine module is
    imported to build the CLI: ``rulegauge list`` describes each)."""
    local = ENGINES.get(LOCAL)
    return ("Where embedding and answering run: " + "; ".join(
        f"{n}: {local.description if n == LOCAL else 'see rulegauge list'}" for n in ENGINES.names()) + ".")
ADDRESS_HELP = ("Address of a running Ray cluster's head node (HOST:PORT from `ray start --head`, "
                "ray://HOST:PORT or auto); default: start one on this machine.")


@contextmanager
def open_engine(choice: EngineChoice) -> Iterator[EngineInfo]:
    """Start (or join) the chosen engine for the ``with`` block and stop it after; a plug-in
    engine's own exception, starting or stopping, is exit 2 naming it (module docstring)."""
    engine = choice.check()
    with plugins.guarded(GROUP, choice.name, f"starting engine {choice.name}"):
        session = engine.open(choice.address)
        info = session.__enter__()
    try:
        yield info
    except BaseException:
        # the block's own error is the one to report; the engine is still stopped
        with contextlib.suppress(Exception):
            session.__exit__(*sys.exc_info())
        raise
    with plugins.guarded(GROUP, choice.name, f"stopping engine {choice.name}"):
        session.__exit__(None, None, None)
