"""The run store: table declarations and schemas, run directories, provenance, baselines, SQL.

Its modules: docs/design.md's module map (generated from their docstrings).
"""

# the kernel's tables are registered with the package, before any module of it is used: a
# lookup by name then never has to import their declarations (store.schema, which holds the
# registry, would otherwise import store.tables, which declares into it: a circle)
import rulegauge.store.tables  # noqa: F401
