"""Formats of other IR tools: TREC run files and qrels, in and out.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
