"""Exceptions raised by rulegauge.

Every input problem is a real exception carrying enough context (file, line,
question id) for a user to fix it; validation collects *all* problems before
raising, so one run shows every mistake at once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


class RulegaugeError(Exception):
    """Base class for every error rulegauge raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One validation finding: where it is and what is wrong.

    ``where`` names the file (and line or question id when known), e.g.
    ``goldsets/sample.yaml: question q-07``.
    """

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


class ValidationError(RulegaugeError):
    """Raised with every problem found, never just the first one."""

    def __init__(self, problems: Iterable[Problem], summary: str = "validation failed") -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        self.summary = summary
        lines = [f"{summary} ({len(self.problems)} problem(s)):"]
        lines += [f"  - {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class RegistryError(RulegaugeError, KeyError):
    """Unknown or duplicate name in a registry; the message lists the valid names."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class ProvenanceError(RulegaugeError):
    """A run's manifest does not match the files it claims to describe."""


class ConfigError(RulegaugeError):
    """A configuration file (fusion grid, gate policy, answerer settings) is malformed."""
