"""Gold sets from hostile hands: bounded aliases, encodings, scalars read as text,
documents outside the gold set's folder (rulegauge.goldset.parse, rulegauge.goldset.yamlsafe)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.goldset.documents import document_root
from rulegauge.goldset.parse import check_corpus, load_goldset, validate_goldset
from rulegauge.goldset.yamlsafe import MAX_EXPANDED_NODES
from tests.helpers.fault_inputs import RULES, goldset_text, yaml_bomb

DOC = ("  - {id: rb, path: docs/rules.txt, kind: rulebook, game: Harbour, edition: en-1, "
       "language: en}\n")


def make(tmp_path: Path, text: str | bytes, name: str = "g.yaml") -> Path:
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "rules.txt").write_text(RULES, encoding="utf-8")
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def test_yaml_bomb_is_refused_quickly(tmp_path: Path) -> None:
    start = time.perf_counter()
    problems = validate_goldset(make(tmp_path, yaml_bomb(levels=12)))
    assert time.perf_counter() - start < 5
    assert [p.message for p in problems] == [
        f"aliases expand to more than {MAX_EXPANDED_NODES:,} nodes beyond the file's own "
        "(a YAML bomb?); write the content out instead"]


def test_shared_aliases_below_the_bound_still_work(tmp_path: Path) -> None:
    qs = ("  - {id: q0, language: en, question: 'Setup?', pages: &p [rb#1]}\n"
          "  - {id: q1, language: en, question: 'Again?', pages: *p}\n")
    gs = load_goldset(make(tmp_path, goldset_text(questions=qs)))
    assert [q.requirements for q in gs.questions] == [gs.questions[0].requirements] * 2


@pytest.mark.parametrize("text", ["a: &a [*a]\n", "a: &a {b: *a}\n", "a: &a {<<: *a}\n"])
def test_recursive_aliases_are_refused(tmp_path: Path, text: str) -> None:
    problems = validate_goldset(make(tmp_path, text + goldset_text()))
    assert len(problems) == 1 and "recursive alias" in problems[0].message
    assert problems[0].where.endswith("g.yaml:1")


def test_duplicate_keys_under_aliases_are_reported_once(tmp_path: Path) -> None:
    text = "a: &a {x: 1, x: 2}\nb: [*a, *a, *a]\n" + goldset_text()
    problems = validate_goldset(make(tmp_path, text))
    assert [p.message for p in problems] == ["duplicate key 'x'"]


def test_latin_1_names_the_line_and_byte(tmp_path: Path) -> None:
    text = goldset_text(questions="  - {id: q1, language: fr, question: 'Où?', pages: [rb#2]}\n")
    problems = validate_goldset(make(tmp_path, text.encode("latin-1")))
    assert len(problems) == 1
    assert problems[0].where.endswith("g.yaml:6")
    assert problems[0].message.startswith("not valid UTF-8 (byte")


def test_utf8_bom_is_fine(tmp_path: Path) -> None:
    assert validate_goldset(make(tmp_path, b"\xef\xbb\xbf" + goldset_text().encode())) == []


def test_deep_nesting_and_bad_scalars_are_problems(tmp_path: Path) -> None:
    deep = validate_goldset(make(tmp_path, "a: " + "[" * 50000 + "]" * 50000 + "\n"))
    assert deep and "g.yaml" in deep[0].where
    date = validate_goldset(make(tmp_path, "when: 2024-13-45\n" + goldset_text()))
    assert date and "not valid YAML" in date[0].message


def test_scalars_where_text_is_expected_are_read_as_their_source_text(tmp_path: Path) -> None:
    docs = DOC.replace("edition: en-1", "edition: 3.22").replace("game: Harbour", "game: 1830")
    qs = ("  - {id: 12, language: en, question: 'How far?', pages: [rb#2], edition: 3.22}\n"
          "  - {id: 007, language: en, question: 2024-01-01, pages: []}\n")
    gs = load_goldset(make(tmp_path, goldset_text(documents=docs, questions=qs)))
    assert gs.documents[0].edition == "3.22" and gs.documents[0].game == "1830"
    assert [q.question_id for q in gs.questions] == ["12", "007"]
    assert gs.questions[0].edition == "3.22"
    assert gs.questions[1].question == "2024-01-01"
    assert len(gs.notes) == 6
    assert any("'edition' read as text '3.22' (YAML would read float 3.22" in n for n in gs.notes)
    assert all(":" in n.split(" ")[0] for n in gs.notes)  # each note names file:line


def test_bool_like_and_null_ids_are_still_problems(tmp_path: Path) -> None:
    qs = "  - {id: ~, language: en, question: 'How far?', pages: []}\n"
    problems = validate_goldset(make(tmp_path, goldset_text(questions=qs)))
    assert any("missing required field 'id'" in p.message for p in problems)


def test_documents_outside_the_folder_need_allow_outside(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "rules.txt"
    outside.parent.mkdir()
    outside.write_text(RULES, encoding="utf-8")
    folder = tmp_path / "sets"
    folder.mkdir()
    for path in ("../elsewhere/rules.txt", str(outside)):
        gs_path = make(folder, goldset_text(documents=DOC.replace("docs/rules.txt", path)))
        problems = validate_goldset(gs_path)
        assert [p.message for p in problems] == [
            f"document rb: document path {path!r} leads outside {folder}; move the file there "
            "or pass --allow-outside"]
        assert load_goldset(gs_path, allow_outside=True).documents[0].path == str(outside)


def test_goldsets_folder_layout_reaches_its_parent(tmp_path: Path) -> None:
    """goldsets/x.yaml may name ../corpora/... (this repository and ../shared)."""
    corpora = tmp_path / "corpora"
    corpora.mkdir()
    (corpora / "rules.txt").write_text(RULES, encoding="utf-8")
    folder = tmp_path / "goldsets"
    folder.mkdir()
    path = make(folder, goldset_text(documents=DOC.replace("docs/rules.txt",
                                                           "../corpora/rules.txt")))
    assert document_root(path) == tmp_path
    assert validate_goldset(path) == []
    escape = make(folder, goldset_text(documents=DOC.replace("docs/rules.txt", "../../x.txt")))
    assert "leads outside" in validate_goldset(escape)[0].message


def test_a_corpus_without_chunks_is_refused_naming_the_documents(tmp_path: Path) -> None:
    from rulegauge.corpus.chunking import ChunkingOptions, build_corpus

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "blank.txt").write_text("  \n\f \n", encoding="utf-8")
    path = tmp_path / "g.yaml"
    path.write_text(goldset_text(documents=DOC.replace("rules.txt", "blank.txt"),
                                 questions="  - {id: q1, language: en, question: 'x', "
                                           "pages: []}\n"), encoding="utf-8")
    gs = load_goldset(path)
    with pytest.raises(ValidationError) as ei:
        check_corpus(gs, build_corpus(gs.documents, ChunkingOptions()))
    assert "no document gives any text" in str(ei.value)
    assert "document rb" in str(ei.value) and "blank.txt gives no text" in str(ei.value)


def test_unknown_document_keys_are_kept_with_a_note(tmp_path: Path) -> None:
    gs = load_goldset(make(tmp_path, goldset_text(documents=DOC.replace(
        "language: en}", "language: en, fromat: markdown}"))))
    assert dict(gs.documents[0].options) == {"fromat": "markdown"}
    assert any("key 'fromat' is no field and no loader reads it (loader options: format)" in n
               for n in gs.notes)
