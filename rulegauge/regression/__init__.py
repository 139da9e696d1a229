"""Regression testing of runs: statistics, comparison, change rules, policy, gate, reports.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
