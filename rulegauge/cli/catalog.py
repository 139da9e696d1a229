"""Every registry of rulegauge in one listing (for ``rulegauge list`` and docs)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass

# (label, module, attribute); modules are imported on demand
REGISTRIES = (
    ("arms", "rulegauge.arms", "ARMS"),
    ("fusion methods", "rulegauge.fusion.method", "FUSION_METHODS"),
    ("metrics", "rulegauge.metrics.info", "METRICS"),
    ("loaders", "rulegauge.corpus.loaders", "LOADERS"),
    ("chunkers", "rulegauge.corpus.chunking", "CHUNKERS"),
    ("embedding models", "rulegauge.embedding.models", "EMBEDDING_MODELS"),
    ("embedding backends", "rulegauge.embedding.backends", "BACKENDS"),
    ("answerers", "rulegauge.answering.answerers.base", "ANSWERERS"),
    ("re-rankers", "rulegauge.answering.rerankers", "RERANKERS"),
    ("floors", "rulegauge.answering.read", "FLOORS"),
    ("tables", "rulegauge.store.tables", "TABLES"),
    ("engines", "rulegauge.core.engines", "ENGINES"),
)

def load_plugins() -> None:
    """Register every built-in component and every installed plug-in (rulegauge.core.plugins)."""
    from rulegauge.core import plugins  # deferred: plugin loading imports the registering modules

    plugins.load_all()


def all_registries() -> dict[str, list[str]]:
    load_plugins()
    out: dict[str, list[str]] = {}
    for label, mod, attr in REGISTRIES:
        try:
            reg = getattr(importlib.import_module(mod), attr)
        except (ModuleNotFoundError, AttributeError):
            continue
        if label == "metrics":  # one registry: listed by kind
            out[label] = [f.label for _, f in reg.items() if f.kind != "answer"]
            out["answer metrics"] = [f.label for _, f in reg.items() if f.kind == "answer"]
            out["condensed-list variants, e.g. nDCG(judged_only=True)@10 (docs/metrics.md)"] = [
                f"{f.name}(judged_only=True)@k" for _, f in reg.items() if f.condensable]
            continue
        out[label] = reg.names()
    from rulegauge.metrics.family import OTHER_NAMES  # deferred: like the registries above

    names_seen = {a.name.lower(): f"{a.name}->{a.family}" for a in reversed(OTHER_NAMES)
                  if a.name.lower() != a.family.lower()}
    out["metric names of ranx / ir_measures / trec_eval (docs/metrics.md)"] = list(reversed(names_seen.values()))
    return out


def plugin_origins() -> dict[str, dict[str, str]]:
    """Registry label -> {name: ``builtin`` or ``package==version``} for the plug-in groups."""
    from rulegauge.core import plugins  # deferred: like load_plugins

    return {g.label: plugins.origins(group) for group, g in plugins.GROUPS.items()}


def origin_summary(label: str, origins: dict[str, dict[str, str]]) -> str:
    """``builtin``, or ``builtin; NAME: package==version, ...`` for what packages added."""
    found = origins.get("metrics" if label == "answer metrics" else label, {})
    added = [f"{n}: {o}" for n, o in found.items() if o != "builtin"]
    return "; ".join(["builtin", *added]) if label != "answer metrics" else "builtin"


# registries whose components `rulegauge list` shows one per row, with origin and extra
COMPONENT_REGISTRIES = ("arms", "fusion methods", "answerers", "engines", "embedding models", "embedding backends")


@dataclass(frozen=True)
class Component:
    """One registered component as ``rulegauge list`` shows it: ``origin`` is ``builtin`` or the
    ``package==version`` that added it (:func:`rulegauge.core.plugins.origin`); ``extra`` the
    optional dependency group it declares on itself (its ``extra`` attribute), None for none."""

    registry: str
    name: str
    origin: str
    extra: str | None

    @property
    def install(self) -> str:
        """``pip install 'rulegauge[EXTRA]'``, or ``""`` for a component of the core."""
        from rulegauge.core.extras import install_command  # deferred: like the registries

        return install_command(self.extra) if self.extra else ""


def components() -> list[Component]:
    """Every component of :data:`COMPONENT_REGISTRIES`, in registry then registration order."""
    from rulegauge.core import plugins  # deferred: like load_plugins

    load_plugins()
    groups = {g.label: group for group, g in plugins.GROUPS.items()}
    out: list[Component] = []
    for label, mod, attr in REGISTRIES:
        if label not in COMPONENT_REGISTRIES:
            continue
        try:
            reg = getattr(importlib.import_module(mod), attr)
        except (ModuleNotFoundError, AttributeError):
            continue
        group = groups.get(label)
        for name, obj in reg.items():
            extra = getattr(obj, "extra", None)
            out.append(Component(label, name, plugins.origin(group, name) if group else "builtin",
                                 extra if isinstance(extra, str) else None))
    return out


def broken_plugins() -> list[str]:
    """One line per plug-in that failed to load (by name, package and error)."""
    from rulegauge.core import plugins  # deferred: like load_plugins

    load_plugins()
    return [str(b) for b in plugins.broken()]
