"""Sentence-embedding models that ship in PyPI packages, their conversion and on-disk cache.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
