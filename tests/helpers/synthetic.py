"""Synthetic arm ranks over synthetic pages (seeded)."""

import numpy as np
import pandas as pd

from tests.helpers.common import q


def synthetic(seed: int, n_q: int = 40, n_pages: int = 30, chunks_per_page: int = 2):
    rng = np.random.default_rng(seed)
    chunk_pages = {f"d#p{p:04d}.c{c:03d}": ("d", p) for p in range(1, n_pages + 1)
                   for c in range(chunks_per_page)}
    chunk_ids = sorted(chunk_pages)
    rows, questions = [], []
    for i in range(n_q):
        qid = f"q{i:03d}"
        rel = rng.choice(np.arange(1, n_pages + 1), size=rng.integers(1, 4), replace=False)
        questions.append(q(qid, "x", *[(f"d#{p}",) for p in sorted(rel)]))
        for arm in ("a", "b", "c"):
            depth = int(rng.integers(5, len(chunk_ids)))
            for r, cid in enumerate(rng.permutation(chunk_ids)[:depth], start=1):
                rows.append((qid, arm, cid, r))
    ar = pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank"])
    return questions, ar, chunk_pages




def with_judgments(questions, seed: int, n_pages: int = 30, per_question: int = 6):
    """The same questions with seeded explicit judgments: mostly judged non-relevant
    (grade 0), some judged relevant (grade 1-3) beyond the requirement pages."""
    from dataclasses import replace

    from rulegauge.goldset.records import PageJudgment

    rng = np.random.default_rng(seed + 1000)
    out = []
    for x in questions:
        listed = {r.page for req in x.requirements for r in req}
        free = [p for p in range(1, n_pages + 1) if p not in listed]
        pages = rng.choice(free, size=min(per_question, len(free)), replace=False)
        grades = rng.choice([0, 0, 0, 1, 2, 3], size=len(pages))
        out.append(replace(x, judged=tuple(PageJudgment("d", int(p), int(g), "human", "alice")
                                           for p, g in zip(pages, grades, strict=True))))
    return out
