"""Every registry of the harness in one listing (for ``harness list`` and docs)."""

from __future__ import annotations

import importlib

# (label, module, attribute); modules are imported on demand
REGISTRIES = (
    ("arms", "harness.arms", "ARMS"),
    ("fusion methods", "harness.fusion.method", "FUSION_METHODS"),
    ("metrics", "harness.metrics.info", "METRICS"),
    ("loaders", "harness.corpus.loaders", "LOADERS"),
    ("chunkers", "harness.corpus.chunking", "CHUNKERS"),
    ("embedding models", "harness.embedding.models", "EMBEDDING_MODELS"),
    ("embedding backends", "harness.embedding.backends", "BACKENDS"),
    ("answerers", "harness.answering.answerers.base", "ANSWERERS"),
    ("re-rankers", "harness.answering.rerankers", "RERANKERS"),
    ("floors", "harness.answering.read", "FLOORS"),
    ("tables", "harness.store.tables", "TABLES"),
    ("engines", "harness.core.engines", "ENGINES"),
)

_PLUGINS = ("harness.arms.bm25", "harness.arms.boost", "harness.arms.dense", "harness.arms.external", "harness.answering.rerankers",
            "harness.answering.read", "harness.rulings.production")


def load_plugins() -> None:
    """Import the modules that register built-in components."""
    from harness.answering.answerers import load_builtin_answerers  # deferred: plugin loading

    load_builtin_answerers()
    for mod in _PLUGINS:
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as exc:
            if exc.name != mod:
                raise


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
            continue
        out[label] = reg.names()
    from harness.metrics.family import OTHER_NAMES  # deferred: like the registries above

    names_seen = {a.name.lower(): f"{a.name}->{a.family}" for a in reversed(OTHER_NAMES)
                  if a.name.lower() != a.family.lower()}
    out["metric names of ranx / ir_measures / trec_eval (docs/metrics.md)"] = list(reversed(names_seen.values()))
    return out
