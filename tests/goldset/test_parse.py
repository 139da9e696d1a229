"""Gold-set loader and validator (rulegauge.goldset.records) and the embedded sample."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.corpus import loaders
from rulegauge.corpus.records import DOC_KINDS
from rulegauge.goldset.parse import load_goldset, validate_goldset
from rulegauge.goldset.records import PageRef
from tests.helpers.common import FIXTURES as COMMON_FIXTURES
from tests.helpers.common import REPO, SHARED

SAMPLE = REPO / "goldsets" / "sample.yaml"
FIXTURES = COMMON_FIXTURES / "goldsets"



def doc(doc_id: str, path: str, kind: str = "rulebook", game: str = "Pebble Race",
        edition: str = "en-1") -> str:
    """One flow-style document entry line."""
    return (f"  - {{id: {doc_id}, path: {path}, kind: {kind}, game: {game}, "
            f"edition: {edition}, language: en}}\n")


DOCS = "documents:\n" + doc("pr-rules", "docs/pebble-rules.txt")


def write(tmp_path: Path, text: str, docs: str = DOCS) -> Path:
    """A gold set in ``tmp_path`` whose documents are the fixture documents."""
    (tmp_path / "docs").mkdir(exist_ok=True)
    for f in (FIXTURES / "docs").iterdir():
        (tmp_path / "docs" / f.name).write_bytes(f.read_bytes())
    path = tmp_path / "gs.yaml"
    path.write_text(f"goldset: t\nversion: 1\n{docs}{text}", encoding="utf-8")
    return path


def messages(path: Path, check_pages: bool = True) -> list[str]:
    return [str(p) for p in validate_goldset(path, check_pages=check_pages)]


# --- the embedded sample ---------------------------------------------------------------


def test_sample_validates_clean_with_page_checks() -> None:
    assert validate_goldset(SAMPLE) == []
    gs = load_goldset(SAMPLE)
    assert gs.name == "sample" and gs.version == 1 and gs.page_basis == "physical"
    assert gs.sha256 == hashlib.sha256(SAMPLE.read_bytes()).hexdigest()
    assert {d.kind for d in gs.documents} == {"rulebook", "errata", "expansion", "community"}
    assert all(Path(d.path).is_absolute() and Path(d.path).is_file() for d in gs.documents)


def test_sample_documents_have_the_promised_shape() -> None:
    gs = load_goldset(SAMPLE)
    pages = {d.doc_id: loaders.count_pages(d) for d in gs.documents}
    assert pages["bw-rules"] >= 10
    assert pages["bw-errata"] == 2
    assert pages["bw-tides"] >= 3
    assert pages["bw-faq"] >= 2


def test_sample_question_mix() -> None:
    gs = load_goldset(SAMPLE)
    qs = gs.questions
    by_lang: dict[str, int] = {}
    for q in qs:
        by_lang[q.language] = by_lang.get(q.language, 0) + 1
    assert len(qs) >= 40
    assert by_lang["ru"] >= 3 and by_lang["fa"] >= 3 and by_lang["de"] >= 1 and by_lang["es"] >= 1
    assert by_lang["en"] > len(qs) / 2
    assert sum(not q.answerable for q in qs) >= 5
    assert any("\u200c" in q.question for q in qs if q.language == "fa")
    assert all(q.game == "Lanterns of Brackwater" and q.edition == "en-1" for q in qs)
    docs_of = [{r.doc_id for req in q.requirements for r in req} for q in qs]
    assert any("bw-errata" in d and "bw-rules" in d for d in docs_of)
    assert any(d == {"bw-tides"} for d in docs_of)
    assert any(len(req) > 1 for q in qs for req in q.requirements)
    assert any(len(q.requirements) > 1 for q in qs)


def test_sample_faq_contradiction_requires_the_rulebook_not_the_faq() -> None:
    gs = load_goldset(SAMPLE)
    contradicted = [q for q in gs.questions if "faq-contradiction" in q.tags]
    assert contradicted
    for q in contradicted:
        assert q.requirements == ((PageRef("bw-rules", 5),),)
    faq_page = loaders.load_document(gs.documents[3])[1][1].text
    assert "only one lantern in each district" in faq_page
    rules_page = loaders.load_document(gs.documents[0])[1][4].text
    assert "second or a third lantern in a district where you already have one" in rules_page


# --- the broken fixture: every mistake reported at once --------------------------------


def test_broken_fixture_reports_every_problem_at_once() -> None:
    path = FIXTURES / "broken.yaml"
    with pytest.raises(ValidationError) as info:
        load_goldset(path)
    found = [str(p) for p in info.value.problems]
    expected = [
        ("broken.yaml:3:", "unsupported version 2"),
        ("broken.yaml:6:", "document pr-gone: missing document file"),
        ("broken.yaml:7:", "document pr-odd: unknown kind 'leaflet'; choose one of: "
         + ", ".join(DOC_KINDS)),
        ("broken.yaml:9: question b-1:", "unknown document 'pr-nowhere'"),
        ("broken.yaml:10: question b-2:", "page 9 out of range for pr-rules (1-3)"),
        ("broken.yaml:12: question b-3:", "duplicate question id (first at line 11)"),
        ("broken.yaml:13: question b-4:", "empty question"),
        ("broken.yaml:14: question b-5:", "bad page ref 'pr-rules-2'"),
        ("broken.yaml:14: question b-5:", "bad page ref 7"),
        ("broken.yaml:15: question b-6:", "missing required field 'language'"),
        ("broken.yaml:16: question b-7:", "missing required field 'pages'"),
    ]
    for where, what in expected:
        assert any(where in f and what in f for f in found), (where, what, found)
    assert len(found) == len(expected)
    assert str(path) in str(info.value) and "11 problem(s)" in str(info.value)
    assert [str(p) for p in validate_goldset(path)] == found


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'questions:\n  - {id: q1, question: "unclosed\n')
    (problem,) = validate_goldset(path)
    assert problem.where.startswith(f"{path}:") and "not valid YAML" in problem.message


def test_missing_file_and_wrong_top_level(tmp_path: Path) -> None:
    assert "cannot read gold set" in messages(tmp_path / "absent.yaml")[0]
    path = tmp_path / "list.yaml"
    path.write_text("- just\n- a list\n", encoding="utf-8")
    assert "top level must be a mapping" in messages(path)[0]


def test_top_level_problems_are_all_reported(tmp_path: Path) -> None:
    path = tmp_path / "gs.yaml"
    path.write_text("version: true\npages: printed\nderived: maybe\nderived: no\n",
                    encoding="utf-8")
    found = messages(path)
    for what in ("missing required field 'goldset'", "unsupported version True",
                 "unknown page basis 'printed'; choose one of: physical, label",
                 "duplicate key 'derived'", "missing required field 'documents'",
                 "missing required field 'questions'"):
        assert any(what in f for f in found), (what, found)


def test_question_field_problems(tmp_path: Path) -> None:
    path = write(tmp_path, """questions:
  - {id: [7], language: en, question: "List id?", pages: []}
  - {id: q2, language: English, question: "Bad language?", pages: []}
  - {id: q3, language: en, question: "Typo field?", pages: [], tag: [x]}
  - {id: q4, language: en, question: "Empty group?", pages: [[]]}
  - {id: q5, language: en, question: "Twice?", pages: [pr-rules#1, pr-rules#1]}
  - {id: q6, language: en, question: "Other game?", pages: [], game: Pebble Rush}
  - {id: q7, language: en, question: "Other edition?", pages: [], edition: de-2}
  - {id: q8, language: en, question: "Tags?", pages: [], tags: oops}
  - {id: q9, language: en, question: "Page zero?", pages: [pr-rules#0]}
  - {id: q10, language: en, question: "Pages not a list?", pages: pr-rules#1}
""")
    found = messages(path)
    for what in ("must be a non-empty string (quote numbers), got [7]",
                 "question q2: language 'English' is not a code",
                 "question q3: unknown field(s) tag; known: id, language",
                 "question q4: empty any-of list",
                 "question q5: page ref listed twice",
                 "question q6: unknown game 'Pebble Rush'; games: Pebble Race",
                 "question q7: unknown edition 'de-2' of 'Pebble Race'; editions: en-1",
                 "question q8: 'tags' must be a list of strings",
                 "question q9: bad page '0' in pr-rules",
                 "question q10: 'pages' must be a list of requirements"):
        assert any(what in f for f in found), (what, found)
    assert len(found) == 10


# --- parsing -----------------------------------------------------------------------------


def test_any_of_and_multi_page_requirements() -> None:
    gs = load_goldset(FIXTURES / "mini.yaml")
    q = gs.question_by_id["m-2"]
    assert q.requirements == (
        (PageRef("pr-errata", 1),),
        (PageRef("pr-rules", 3), PageRef("pr-rules", 1)),
    )
    assert gs.question_by_id["m-4"].requirements == ((PageRef("pr-rules", 1),),)


def test_relevant_pages_are_every_listed_page() -> None:
    gs = load_goldset(FIXTURES / "mini.yaml")
    assert gs.question_by_id["m-2"].relevant_pages == {"pr-errata#1", "pr-rules#3", "pr-rules#1"}
    assert gs.question_by_id["m-1"].relevant_pages == {"pr-rules#2"}


def test_unanswerable_question() -> None:
    q = load_goldset(FIXTURES / "mini.yaml").question_by_id["m-3"]
    assert not q.answerable and q.requirements == () and q.relevant_pages == frozenset()


def test_documents_options_defaults_and_text() -> None:
    gs = load_goldset(FIXTURES / "mini.yaml")
    rules, errata = gs.documents
    assert rules.title == "Pebble Race Rules" and rules.options == ()
    assert errata.title == "" and errata.options == (("format", "markdown"),
                                                     ("notes", ("first", "second")))
    assert rules.path == str((FIXTURES / "docs" / "pebble-rules.txt").resolve())
    m1, m5 = gs.question_by_id["m-1"], gs.question_by_id["m-5"]
    assert (m1.game, m1.edition, m1.tags) == ("Pebble Race", "en-1", ("setup",))
    assert m5.question == "Who wins?" and m5.tags == ()
    assert gs.extra == {} and gs.derived is False


def test_no_default_game_when_the_set_has_two_games(tmp_path: Path) -> None:
    docs = DOCS + doc("other", "docs/pebble-errata.md", game="Stone Soup", edition="en-2")
    path = write(tmp_path, """derived: true
source: outline
questions:
  - {id: q1, language: en, question: "Which game?", pages: [other#1]}
  - {id: q2, language: en, question: "Soup?", pages: [], game: Stone Soup}
""", docs)
    gs = load_goldset(path)
    q1, q2 = gs.questions
    assert (q1.game, q1.edition) == (None, None)
    assert (q2.game, q2.edition) == ("Stone Soup", None)
    assert gs.derived is True and gs.extra == {"source": "outline"}


def test_check_pages_false_skips_page_counts(tmp_path: Path) -> None:
    path = write(tmp_path, 'questions:\n  - {id: q1, language: en, question: "Far?", '
                 "pages: [pr-rules#99]}\n")
    assert any("page 99 out of range for pr-rules (1-3)" in m for m in messages(path))
    assert load_goldset(path, check_pages=False).questions[0].requirements == (
        (PageRef("pr-rules", 99),),)


def test_loader_problems_are_passed_through(tmp_path: Path) -> None:
    bad = tmp_path / "docs" / "bad.jsonl"
    docs = DOCS + doc("x", "docs/bad.jsonl", kind="expansion")
    path = write(tmp_path, 'questions:\n  - {id: q1, language: en, question: "X?", pages: [x#1]}\n',
                 docs)
    bad.write_text('{"page": 1, "text": "fine"}\nnot json\n', encoding="utf-8")
    (problem,) = validate_goldset(path)
    assert problem.where == f"{bad.resolve()}:2" and "invalid JSON" in problem.message


# --- printed page labels -------------------------------------------------------------------


def fake_labels(monkeypatch: pytest.MonkeyPatch, labels: list[str | None]) -> None:
    monkeypatch.setattr(loaders, "page_labels", lambda spec: list(labels))


def test_label_basis_converts_to_physical_pages(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    fake_labels(monkeypatch, [None, "i", "ii", "1", "2", "3"])
    path = write(tmp_path, """pages: label
questions:
  - {id: q1, language: en, question: "Roman?", pages: [pr-rules#ii]}
  - {id: q2, language: en, question: "Arabic?", pages: [[pr-rules#1, pr-rules#3], pr-rules#i]}
""")
    gs = load_goldset(path, check_pages=False)  # labels are read even without page checks
    assert gs.page_basis == "label"
    assert gs.questions[0].requirements == ((PageRef("pr-rules", 2 + 1),),)
    assert gs.questions[1].requirements == (
        (PageRef("pr-rules", 1 + 3), PageRef("pr-rules", 3 + 3)), (PageRef("pr-rules", 2),))
    assert gs.questions[1].relevant_pages == {"pr-rules#4", "pr-rules#6", "pr-rules#2"}


def test_label_basis_problems(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_labels(monkeypatch, ["1", "2", "2"])
    path = write(tmp_path, """pages: label
questions:
  - {id: q1, language: en, question: "Missing?", pages: [pr-rules#9]}
  - {id: q2, language: en, question: "Twice printed?", pages: [pr-rules#2]}
""")
    found = messages(path)
    assert any("question q1: page label '9' is not a printed label in pr-rules" in f for f in found)
    assert any("question q2: page label '2' is ambiguous (physical pages [2, 3])" in f
               for f in found)
    assert len(found) == 2


def test_label_basis_without_printed_labels_uses_page_numbers(tmp_path: Path) -> None:
    path = write(tmp_path, """pages: label
questions:
  - {id: q1, language: en, question: "Setup?", pages: [pr-rules#2]}
  - {id: q2, language: en, question: "Beyond?", pages: [pr-rules#4]}
""")
    found = messages(path)  # the real text loader: no labels, so "2" is physical page 2
    assert len(found) == 1 and "page label '4' is not a printed label" in found[0]


# --- real data -------------------------------------------------------------------------------


@pytest.mark.shared
def test_shared_secret_hitler_goldset_loads() -> None:
    path = SHARED / "goldsets" / "secret-hitler.yaml"
    if not path.exists():
        pytest.skip(f"shared data absent: {path} (see ../shared/README.md)")
    gs = load_goldset(path)
    assert gs.name == "secret-hitler" and len(gs.questions) == 40
    assert [d.doc_id for d in gs.documents] == ["sh-rules"]
    assert sum(not q.answerable for q in gs.questions) == 4
    sh03 = gs.question_by_id["sh-03"]
    assert sh03.requirements == ((PageRef("sh-rules", 2), PageRef("sh-rules", 4)),)
    assert all(q.game == "Secret Hitler" and q.edition == "en-1" for q in gs.questions)


# --- graded page refs ------------------------------------------------------------------


def test_graded_refs_load_and_ungraded_refs_have_grade_one(tmp_path: Path) -> None:
    path = write(tmp_path, """questions:
  - {id: q1, language: en, question: "G?",
     pages: [{ref: pr-rules#1, grade: 3}, [pr-rules#2, {ref: pr-rules#3, grade: 2}]]}
  - {id: q2, language: en, question: "Binary?", pages: [pr-rules#1]}
""")
    gs = load_goldset(path)
    q1, q2 = gs.questions
    assert q1.requirements[0] == (PageRef("pr-rules", 1),)  # the grade is not part of equality
    assert q1.requirements[0][0].grade == 3
    assert q1.page_grades == {"pr-rules#1": 3, "pr-rules#2": 1, "pr-rules#3": 2}
    assert q1.graded and not q2.graded
    assert q2.page_grades == {"pr-rules#1": 1}


@pytest.mark.parametrize("bad", ["{ref: pr-rules#1, grade: 0}", "{ref: pr-rules#1, grade: true}",
                                 "{ref: pr-rules#1, grade: 11}", "{ref: pr-rules#1, grade: 1" + "0" * 400 + "}",
                                 "{ref: pr-rules#1, grade: 1.5}", "{ref: pr-rules#1}",
                                 "{ref: pr-rules#1, grade: 2, note: x}"])
def test_bad_grades_are_reported_with_the_question(tmp_path: Path, bad: str) -> None:
    path = write(tmp_path, f"""questions:
  - {{id: q1, language: en, question: "Bad grade?", pages: [{bad}]}}
""")
    found = messages(path)
    assert any("question q1: bad graded page ref" in m and "integer grade 1..10" in m for m in found), found
