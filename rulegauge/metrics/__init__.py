"""Metrics: one metric object and registry, page lists built as metrics need them, statistics.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
