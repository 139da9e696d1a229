"""A judging session: one pool, one judgments file, any number of judges at once.

Every judge works through the whole pool in the session's order: by default blind, a
seeded random order with no config, arm or rank shown (:mod:`rulegauge.judging.blind`);
unblinded, pool order (question by question, best rank first). Each judgment records the
view and the seed. A judgment is appended to the judgments file the moment it is made
(:func:`rulegauge.goldset.judgments.append_judgment`: one line, one write, fsync), so
a session stopped at any point resumes where each judge left off: the file is read
back when the session opens, and its judgments count as done. *Skip* sets an item
aside for this judge; skipped items come back once nothing else is left (skips are
not saved: a skip is no judgment). One judge judging one pair twice is refused.

The file must hold only pairs of this pool, judged against the pool's gold set (its
``goldset_sha256``): anything else is reported with ``file:line`` before serving.
Judgments of an LLM judge in the file (``judge_kind: llm``, e.g. a pre-judged pool)
count as that judge's, so people see their agreement with it; LLM judges are listed as
such (``llm_judges``) and marked ``[llm]`` on the page. Agreement between judges
(:func:`Session.agreement`) uses the pairs at least two judges judged: Cohen's kappa
for each pair of judges, Fleiss' kappa over all, and the disagreements (pairs with
more than one grade), listed by question and page.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import statistics
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.corpus.records import split_page_key
from rulegauge.goldset.judgments import Judgment, append_judgment, read_judgments
from rulegauge.goldset.records import GRADES, PageJudgment
from rulegauge.judging import agreement
from rulegauge.judging.blind import BLIND, View, ordered
from rulegauge.judging.poolfile import Pool, PoolPage

JUDGE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$")


class JudgingError(RulegaugeError):
    """A request the session refuses (unknown judge id, pair, grade; a second judgment)."""


@dataclass(frozen=True)
class Progress:
    judge: str
    done: int
    total: int
    skipped: int
    mean_seconds: float | None
    median_seconds: float | None


class Session:
    """Thread-safe state of one judging session (module docstring)."""

    def __init__(self, pool: Pool, judgments_path: Path, *, pool_path: str = "pool",
                 view: View = BLIND) -> None:
        self.pool, self.path, self.view = pool, Path(judgments_path), view
        self.items: list[PoolPage] = ordered(pool.pages, view)
        self.index = {(p.question_id, p.page): i for i, p in enumerate(self.items)}
        self.questions = {q.question_id: q for q in pool.questions}
        self._lock = threading.Lock()
        self.done: dict[str, dict[tuple[str, str], Judgment]] = {}
        self.skipped: dict[str, set[tuple[str, str]]] = {}
        problems = []
        for j in read_judgments(self.path, missing_ok=True):
            if j.pair not in self.index:
                problems.append(Problem(j.where, f"question {j.question_id}: {j.page} is not in "
                                        f"the pool {pool_path}"))
            elif j.goldset_sha256 and j.goldset_sha256 != pool.goldset_sha256:
                problems.append(Problem(j.where, "judged against another gold set than the "
                                        f"pool's ({pool.goldset_path})"))
            else:
                self.done.setdefault(j.judgment.judge_id, {})[j.pair] = j
        if problems:
            raise ValidationError(problems, f"{self.path}: judgments of another pool")

    @staticmethod
    def check_judge(judge: str) -> str:
        if not isinstance(judge, str) or not JUDGE_ID.match(judge):
            raise JudgingError(f"judge id {judge!r}: letters, digits and . _ @ + - only, "
                               "starting with a letter or digit")
        return judge

    def next_item(self, judge: str) -> int | None:
        """Index of the judge's next item: the first not judged and not skipped, else
        the first skipped (its skip is then forgotten); None when all are judged."""
        self.check_judge(judge)
        with self._lock:
            done, skipped = self.done.get(judge, {}), self.skipped.setdefault(judge, set())
            for i, p in enumerate(self.items):
                if (p.question_id, p.page) not in done and (p.question_id, p.page) not in skipped:
                    return i
            for i, p in enumerate(self.items):
                if (p.question_id, p.page) in skipped:
                    skipped.discard((p.question_id, p.page))
                    return i
        return None

    def _pair(self, question_id: str, page: str) -> tuple[str, str]:
        pair = (question_id, page)
        if pair not in self.index:
            raise JudgingError(f"question {question_id!r}, page {page!r} is not in this pool")
        return pair

    def record(self, judge: str, question_id: str, page: str, grade: object, *,
               note: str = "", seconds: float | None = None) -> Judgment:
        """Judge one pair; appended to the judgments file before this returns."""
        self.check_judge(judge)
        pair = self._pair(question_id, page)
        if not isinstance(grade, int) or isinstance(grade, bool) or grade not in GRADES:
            raise JudgingError(f"grade must be 0, 1, 2 or 3, got {grade!r}")
        doc, number = split_page_key(page)
        when = dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
        j = Judgment(question_id, PageJudgment(doc, number, grade, "human", judge, when,
                                               str(note or "").strip()),
                     None if seconds is None else round(max(float(seconds), 0.0), 3),
                     self.pool.goldset_sha256, self.view.name, self.view.order_seed)
        with self._lock:
            if pair in self.done.get(judge, {}):
                raise JudgingError(f"{judge} already judged {page} for {question_id}")
            append_judgment(self.path, j)
            self.done.setdefault(judge, {})[pair] = j
            self.skipped.setdefault(judge, set()).discard(pair)
        return j

    def skip(self, judge: str, question_id: str, page: str) -> None:
        self.check_judge(judge)
        pair = self._pair(question_id, page)
        with self._lock:
            self.skipped.setdefault(judge, set()).add(pair)

    def progress(self, judge: str) -> Progress:
        with self._lock:
            done = self.done.get(judge, {})
            times = [j.seconds for j in done.values() if j.seconds is not None]
            return Progress(judge, len(done), len(self.items),
                            len(self.skipped.get(judge, set())),
                            statistics.fmean(times) if times else None,
                            statistics.median(times) if times else None)

    def agreement(self) -> dict[str, Any]:
        """Cohen's kappa per pair of judges, Fleiss' kappa, and the disagreements."""
        with self._lock:
            by_judge = {k: {p: j.judgment.grade for p, j in v.items()}
                        for k, v in sorted(self.done.items())}
            llm = sorted(k for k, v in self.done.items()
                         if any(j.judgment.judge_kind == "llm" for j in v.values()))
        pairs = []
        for a, b in itertools.combinations(sorted(by_judge), 2):
            common = sorted(set(by_judge[a]) & set(by_judge[b]))
            ga = [by_judge[a][p] for p in common]
            gb = [by_judge[b][p] for p in common]
            pairs.append({"judges": [a, b], "items": len(common),
                          "kappa": agreement.cohen(ga, gb),
                          "agreement": agreement.accuracy(ga, gb)})
        items: dict[tuple[str, str], list[int]] = {}
        for grades in by_judge.values():
            for p, g in grades.items():
                items.setdefault(p, []).append(g)
        disagreements = [{"question_id": q, "page": p,
                          "grades": {k: by_judge[k][(q, p)] for k in by_judge
                                     if (q, p) in by_judge[k]}}
                         for (q, p), gs in sorted(items.items()) if len(set(gs)) > 1]
        return {"judges": sorted(by_judge), "llm_judges": llm, "pairs": pairs,
                "fleiss": agreement.fleiss(items) if len(by_judge) >= 2 else None,
                "shared_items": sum(1 for gs in items.values() if len(gs) >= 2),
                "disagreements": disagreements}
