"""Every registry of rulegauge in one listing (for ``rulegauge list`` and docs)."""

from __future__ import annotations

import importlib

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


def broken_plugins() -> list[str]:
    """One line per plug-in that failed to load (by name, package and error)."""
    from rulegauge.core import plugins  # deferred: like load_plugins

    load_plugins()
    return [str(b) for b in plugins.broken()]
