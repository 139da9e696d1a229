"""Gold sets: the v1 records, the YAML parser and writer, and sets derived from structure.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
