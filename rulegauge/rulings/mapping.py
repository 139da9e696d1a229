"""The optional mapping file from production names to gold-set names.

Format (YAML)::

    rulings_mapping: 1
    games:                        # production (game, edition) -> gold (game, edition)
      - production: {game: "Archaeology: The New Expedition", edition: bg-191300-en-1e}
        gold: {game: "Archaeology: The New Expedition", edition: en-1}
    documents:                    # production doc id -> gold doc id
      "1071": arch-rules
      "1072": {doc_id: arch-errata, page_offset: 0}
    questions:                    # ruling id -> gold question id (overrides text matching)
      ruling-archaeology-how-to-play: arch-01

Every section is optional. ``page_offset`` is added to production's page to get
the gold set's physical page (default 0: production prints physical pages).
All problems are reported together with the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rulegauge.core.errors import Problem, ValidationError

FORMAT_VERSION = 1


@dataclass(frozen=True)
class DocTarget:
    doc_id: str
    page_offset: int = 0


@dataclass(frozen=True)
class Mapping:
    """Parsed mapping; empty by default (match by names only)."""

    games: tuple[tuple[tuple[str, str | None], tuple[str, str | None]], ...] = ()
    documents: dict[str, DocTarget] = field(default_factory=dict, hash=False)
    questions: dict[str, str] = field(default_factory=dict, hash=False)
    path: str | None = None

    def gold_game(self, game: str | None, edition: str | None) -> tuple[str | None, str | None]:
        """The gold (game, edition) for a production pair (unchanged when unmapped)."""
        for (pg, pe), gold in self.games:
            if pg == game and (pe is None or pe == edition):
                return gold
        return game, edition


def _pair(value: Any, where: str, problems: list[Problem], what: str
          ) -> tuple[str, str | None] | None:
    if not isinstance(value, dict) or not isinstance(value.get("game"), str):
        problems.append(Problem(where, f"{what} must be a mapping with a 'game' string"))
        return None
    edition = value.get("edition")
    if edition is not None and not isinstance(edition, str):
        problems.append(Problem(where, f"{what}: 'edition' must be a string"))
        return None
    return value["game"], edition


def load_mapping(path: str | Path) -> Mapping:
    """Load and validate a mapping file (see the module docstring)."""
    p = Path(path)
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValidationError([Problem(str(p), f"cannot read: {exc.strerror or exc}")]) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{p}:{mark.line + 1}" if mark is not None else str(p)
        raise ValidationError([Problem(where, f"not valid YAML: {exc}")]) from None
    problems: list[Problem] = []
    if not isinstance(raw, dict):
        raise ValidationError([Problem(str(p), "the top level must be a mapping")])
    if raw.get("rulings_mapping") != FORMAT_VERSION:
        problems.append(Problem(str(p), f"'rulings_mapping: {FORMAT_VERSION}' is required"))
    unknown = sorted(set(raw) - {"rulings_mapping", "games", "documents", "questions"})
    if unknown:
        problems.append(Problem(str(p), f"unknown section(s) {', '.join(unknown)}; known: "
                                "games, documents, questions"))
    shapes = (("games", list), ("documents", dict), ("questions", dict))
    for name, kind in shapes:
        if raw.get(name) is not None and not isinstance(raw[name], kind):
            problems.append(Problem(str(p), f"'{name}' must be a {kind.__name__}"))
            raw[name] = None
    games = []
    for i, g in enumerate(raw.get("games") or []):
        where = f"{p}: games[{i}]"
        entry = g if isinstance(g, dict) else {}
        prod = _pair(entry.get("production"), where, problems, "production")
        gold = _pair(entry.get("gold"), where, problems, "gold")
        if prod and gold:
            games.append((prod, gold))
    docs: dict[str, DocTarget] = {}
    for key, target in (raw.get("documents") or {}).items():
        where = f"{p}: documents[{key}]"
        if isinstance(target, str):
            docs[str(key)] = DocTarget(target)
        elif isinstance(target, dict) and isinstance(target.get("doc_id"), str) and isinstance(
                target.get("page_offset", 0), int):
            docs[str(key)] = DocTarget(target["doc_id"], int(target.get("page_offset", 0)))
        else:
            problems.append(Problem(where, "expected a gold doc id or {doc_id, page_offset}"))
    questions: dict[str, str] = {}
    for key, qid in (raw.get("questions") or {}).items():
        if not isinstance(qid, str):
            problems.append(Problem(f"{p}: questions[{key}]", "expected a gold question id"))
        else:
            questions[str(key)] = qid
    if problems:
        raise ValidationError(problems, summary=f"{p}: invalid rulings mapping")
    return Mapping(tuple(games), docs, questions, str(p))
