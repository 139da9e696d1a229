"""Rank fusion: the grid file of configs, the fusion methods and the vectorised kernel.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
