"""Judgments files: one JSON line per question x page x judge, read, checked and appended.

A judgments file is what a judging session (``rulegauge judge``), an LLM judge or a
qrels import writes, and what ``rulegauge goldset merge`` folds into a gold set::

    {"question_id": "bw-14", "page": "bw-faq#2", "grade": 0, "judge_kind": "human",
     "judge_id": "ann", "time": "2026-12-01T11:02:07Z", "note": "", "seconds": 9.4,
     "goldset_sha256": "3f9c..."}

``grade`` 0-3 (0 = judged non-relevant), ``judge_kind`` ``human`` or ``llm``,
``judge_id`` a person or model + prompt hash; ``time``, ``note``, ``seconds`` (time
spent on the judgment), ``goldset_sha256`` (the gold set judged against), ``view`` (how
the judging page showed the page: ``blind``, configs, arms and ranks hidden and pages in
a seeded random order, or ``unblinded``) and ``order_seed`` (the seed of that order) are
optional. Reading collects every problem with ``file:line`` (through
:mod:`rulegauge.core.jsonl`): bad JSON, grades outside 0-3, unknown kinds, a page that
is no ``doc#page``, one judge judging one pair twice, and, when checked against a
gold set (:func:`check_judgments`), unknown questions, documents, pages out of range
and a gold-set hash that differs.

A judgments file may also be graded TREC qrels (``qid 0 doc#page grade`` per line, what
``rulegauge judges export``, ranx, ir_measures and trec_eval exchange), told apart by
content (:func:`is_qrels`: the first non-blank line is not a JSON object): each line is one
judgment by one judge, whose id a flag gives (``--judge``; default the file's stem) and
kind ``human`` unless said; a qrels file carries no gold-set hash. Lines that are not four
fields, a docid that is no ``doc#page``, a grade outside 0-3 and a pair listed twice are
reported with ``file:line``.

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
from rulegauge.core.jsonl import append_line, dumps_lines, read_records, split_lines
from rulegauge.corpus import loaders
from rulegauge.corpus.records import split_page_key
from rulegauge.goldset.grades import relevance_problem
from rulegauge.goldset.judged import judgment_fields
from rulegauge.goldset.records import GoldSet, PageJudgment

FILE_FIELDS = ("question_id", "page", "grade", "judge_kind", "judge_id", "time", "note",
               "seconds", "goldset_sha256", "view", "order_seed")
"""Keys of one judgments-file line (question_id, page, grade, judge_kind, judge_id required)."""
_NAMES = {"kind": "judge_kind", "judge": "judge_id"}
VIEWS = ("blind", "unblinded")
"""How a judging page showed a page (``view``): systems hidden (the default) or shown."""
MAX_SEED = 2**32 - 1
"""The largest ``order_seed`` (``rulegauge judge --seed`` is bounded the same)."""


@dataclass(frozen=True)
class Judgment:
    """One line of a judgments file: a question, its judged page and who judged it how."""

    question_id: str
    judgment: PageJudgment
    seconds: float | None = None
    goldset_sha256: str = ""
    view: str = ""
    """``blind`` or ``unblinded`` (:data:`VIEWS`) for a judging page's judgment; empty otherwise."""
    order_seed: int | None = None
    """The seed of the blind view's random order."""
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
    if j.view:
        row["view"] = j.view
    if j.order_seed is not None:
        row["order_seed"] = j.order_seed
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
    view, seed = record.get("view", ""), record.get("order_seed")
    if view != "" and view not in VIEWS:
        messages.append(f"view must be one of {', '.join(VIEWS)}, got {view!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                             or not 0 <= seed <= MAX_SEED):
        messages.append(f"order_seed must be an integer 0..{MAX_SEED}, got {seed!r}")
    if messages:
        return None, [Problem(where, m) for m in messages]
    pj = PageJudgment(doc, number, fields["grade"], fields["kind"], fields["judge"],
                      fields["time"], fields["note"])
    return Judgment(str(qid), pj, None if seconds is None else float(seconds), str(sha),
                    str(view), seed, where), []


QRELS_PEEK = 64 * 1024
"""Bytes read to tell qrels from JSON lines (the first non-blank line)."""


def is_qrels(path: Path | str) -> bool:
    """True when ``path`` holds TREC qrels rather than JSON lines: its first non-blank
    line does not start with ``{`` (an empty file is JSON lines: no judgments)."""
    with open(path, "rb") as f:
        head = f.read(QRELS_PEEK).decode("utf-8", errors="replace")
    first = next((line.strip() for line in head.splitlines() if line.strip()), "")
    return bool(first) and not first.lstrip("\ufeff").startswith("{")


def read_qrels_lines(path: Path | str) -> list[tuple[str, str, int, int]]:
    """(qid, docid, relevance, line) of a TREC qrels file (``qid iter docid relevance``);
    every malformed line reported together."""
    out, problems = [], []
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ValidationError([Problem(f"{path}:{line}", f"not valid UTF-8 ({exc.reason})")],
                              f"{path}: malformed qrels") from None
    for i, raw in enumerate(split_lines(text), start=1):
        parts = raw.split()
        if not parts:
            continue
        if len(parts) != 4:
            problems.append(Problem(f"{path}:{i}", f"expected 'qid 0 docid relevance', got {raw!r}"))
            continue
        bad = relevance_problem(parts[3])  # ASCII digits, bounded: never int() of 5,000 digits
        if bad:
            problems.append(Problem(f"{path}:{i}", bad))
        else:
            out.append((parts[0], parts[2], int(parts[3]), i))
    if problems:
        raise ValidationError(problems, f"{path}: malformed qrels")
    return out


def qrels_judgments(path: Path | str, judge_id: str | None = None, judge_kind: str = "human", *,
                    time: str = "") -> list[Judgment]:
    """The lines of a graded qrels file as judgments by ``judge_id`` (default: the file's
    stem) of ``judge_kind``; every problem (module docstring) raised together."""
    out, problems = parse_qrels_judgments(path, judge_id, judge_kind, time=time)
    if problems:
        raise ValidationError(problems, f"{path}: invalid qrels judgments")
    return out


def parse_qrels_judgments(path: Path | str, judge_id: str | None = None, judge_kind: str = "human", *,
                          time: str = "") -> tuple[list[Judgment], list[Problem]]:
    """:func:`qrels_judgments` without raising on bad lines: the judgments of the good lines
    and the problems of the others (a caller adds its own checks before raising them all);
    malformed lines and a bad judge id still raise."""
    path = Path(path)
    judge_id = judge_id or path.stem
    _, bad = judgment_fields({"grade": 0, "kind": judge_kind, "judge": judge_id, "time": time})
    if bad:
        # the hint goes into each problem: a caller that folds problems into its own message
        # (parse_judgments_file) keeps it
        raise ValidationError([Problem(f"{path}: --judge/--kind", f"{m}; give a valid judge id with "
                                       "--judge (judges agreement: --judge-a, --judge-b)")
                               for m in bad],
                              f"{path}: qrels carry no judge: give a valid judge id with --judge")
    problems: list[Problem] = []
    out: list[Judgment] = []
    seen: dict[tuple[str, str], int] = {}
    for qid, docid, grade, line in read_qrels_lines(path):
        where = f"{path}:{line}"
        try:
            doc, page = split_page_key(docid)
        except ValueError:
            problems.append(Problem(where, f"docid {docid!r} is not a page id 'doc#page'"))
            continue
        if not 0 <= grade <= 3:
            problems.append(Problem(where, f"relevance {grade} outside 0-3"))
            continue
        if (qid, docid) in seen:
            problems.append(Problem(where, f"question {qid}: {docid} listed twice (first at line "
                                    f"{seen[(qid, docid)]})"))
            continue
        seen[(qid, docid)] = line
        out.append(Judgment(qid, PageJudgment(doc, page, grade, judge_kind, judge_id, time), where=where))
    return out, problems


def read_judgments(path: Path | str, *, missing_ok: bool = False, qrels_judge: str | None = None,
                   qrels_kind: str = "human") -> list[Judgment]:
    """Every judgment of a judgments file (JSON lines, or graded qrels told apart by content:
    :func:`qrels_judgments` with ``qrels_judge`` and ``qrels_kind``), in file order; raise one
    :class:`ValidationError` with every problem (bad lines, one judge judging one
    pair twice). A missing file is an error unless ``missing_ok`` (then ``[]``)."""
    path = Path(path)
    if missing_ok and not path.exists():
        return []
    out, problems = parse_judgments_file(path, qrels_judge=qrels_judge, qrels_kind=qrels_kind)
    if problems:
        raise ValidationError(problems, f"{path}: invalid judgments file")
    return out


def parse_judgments_file(path: Path | str, *, qrels_judge: str | None = None,
                         qrels_kind: str = "human") -> tuple[list[Judgment], list[Problem]]:
    """:func:`read_judgments` without raising on bad lines: the judgments of the good lines
    and the problems of the others, so a caller checks the good ones too and reports
    every problem of the file at once (CONTRIBUTING rule 12)."""
    path = Path(path)
    try:
        if path.is_file() and is_qrels(path):
            try:
                return parse_qrels_judgments(path, qrels_judge, qrels_kind)
            except ValidationError as exc:
                return [], list(exc.problems)
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(str(path), f"cannot read judgments: {exc}")]
    problems: list[Problem] = []
    try:
        records = read_records(path, problems)
    except (OSError, UnicodeDecodeError) as exc:
        return [], [Problem(str(path), f"cannot read judgments: {exc}")]
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
    return out, problems


