"""Texts the embedding tests' session-wide fp32 reference covers (tests/embedding/conftest.py)."""

from __future__ import annotations

SHORT_TEXTS = ["How many cards does each player draw?", "The wizard casts fire bolt at the goblin: 2d10 fire damage.",
               "Ход переходит к игроку слева.", "", "a"]
"""Short texts of several scripts, an empty one and one letter (the ONNX fp32 parity check)."""
