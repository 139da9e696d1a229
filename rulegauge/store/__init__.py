"""The run store: table declarations and schemas, run directories, provenance, baselines, SQL.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
