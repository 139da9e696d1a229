"""The ``tantivy`` arm: BM25 of the tantivy search engine (Rust; the ``tantivy`` Python
bindings, in the ``engines`` extra).

Definition: the chunks are indexed in a RAM index, one document per chunk, its text in one
field analysed by a text analyser built from the parameters: ``tokenizer`` (tantivy's
``simple``, the default, splits on non-alphanumerics; ``whitespace``; ``regex`` with
``pattern``), then ``lowercase``, ``remove_long`` (drop tokens longer than that many bytes,
tantivy's default 40; 0 keeps every token), ``ascii_fold`` and ``stemmer`` (a Snowball
language name such as ``english`` or ``russian``; none by default). A question is analysed
by the same analyser and searched as a boolean OR of term queries (each distinct token
once), so no question text is read as query syntax. Scores are tantivy's BM25 (Lucene's:
``k1 = 1.2``, ``b = 0.75``, idf ``ln(1 + (N - n + 0.5) / (n + 0.5))``, always positive, so a
term in most chunks still counts a little), summed over the matching terms.

Conventions: every matching chunk is collected with its score and ordered here (score
descending, chunk id ascending: :func:`rulegauge.arms.base.hits_from_scores`); the engine's
own order of tied documents never shows. A question whose tokens match nothing gets no hits.

Reference: tantivy ``query/bm25.rs``; Robertson & Zaragoza (2009).
"""

from __future__ import annotations

import importlib.metadata as md
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from rulegauge.arms.base import ARMS, ArmContext, hits_from_scores
from rulegauge.arms.results import ArmResult
from rulegauge.core.errors import ConfigError
from rulegauge.core.extras import needs
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question

TOKENIZERS = ("simple", "whitespace", "regex")
NO_TOKENS = "the question has no token after analysis"
NO_MATCH = "no chunk matches the question's tokens"
HEAP = 50_000_000  # writer memory budget (bytes); one thread, so one segment in chunk order


def _tantivy() -> Any:
    with needs(TantivyArm.extra, "the tantivy arm"):
        import tantivy  # deferred: optional engine (the `engines` extra)
    return tantivy


@ARMS.register("tantivy")
class TantivyArm:
    """tantivy BM25. Params: tokenizer, pattern, lowercase, remove_long, ascii_fold, stemmer."""

    name: ClassVar[str] = "tantivy"
    extra: ClassVar[str] = "engines"

    def __init__(self, tokenizer: str = "simple", pattern: str | None = None, *, lowercase: bool = True,
                 remove_long: int = 40, ascii_fold: bool = False, stemmer: str | None = None) -> None:
        if tokenizer not in TOKENIZERS:
            raise ConfigError(f"tantivy: tokenizer must be one of {', '.join(TOKENIZERS)}, got {tokenizer!r}")
        if (tokenizer == "regex") != (pattern is not None):
            raise ConfigError("tantivy: give pattern exactly when tokenizer = \"regex\"")
        if not isinstance(remove_long, int) or isinstance(remove_long, bool) or remove_long < 0:
            raise ConfigError(f"tantivy: remove_long must be an integer >= 0, got {remove_long!r}")
        self.tokenizer, self.pattern, self.lowercase = tokenizer, pattern, lowercase
        self.remove_long, self.ascii_fold, self.stemmer = remove_long, ascii_fold, stemmer
        self._analyzer = self._build_analyzer()  # a bad stemmer or pattern fails here
        self._index: Any = None
        self._ids: list[str] = []

    def _build_analyzer(self) -> Any:
        t = _tantivy()
        base = {"simple": t.Tokenizer.simple, "whitespace": t.Tokenizer.whitespace}
        try:
            tok = t.Tokenizer.regex(self.pattern) if self.tokenizer == "regex" else base[self.tokenizer]()
            b = t.TextAnalyzerBuilder(tok)
            if self.remove_long:
                b = b.filter(t.Filter.remove_long(self.remove_long))
            if self.lowercase:
                b = b.filter(t.Filter.lowercase())
            if self.ascii_fold:
                b = b.filter(t.Filter.ascii_fold())
            if self.stemmer is not None:
                b = b.filter(t.Filter.stemmer(self.stemmer))
            return b.build()
        except ValueError as exc:
            raise ConfigError(f"tantivy: cannot build the analyser: {exc}") from None

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        t = _tantivy()
        sb = t.SchemaBuilder()
        sb.add_integer_field("ord", stored=False, fast=True)  # position in corpus order
        sb.add_text_field("body", stored=False, tokenizer_name="rulegauge")
        schema = sb.build()
        index = t.Index(schema)
        index.register_tokenizer("rulegauge", self._analyzer)
        writer = index.writer(HEAP, 1)
        for i, c in enumerate(corpus.chunks):
            writer.add_document(t.Document(ord=i, body=c.search_text))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        self._index, self._schema = index, schema
        self._ids = [c.chunk_id for c in corpus.chunks]

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        if self._index is None:
            raise RuntimeError("tantivy arm: prepare() must run before search()")
        t = _tantivy()
        searcher = self._index.searcher()
        n = max(searcher.num_docs, 1)
        out = []
        for q in questions:
            tokens = list(dict.fromkeys(self._analyzer.analyze(q.question)))
            if not tokens:
                out.append(ArmResult(q.question_id, self.name, (), NO_TOKENS))
                continue
            query = t.Query.boolean_query([(t.Occur.Should, t.Query.term_query(self._schema, "body", tok))
                                           for tok in tokens])
            found = searcher.search(query, n, count=False).hits  # every match: ties ordered here
            ords = searcher.fast_field_values("ord", [addr for _, addr in found])
            hits = hits_from_scores([self._ids[i] for i in ords], np.array([s for s, _ in found], dtype=np.float64),
                                    depth)
            out.append(ArmResult(q.question_id, self.name, hits, None if hits else NO_MATCH))
        return out

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "engine": "tantivy", "package": "tantivy", "version": md.version("tantivy"),
                "ranking": "BM25 (k1 = 1.2, b = 0.75, fixed by tantivy)", "tokenizer": self.tokenizer,
                "pattern": self.pattern, "lowercase": self.lowercase, "remove_long": self.remove_long,
                "ascii_fold": self.ascii_fold, "stemmer": self.stemmer}
