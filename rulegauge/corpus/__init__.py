"""Documents to pages to chunks: loading, structure, cleaning, chunking, the ingest report.

Its modules: docs/design.md's module map (generated from their docstrings).
"""
