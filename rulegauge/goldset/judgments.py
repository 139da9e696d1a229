"""Judgments files: one JSON line per question x page x judge, read, checked and appended.

A judgments file is what a judging session (``rulegauge judge``), an LLM judge or a
qrels import writes, and what ``rulegauge goldset merge`` folds into a gold set::

    {"question_id": "bw-14", "page": "bw-faq#2", "grade": 0, "judge_kind": "human",
     "judge_id": "ann", "time": "2026-12-01T11:02:07Z", "note": "", "seconds": 9.4,
     "goldset_sha256": "3f9c..."}

``grade`` 0-3 (0 = judged non-relevant), ``judge_kind`` ``human`` or ``llm``,
``judge_id`` a person or model + prompt hash; ``time``, ``note``, ``seconds`` (time
spent on the judgment) and ``goldset_sha256`` (the gold set judged against) are
optional. Reading collects every problem with ``file:line`` (through
:mod:`rulegauge.core.jsonl`): bad JSON, grades outside 0-3, unknown kinds, a page that
is no ``doc#page``, one judge judging one pair twice, and, when checked against a
gold set (:func:`check_judgments`), unknown questions, documents, pages out of range
and a gold-set hash that differs.

Appending (:func:`append_judgment`) writes one complete line with a single
``write`` on a descriptor opened with ``O_APPEND``, then ``fsync``: a session killed
mid-way leaves every judgment made before it and never a torn line from a normal stop.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rulegauge.core import atomic
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.jsonl import append_line, dumps_lines, read_records
from rulegauge.corpus import loaders
from rulegauge.corpus.records import split_page_key
from rulegauge.goldset.judged import judgment_fields
from rulegauge.goldset.records import GoldSet, PageJudgment

FILE_FIELDS = ("question_id", "page", "grade", "judge_kind", "judge_id", "time", "note",
               "seconds", "goldset_sha256")
"""Keys of one judgments-file line (question_id, page, grade, judge_kind, judge_id required)."""
_NAMES = {"kind": "judge_kind", "judge": "judge_id"}


@dataclass(frozen=True)
class Judgment:
    """One line of a judgments file: a question, its judged page and who judged it how."""

    question_id: str
    judgment: PageJudgment
    seconds: float | None = None
    goldset_sha256: str = ""
    where: str = field(default="", compare=False)
    """``file:line`` it was read from (empty for judgments made in memory)."""

    @property
    def page(self) -> str:
        return self.judgment.key

    @property
    def pair(self) -> tuple[str, str]:
        """(question id, page id): what was judged."""
        return self.question_id, self.judgment.key


def judgment_row(j: Judgment) -> dict[str, Any]:
    """The JSON object of one judgments-file line (keys in :data:`FILE_FIELDS` order)."""
    p = j.judgment
    row: dict[str, Any] = {"question_id": j.question_id, "page": p.key, "grade": p.grade,
                           "judge_kind": p.judge_kind, "judge_id": p.judge_id, "time": p.time,
                           "note": p.note}
    if j.seconds is not None:
        row["seconds"] = j.seconds
    if j.goldset_sha256:
        row["goldset_sha256"] = j.goldset_sha256
    return row


def parse_judgment(record: Mapping[str, Any], where: str) -> tuple[Judgment | None, list[Problem]]:
    """One judgments-file object -> :class:`Judgment`, or None with every problem at ``where``."""
    fields, messages = judgment_fields(record, keys=FILE_FIELDS, names=_NAMES)
    qid = record.get("question_id")
    if not isinstance(qid, str) or not qid:
        messages.append(f"question_id must be a non-empty string, got {qid!r}")
    page = record.get("page")
    try:
        doc, number = split_page_key(page) if isinstance(page, str) else split_page_key("")
    except ValueError:
        messages.append(f"page must be a page id 'doc#page', got {page!r}")
        doc, number = "", 0
    if doc and number < 1:
        messages.append(f"page numbers start at 1, got {page!r}")
    seconds = record.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float)
                                or seconds < 0):
        messages.append(f"seconds must be a number >= 0, got {seconds!r}")
    sha = record.get("goldset_sha256", "")
    if not isinstance(sha, str):
        messages.append(f"goldset_sha256 must be a string, got {sha!r}")
    if messages:
        return None, [Problem(where, m) for m in messages]
    pj = PageJudgment(doc, number, fields["grade"], fields["kind"], fields["judge"],
                      fields["time"], fields["note"])
    return Judgment(str(qid), pj, None if seconds is None else float(seconds), str(sha),
                    where), []


def read_judgments(path: Path | str, *, missing_ok: bool = False) -> list[Judgment]:
    """Every judgment of a judgments file, in file order; raise one
    :class:`ValidationError` with every problem (bad lines, one judge judging one
    pair twice). A missing file is an error unless ``missing_ok`` (then ``[]``)."""
    path = Path(path)
    if missing_ok and not path.exists():
        return []
    problems: list[Problem] = []
    try:
        records = read_records(path, problems)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError([Problem(str(path), f"cannot read judgments: {exc}")],
                              f"{path}: unreadable judgments file") from None
    out: list[Judgment] = []
    first: dict[tuple[str, str, str], str] = {}
    for r in records:
        j, found = parse_judgment(r.record, r.where)
        problems += found
        if j is None:
            continue
        key = (*j.pair, j.judgment.judge_id)
        if key in first:
            problems.append(Problem(r.where, f"question {j.question_id}: {j.page} judged twice by "
                                    f"{j.judgment.judge_id} (first at {first[key]})"))
            continue
        first[key] = r.where
        out.append(j)
    if problems:
        raise ValidationError(problems, f"{path}: invalid judgments file")
    return out


def check_judgments(judgments: Sequence[Judgment], goldset: GoldSet, *,
                    check_pages: bool = True) -> list[Problem]:
    """Problems of judgments against the gold set they judge: unknown question ids,
    unknown documents, pages out of range (``check_pages``: counted by the loaders),
    and a ``goldset_sha256`` that is not this gold set's."""
    docs = {d.doc_id: d for d in goldset.documents}
    counts: dict[str, int] = {}
    problems = []
    for j in judgments:
        doc, page = j.judgment.doc_id, j.judgment.page
        if j.question_id not in goldset.question_by_id:
            problems.append(Problem(j.where, f"unknown question {j.question_id!r} (not in "
                                    f"{goldset.path})"))
        if doc not in docs:
            problems.append(Problem(j.where, f"question {j.question_id}: unknown document "
                                    f"{doc!r} in {j.page}; documents: {', '.join(docs)}"))
        elif check_pages:
            if doc not in counts:
                counts[doc] = loaders.count_pages(docs[doc])
            if page > counts[doc]:
                problems.append(Problem(j.where, f"question {j.question_id}: page {page} out of "
                                        f"range for {doc} (1-{counts[doc]})"))
        if j.goldset_sha256 and j.goldset_sha256 != goldset.sha256:
            problems.append(Problem(j.where, f"judged against another gold set (sha256 "
                                    f"{j.goldset_sha256[:12]}...), not {goldset.path} "
                                    f"({goldset.sha256[:12]}...)"))
    return problems


