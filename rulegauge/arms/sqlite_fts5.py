"""The ``sqlite-fts5`` arm: SQLite's FTS5 full-text index, ranked by its ``bm25()``.

Definition: every chunk text goes into an in-memory FTS5 table (the standard library's
``sqlite3``; no extra package) with the tokenizer given by ``tokenize`` (FTS5's own
syntax: ``"unicode61 remove_diacritics 2"``, the default, ``"porter unicode61"`` for
English stemming, ``"trigram"``). A question becomes an FTS5 query of its word tokens
(``\\w+``, each quoted, so no question text is read as FTS5 syntax), joined by ``OR``
(``match = "any"``, the default) or ``AND`` (``"all"``). The score of a chunk is
``-bm25(chunks)``: FTS5's Okapi BM25 with its fixed ``k1 = 1.2`` and ``b = 0.75`` and its
idf ``ln((N - n + 0.5) / (n + 0.5))`` floored at 1e-6 (sqlite ``ext/fts5/fts5_aux.c``), so
unlike the built-in ``bm25`` arm a term in more than half of the chunks counts almost
nothing rather than a fraction of the mean idf.

Conventions: every matching chunk is read back with its score and ordered here, score
descending then chunk id ascending (:func:`rulegauge.arms.base.hits_from_scores`), so ties
never depend on the engine's row order. A question without word tokens, or whose tokens
match nothing, gets no hits and says why.

Reference: SQLite FTS5 documentation, section "The bm25() function"; Robertson & Zaragoza
(2009), "The Probabilistic Relevance Framework: BM25 and Beyond".
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from rulegauge.arms.base import ARMS, ArmContext, hits_from_scores
from rulegauge.arms.results import ArmResult
from rulegauge.core.errors import ConfigError
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question

MATCHES = {"any": " OR ", "all": " AND "}
NO_TOKENS = "the question has no word token"
NO_MATCH = "no chunk matches the question's tokens"
_WORD = re.compile(r"\w+")


def fts5_query(text: str, match: str = "any") -> str:
    """The FTS5 query of ``text``: its ``\\w+`` tokens, each a quoted string, joined by
    ``OR`` or ``AND``; ``""`` when there is none. Repeated tokens are kept once."""
    tokens = list(dict.fromkeys(_WORD.findall(text)))
    return MATCHES[match].join(f'"{t}"' for t in tokens)


@ARMS.register("sqlite-fts5")
class SqliteFts5Arm:
    """SQLite FTS5 ``bm25()``. Params: tokenize (FTS5 tokenizer spec), match (any / all)."""

    name: ClassVar[str] = "sqlite-fts5"

    def __init__(self, tokenize: str = "unicode61 remove_diacritics 2", match: str = "any") -> None:
        if match not in MATCHES:
            raise ConfigError(f"sqlite-fts5: match must be one of {', '.join(MATCHES)}, got {match!r}")
        if not isinstance(tokenize, str) or not tokenize.strip() or "'" in tokenize:
            raise ConfigError(f"sqlite-fts5: tokenize must be an FTS5 tokenizer spec, got {tokenize!r}")
        self.tokenize, self.match = tokenize, match
        self._db: sqlite3.Connection | None = None
        self._check_tokenizer()

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:")
        try:
            db.execute(f"CREATE VIRTUAL TABLE chunks USING fts5(chunk_id UNINDEXED, body, "
                       f"tokenize = '{self.tokenize}')")
        except sqlite3.OperationalError as exc:  # no FTS5 in this SQLite, or a bad tokenizer
            db.close()
            raise ConfigError(f"sqlite-fts5: SQLite {sqlite3.sqlite_version} cannot make an FTS5 "
                              f"table with tokenize = {self.tokenize!r}: {exc}") from None
        return db

    def _check_tokenizer(self) -> None:
        self._connect().close()

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        self.close()
        db = self._connect()
        with db:
            db.executemany("INSERT INTO chunks (chunk_id, body) VALUES (?, ?)",
                           [(c.chunk_id, c.search_text) for c in corpus.chunks])
        self._db = db

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        if self._db is None:
            raise RuntimeError("sqlite-fts5 arm: prepare() must run before search()")
        out = []
        for q in questions:
            query = fts5_query(q.question, self.match)
            if not query:
                out.append(ArmResult(q.question_id, self.name, (), NO_TOKENS))
                continue
            rows = self._db.execute("SELECT chunk_id, -bm25(chunks) FROM chunks WHERE chunks MATCH ?",
                                    (query,)).fetchall()
            hits = hits_from_scores([r[0] for r in rows], np.array([r[1] for r in rows], dtype=np.float64), depth)
            out.append(ArmResult(q.question_id, self.name, hits, None if hits else NO_MATCH))
        return out

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "engine": "sqlite fts5", "version": sqlite3.sqlite_version,
                "ranking": "-bm25() (k1 = 1.2, b = 0.75, fixed by FTS5)",
                "tokenize": self.tokenize, "match": self.match}
