"""Shared foundations every stage may use; imports nothing else of rulegauge.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
