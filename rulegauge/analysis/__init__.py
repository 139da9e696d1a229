"""Reading one run: summary, per-language table, score bands, the HTML report, tuning.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
