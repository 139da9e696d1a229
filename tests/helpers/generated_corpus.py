"""A generated multi-game corpus and questions for the lexical arms (seeded).

Words are drawn from a Zipf-like distribution over a made-up vocabulary, so some
terms are in most chunks (idf <= 0, floored), many are rare, and scores tie often
enough to exercise the chunk-id tie rule. Each game has a rulebook, an errata and an
FAQ; a few chunks are empty and a few duplicate another chunk's text.
"""

from __future__ import annotations

import numpy as np

from rulegauge.corpus.records import Chunk, Corpus, Document, Page, chunk_key, make_corpus
from rulegauge.goldset.records import Question

_SYLLABLES = ("ka", "lo", "mi", "ten", "ra", "vu", "so", "ber", "an", "ti", "gor", "el", "ul", "pri")
KINDS = ("rulebook", "errata", "faq")


def vocabulary(rng: np.random.Generator, size: int) -> list[str]:
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        w = "".join(rng.choice(_SYLLABLES, size=int(rng.integers(1, 5))))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def generated_corpus(seed: int, n_chunks: int, n_games: int = 3, vocab_size: int = 3000,
                     chunk_len: tuple[int, int] = (20, 120)) -> tuple[Corpus, list[str]]:
    """(corpus, vocabulary); documents per game: rulebook, errata, faq; 4 chunks a page."""
    rng = np.random.default_rng(seed)
    vocab = vocabulary(rng, vocab_size)
    p = 1.0 / np.arange(1, vocab_size + 1) ** 1.1
    p /= p.sum()
    docs = [Document(f"g{g}-{kind}", kind, f"G{g}", "en-1", "en", f"{kind} {g}")
            for g in range(n_games) for kind in KINDS]
    weights = np.array([6.0 if d.kind == "rulebook" else 1.0 for d in docs])
    owner = rng.choice(len(docs), size=n_chunks, p=weights / weights.sum())
    lengths = rng.integers(*chunk_len, size=n_chunks)
    words = rng.choice(vocab_size, size=int(lengths.sum()), p=p)  # one draw for the corpus
    starts = np.r_[0, np.cumsum(lengths)]
    slot: dict[int, int] = {}
    chunks, pages, texts = [], {}, []
    for i in range(n_chunks):
        d = docs[int(owner[i])]
        s = slot.get(int(owner[i]), 0)
        slot[int(owner[i])] = s + 1
        page, part = s // 4 + 1, s % 4
        if i % 97 == 13:
            text = ""
        elif i % 89 == 7 and texts:
            text = texts[int(rng.integers(0, len(texts)))]
        else:
            text = " ".join(vocab[j] for j in words[starts[i]:starts[i + 1]])
        texts.append(text)
        chunks.append(Chunk(chunk_key(d.doc_id, page, part), d.doc_id, page, ("H",), text, 0, len(text)))
        pages[(d.doc_id, page)] = Page(d.doc_id, page, text)
    return make_corpus(docs, pages.values(), chunks), vocab


def generated_questions(seed: int, vocab: list[str], n: int, games: int = 3,
                        with_game: bool = True) -> list[Question]:
    """Questions of 3-12 words (repeats allowed, some out-of-vocabulary words)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 0.8
    p /= p.sum()
    lengths = rng.integers(3, 13, size=n)
    drawn = rng.choice(len(vocab), size=int(lengths.sum()), p=p)
    starts = np.r_[0, np.cumsum(lengths)]
    out = []
    for i in range(n):
        words = [vocab[j] for j in drawn[starts[i]:starts[i + 1]]]
        if i % 11 == 5:
            words.append("zzqx")  # not in the corpus
        game = f"G{i % games}" if with_game else None
        out.append(Question(f"q{i:05d}", " ".join(words), "en", (), game=game))
    return out