def load_judgments(paths: Iterable[Path | str], goldset: GoldSet) -> list[Judgment]:
    """Read several judgments files and check them against ``goldset``; one
    :class:`ValidationError` with every problem of every file. The same judge judging
    one pair in two files is an error too."""
    out: list[Judgment] = []
    problems: list[Problem] = []
    for path in paths:
        try:
            out += read_judgments(path)
        except ValidationError as exc:
            problems += exc.problems
    first: dict[tuple[str, str, str], str] = {}
    for j in out:
        key = (*j.pair, j.judgment.judge_id)
        if key in first:
            problems.append(Problem(j.where, f"question {j.question_id}: {j.page} judged twice "
                                    f"by {j.judgment.judge_id} (first at {first[key]})"))
        first.setdefault(key, j.where)
    problems += check_judgments(out, goldset)
    if problems:
        raise ValidationError(problems, "invalid judgments")
    return out


def append_judgment(path: Path | str, judgment: Judgment) -> None:
    """Append one judgment as one line: a single ``write`` with ``O_APPEND``, then
    ``fsync`` (see the module docstring)."""
    append_line(path, judgment_row(judgment))


def write_judgments(path: Path | str, judgments: Iterable[Judgment]) -> Path:
    """Write a whole judgments file atomically (imports, exports)."""
    body = dumps_lines(judgment_row(j) for j in judgments)
    atomic.write_text(Path(path), body)
    return Path(path)
