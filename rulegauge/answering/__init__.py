"""The answering read and the answerers: read, re-rank, answer, cite, fence, score.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
