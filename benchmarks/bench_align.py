"""Validation: the ``embedding`` page aligner's match threshold, on real parallel rules.

Not a speed benchmark: it checks :data:`rulegauge.embedding.page_align.MARGIN` on text
nobody wrote for rulegauge. ``../shared/corpora/aisleriot`` holds the rules of 90 solitaire
games in English, German, French, Spanish and Russian, one game per page, the same order in
every language. For the first ``--pages`` games, every English unit (sentences, short
fragments joined: ``page_align.units``) is matched against the units of each translation;
printed per language and per threshold, for the ratio margin the aligner uses and, beside it,
a plain cosine: the mutual-nearest matches at or above it, how many lie on the wrong page (the
true page is the same game), and the share of English units matched. Then each translation
is restructured (pages reversed in blocks of 5, two pairs merged, one page split in two) and
aligned with ``EmbeddingAligner.realign``: printed, the old pages aligned whole to their true
new page, split across their true pages, flagged (their labels held for review), and aligned
whole to a wrong page (the number that must be 0).

Run: .venv/bin/python benchmarks/bench_align.py [--pages 30] [--langs de,fr,es,ru] [--shared ../shared]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from machine import machine_line

from rulegauge.embedding.page_align import MARGIN, EmbeddingAligner, margins, mutual_matches, units

SHARED = Path(__file__).resolve().parents[2] / "shared"
THRESHOLDS = {"margin": (1.0, 1.01, 1.02, 1.03, 1.04, 1.05), "cosine": (0.83, 0.85, 0.87, 0.89, 0.91)}


def pages(shared: Path, lang: str, n: int) -> list[str]:
    return (shared / "corpora" / "aisleriot" / f"aisleriot-{lang}.txt").read_text(encoding="utf-8").split("\f")[:n]


def restructure(texts: list[str]) -> tuple[list[str], dict[int, set[int]]]:
    """New pages from ``texts``: blocks of 5 reversed, pages 3+4 and 11+12 merged, page 8 split
    in two halves; returns the pages and, per old page, the new pages holding it (1-based)."""
    order = [i for s in range(0, len(texts), 5) for i in reversed(range(s, min(s + 5, len(texts))))]
    new: list[str] = []
    where: dict[int, set[int]] = {}
    merged = {3: 4, 11: 12}  # 1-based: the first page is merged with the second
    skip = set(merged.values())
    for i in order:
        page = i + 1
        if page in skip:
            continue
        if page in merged:
            new.append(texts[i] + "\n" + texts[merged[page] - 1])
            where[page] = where[merged[page]] = {len(new)}
        elif page == 8:
            lines = texts[i].splitlines()
            half = len(lines) // 2
            new.extend(["\n".join(lines[:half]), "\n".join(lines[half:])])
            where[page] = {len(new) - 1, len(new)}
        else:
            new.append(texts[i])
            where[page] = {len(new)}
    return new, where


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=30)
    p.add_argument("--langs", default="de,fr,es,ru")
    p.add_argument("--shared", type=Path, default=SHARED, help="the shared folder (default ../shared)")
    args = p.parse_args()
    print("start:", machine_line())
    aligner = EmbeddingAligner()
    en = pages(args.shared, "en", args.pages)
    eu = units(en)
    ev = aligner.vectors([u.text for u in eu])
    print(f"English: {args.pages} pages, {len(eu)} units; model {aligner._model.model_id if aligner._model else '-'}")
    for lang in args.langs.split(","):
        tr = pages(args.shared, lang, args.pages)
        tu = units(tr)
        sim = ev @ aligner.vectors([u.text for u in tu]).T
        for kind, score in (("margin", margins(sim)), ("cosine", sim)):
            row = []
            for t in THRESHOLDS[kind]:
                m = mutual_matches(score, t)
                wrong = sum(eu[u].page != tu[v].page for u, v in m.items())
                row.append(f"{t:.2f}: {len(m)} ({len(m) / len(eu):.0%}) {wrong} wrong")
            print(f"{lang} {kind}: {len(tu)} units | " + " | ".join(row))
        new, where = restructure(tr)
        got = aligner.realign(en, new).alignment
        right, split, flagged, wrong = 0, 0, 0, []
        for pa in got.pages:
            truth = where[pa.old_page]
            if pa.kind in ("kept", "moved"):  # a label there is carried to pa.whole[0]
                if pa.whole[0] in truth:
                    right += 1
                else:
                    wrong.append((pa.old_page, pa.whole[0], sorted(truth)))
            elif pa.kind == "split" and {j for j, _ in pa.parts} <= truth:
                split += 1
            else:  # removed, changed, duplicated, or split elsewhere: its labels are flagged
                flagged += 1
        print(f"  restructured ({len(new)} pages) at margin {MARGIN}: {right} pages aligned whole to "
              f"their page, {split} split across their true pages, {flagged} flagged (labels held "
              f"for review), {len(wrong)} aligned whole to a wrong page {wrong}")
    print("end:  ", machine_line())


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