def line_order(p: Problem) -> tuple[str, int, str]:
    """Problems of ``file:line`` in file order, then line order (others by place)."""
    place, _, line = p.where.rpartition(":")
    return (place, int(line), p.message) if line.isdigit() else (p.where, 0, p.message)


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


def load_judgments(paths: Iterable[Path | str], goldset: GoldSet, *, qrels_judge: str | None = None,
                   qrels_kind: str = "human") -> list[Judgment]:
    """Read several judgments files (JSON lines or qrels: :func:`read_judgments`) and check
    them against ``goldset``; one :class:`ValidationError` with every problem of every
    file. The same judge judging one pair in two files is an error too."""
    out, problems = collect_judgments(paths, goldset, qrels_judge=qrels_judge,
                                      qrels_kind=qrels_kind)
    if problems:
        raise ValidationError(problems, "invalid judgments")
    return out


def collect_judgments(paths: Iterable[Path | str], goldset: GoldSet, *,
                      qrels_judge: str | None = None, qrels_kind: str = "human"
                      ) -> tuple[list[Judgment], list[Problem]]:
    """:func:`load_judgments` without raising: the good judgments, and every problem of
    every file (bad lines, and the good lines checked against ``goldset`` too) in file
    and line order."""
    out: list[Judgment] = []
    problems: list[Problem] = []
    for path in paths:
        found, bad = parse_judgments_file(path, qrels_judge=qrels_judge, qrels_kind=qrels_kind)
        out += found
        problems += bad
    first: dict[tuple[str, str, str], str] = {}
    for j in out:
        key = (*j.pair, j.judgment.judge_id)
        if key in first:
            problems.append(Problem(j.where, f"question {j.question_id}: {j.page} judged twice "
                                    f"by {j.judgment.judge_id} (first at {first[key]})"))
        first.setdefault(key, j.where)
    problems += check_judgments(out, goldset)
    return out, sorted(problems, key=line_order)


def append_judgment(path: Path | str, judgment: Judgment) -> None:
    """Append one judgment as one line: a single ``write`` with ``O_APPEND``, then
    ``fsync`` (see the module docstring)."""
    append_line(path, judgment_row(judgment))


def write_judgments(path: Path | str, judgments: Iterable[Judgment]) -> Path:
    """Write a whole judgments file atomically (imports, exports)."""
    body = dumps_lines(judgment_row(j) for j in judgments)
    atomic.write_text(Path(path), body)
    return Path(path)
