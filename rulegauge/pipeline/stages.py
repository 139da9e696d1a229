"""Named stages of the run lifecycle: where a product (answering) plugs into ``rulegauge run``.

Definition: a :class:`Stage` is a product's hooks into :func:`rulegauge.pipeline.lifecycle.
execute`, registered by name in :data:`STAGES` from the product's own module (answering:
``rulegauge.answering.stage``), which :mod:`rulegauge.core.plugins` loads (group
``rulegauge.stages``) the first time a stage is asked for by name. A run asks for the stages
named in :attr:`RunOptions.stages <rulegauge.pipeline.options.RunOptions.stages>`, each with the
options record the stage itself made (:attr:`Stage.request`); a run that names none never
imports a product. The hooks, in lifecycle order:

* ``request``: the command line's values for the stage (``--answerer``, ``--answer-config``,
  every ``-p``) -> the stage's own options record and the ``-p`` names it owns;
* ``parameters``: the ``-p`` owners of the record and the problems of their parameters
  (reported together with the arms' ones, before any folder exists);
* ``preflight``: checks before any folder exists, after the grid, metric list and fused-row
  budget are settled (e.g. the configs answering reads are stored; a dead endpoint);
* ``after_score``: after the ``configs``, ``metrics`` and ``fused`` tables are written, on the
  run's engine: the stage adds its own tables (answering: ``reads``, ``answers`` ...);
* ``at_status``: just before the status is written (``complete``), what the stage adds to
  the manifest (nothing by default).

Edge cases: stages run in the order the options name them; an unknown stage name raises a
:class:`~rulegauge.core.errors.RegistryError` listing the known ones (a broken plug-in is
named), before any folder exists. A hook left out does nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rulegauge.core import plugins
from rulegauge.core.engines import EngineChoice
from rulegauge.core.errors import Problem
from rulegauge.core.registry import Registry, kind_check
from rulegauge.fusion.configs import FusionConfig, RunConfig

if TYPE_CHECKING:
    from rulegauge.pipeline.options import RunOptions

GROUP = "rulegauge.stages"


@dataclass(frozen=True)
class StageRequest:
    """What the command line asks of a stage: the values of its flags (``values``: e.g. every
    ``--answerer``; ``configs``: every ``--answer-config``) and every ``-p NAME.KEY=VALUE``."""

    values: tuple[str, ...]
    configs: tuple[str, ...] = ()
    params: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class StageParameters:
    """The ``-p`` names a stage's options own (e.g. answerer labels) and their problems."""

    owners: tuple[str, ...] = ()
    problems: tuple[Problem, ...] = ()


def _no_parameters(record: object) -> StageParameters:
    return StageParameters()


def _no_preflight(record: object, options: RunOptions, cfg: RunConfig, stored: list[FusionConfig]) -> None:
    return None


def _no_after_score(record: object, run_dir: Path, engine: EngineChoice) -> None:
    return None


def _no_status(record: object, run_dir: Path) -> dict[str, Any]:
    return {}


@dataclass(frozen=True)
class Stage:
    """A product's hooks into the run lifecycle (module docstring); ``record`` is the
    options record the stage's ``request`` made, passed back to each hook unchanged."""

    name: str
    description: str
    request: Callable[[StageRequest], tuple[object, frozenset[str]]]
    parameters: Callable[[object], StageParameters] = _no_parameters
    preflight: Callable[[object, RunOptions, RunConfig, list[FusionConfig]], None] = _no_preflight
    after_score: Callable[[object, Path, EngineChoice], None] = _no_after_score
    at_status: Callable[[object, Path], dict[str, Any]] = _no_status


STAGES: Registry[Stage] = Registry("stage", accepts=kind_check("a Stage", base=Stage))


def stage(name: str) -> Stage:
    """The stage ``name``; its plug-in group is loaded on the first miss (module docstring)."""
    if name not in STAGES:
        plugins.load(GROUP)
    return STAGES.get(name)


def requested(options: RunOptions) -> list[tuple[Stage, object]]:
    """The stages ``options`` names, each with its options record, in order."""
    return [(stage(name), record) for name, record in options.stages]


def parameter_checks(options: RunOptions) -> tuple[list[str], list[Problem]]:
    """(every ``-p`` owner of the run's stages, their parameter problems), in stage order."""
    owners: list[str] = []
    problems: list[Problem] = []
    for s, record in requested(options):
        found = s.parameters(record)
        owners += found.owners
        problems += found.problems
    return owners, problems
