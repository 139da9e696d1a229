"""The retrieval pipeline: `rulegauge run` and its scoring path.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
