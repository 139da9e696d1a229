"""Parsing production ruling pages and importing them into a rulings run."""

from __future__ import annotations

import dataclasses
import html
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rulegauge.arms.rrf_rounding import rounds_to
from rulegauge.cli.rulings import register
from rulegauge.core.text import letters_ratio
from rulegauge.rulings.frames import decode_ruling
from rulegauge.rulings.importer import import_rulings
from rulegauge.rulings.parse import parse_bytes, parse_file
from rulegauge.rulings.records import ParseFailure, Ruling
from rulegauge.rulings.tables import RULINGS
from rulegauge.store.rundir import Run
from tests.helpers.common import FIXTURES as COMMON_FIXTURES
from tests.helpers.common import SHARED, typer_app

FIXTURES = COMMON_FIXTURES / "rulings"
EN = FIXTURES / "ruling-saltmarsh-ferries.txt"
DE = FIXTURES / "ruling-saltmarsh-de.txt"
ABSTAINED = FIXTURES / "ruling-saltmarsh-abstained.txt"
SHARED_PAGE = (SHARED / "rulings"
               / "ruling-archaeology-how-to-play.txt")


def parse(text: str, name: str = "page.txt") -> Ruling | ParseFailure:
    return parse_bytes(text.encode("utf-8"), name, "q")


def en_text() -> str:
    return EN.read_text(encoding="utf-8")


def parsed(text: str) -> Ruling:
    r = parse(text)
    assert isinstance(r, Ruling), r
    return r


def without_lines(r: Ruling) -> tuple:
    """What a page says, independent of where on the page it said it."""
    values = {k: v for k, v in r.values.items() if k != "warnings"}
    rows = tuple(tuple(dataclasses.replace(x, line=0) for x in xs)
                 for xs in (r.search, r.reads, r.citations))
    return values, rows


def rows_of(run: Run, table: str) -> list[dict]:
    """A stored table as Python rows (lists keep their nulls)."""
    import pyarrow.parquet as pq

    return pq.read_table(run.path / f"{table}.parquet").to_pylist()


def warnings(r: Ruling | ParseFailure) -> str:
    return "\n".join(str(w) for w in r.warnings)


def test_english_page_fills_every_field():
    r = parse_file(EN)
    assert isinstance(r, Ruling)
    assert r.warnings == ()
    v = r.values
    assert v["question"] == "How many ferries does each player start with?"
    assert (v["game"], v["edition"]) == ("Saltmarsh Ferries", "bg-900001-en-2e")
    assert v["outcome"] == "answered" and v["badge"] == "Answered counted as answered"
    assert v["answer_text"].startswith("Each player starts with **three ferries**")
    assert v["answer_text"].endswith("tide track.[1]")
    assert v["answerer_model"] == "tinyllm:7b"
    assert (v["search_ms"], v["ask_ms"], v["total_ms"], v["queued_ms"], v["first_delta_ms"],
            v["gateway_ms"]) == (120, 3000, 3120, 5, 900, 3115)
    assert v["boosted_docs"] == ("4242",) and v["errata_matched"] is True
    assert json.loads(v["boost_settings"]) == {"rulesage.errata.boost-enabled": "true"}
    assert v["arms_fused"] == ("dense", "bm25", "boost") and v["n_arms"] == 3
    assert v["k"] == 60 and v["ceiling"] == 3 / (60 + 1) and v["ceiling_reported"] == 0.04918
    assert v["floors_armed"] == ("base_rulebook", "errata")
    assert v["floors_not_armed"] == ("per_book",)
    assert (v["candidate_pool"], v["candidate_pool_ceiling"]) == (12, 80)
    assert (v["tokens_in"], v["tokens_out"], v["tokens_per_sec"], v["generation_s"]) == (
        1500, 200, 95.2, 2.1)
    assert (v["errata_cards"], v["errata_edition"]) == (1, "77")
    assert v["setup_shape"] == "NOT_SETUP_SHAPED" and v["stream_path"] == "streamed"
    assert json.loads(v["unknown"]) == {"sections": {}, "fields": {}, "tables": []}
    assert set(json.loads(v["notes"])) >= {
        "retrieval: what this block is", "reads: what this block is", "retrieval: per-arm ranks",
        "errata registry: errata scope"}
    missing = [c.name for c in RULINGS.columns if c.name not in v and c.name not in
               {"question_id", "source_file", "source_sha256", "n_decoded", "n_decoded_unique"}]
    assert missing == []


def test_fence_line_matches_the_answer_text():
    r = parse_file(EN)
    letters, nonspace = letters_ratio(r.get("answer_text"))
    assert r.get("fence_nonspace_chars") == nonspace
    assert r.get("fence_letter_density") == round(letters / nonspace, 5)
    assert (r.get("fence_passed"), r.get("fence_floor"), r.get("fence_glyph_tokens"),
            r.get("fence_glyph_max")) == (True, 0.45, 0, 2)


def test_rows_merge_json_and_tables():
    r = parse_file(EN)
    assert [s.fused_rank for s in r.search] == [1, 2, 3, 4]
    assert all(s.in_json and s.in_table for s in r.search)
    first = r.search[0]
    assert (first.doc.doc_id, first.doc.kind, first.page, first.fused_score) == (
        "4242", "rulebook", 4, 0.04918)
    assert first.doc.title == "RULEBOOK Saltmarsh Ferries — Rulebook"
    assert first.snippet_chars == len(first.snippet)
    assert [(x.read_at, x.fused_rank, x.carried_by, x.slot) for x in r.reads] == [
        (1, 2, ("dense", "bm25", "boost"), "reranker"),
        (2, 1, ("dense", "bm25", "boost"), "reranker"),
        (3, 5, ("boost",), "floor:errata"),
        (4, 4, ("dense", "bm25"), "reranker")]
    assert [(c.n, c.doc.doc_id, c.page, c.quote_chars) for c in r.citations] == [
        (1, "4242", 4, None), (2, "4243", 1, len("four ferries with five players"))]
    assert all(c.in_answer_list and c.in_json and c.in_table for c in r.citations)


def test_windows_line_endings_parse_the_same():
    crlf = parse_bytes(en_text().replace("\n", "\r\n").encode("utf-8"), "page.txt", "q")
    assert without_lines(crlf) == without_lines(parsed(en_text()))
    assert "CR LF" in warnings(crlf)


def test_html_escaped_page_parses_the_same():
    escaped = parsed(html.escape(en_text(), quote=True))
    assert without_lines(escaped) == without_lines(parsed(en_text()))
    assert "HTML character references unescaped" in warnings(escaped)
    assert escaped.search[3].heading == "Playing a Round · Docking & Unloading"


def _sections(text: str) -> tuple[str, list[str]]:
    """Split the debug block at its section heads (blank line, head, blank line)."""
    heads = ["retrieval — ", "what the answerer read — ", "chosen chunks — ", "generation — ",
             "disposition\n", "setup-shape — ", "errata registry — "]
    cut = sorted(text.index("\n\n" + h) for h in heads)
    parts = [text[a:b] for a, b in zip(cut, [*cut[1:], len(text)], strict=True)]
    return text[: cut[0]], parts


def test_shuffled_sections_parse_the_same():
    head, parts = _sections(en_text().rstrip("\n"))
    shuffled = parsed(head + "".join(reversed(parts)) + "\n")
    assert shuffled.warnings == ()
    assert without_lines(shuffled) == without_lines(parsed(en_text()))


def test_the_debug_section_may_come_last():
    text = en_text().rstrip("\n")
    start = text.index("\n\n🔧 debug")
    head, parts = _sections(text)
    moved = text[:start] + "".join(parts) + text[start:len(head)] + "\n"
    r = parsed(moved)
    assert r.warnings == ()
    assert without_lines(r) == without_lines(parsed(en_text()))


def test_a_missing_section_becomes_nulls_with_warnings():
    head, parts = _sections(en_text().rstrip("\n"))
    r = parsed(head + "".join(p for p in parts if not p.startswith("\n\ngeneration")))
    for column in ("tokens_in", "tokens_out", "tokens_per_sec", "first_delta_ms", "gateway_ms"):
        assert r.get(column) is None
    w = warnings(r)
    assert "missing: tokens in line" in w and "missing: first-delta timing" in w
    assert r.get("search_ms") == 120 and r.get("n_reads") == 4


def test_truncated_page_keeps_what_came_before_the_cut():
    text = en_text()
    cut = text.index("p.7\t#4\t0.03101")  # inside the last read row
    r = parsed(text[:cut])
    assert [x.read_at for x in r.reads] == [1, 2, 3]
    w = warnings(r)
    assert re.search(r"reads table row has \d cells, expected 8; row skipped", w)
    assert "missing: chosen-chunks table" in w and "missing: tokens in line" in w
    assert len(r.citations) == 2 and not any(c.in_table for c in r.citations)


def test_truncated_inside_the_json_keeps_the_question_and_answer():
    text = en_text()
    r = parsed(text[: text.index('"snippet": "Put the tide')])
    assert r.get("question").startswith("How many ferries")
    assert r.get("answer_text") is not None and r.search == ()
    assert "refs JSON: invalid JSON" in warnings(r)
    assert r.get("refs_json").startswith('[{"page": 4')


def test_invalid_json_inside_the_block_falls_back_to_the_table():
    r = parsed(en_text().replace('"score": 0.04918,', '"score": 0.04918,,', 1))
    assert "refs JSON: invalid JSON" in warnings(r)
    assert [s.fused_rank for s in r.search] == [1, 2, 3, 4]
    assert not any(s.in_json for s in r.search) and all(s.in_table for s in r.search)
    assert r.search[0].fused_score == 0.04918 and r.search[0].snippet is None


def test_a_disagreement_between_json_and_table_is_a_warning():
    r = parsed(en_text().replace('"page": 5, "score": 0.048131', '"page": 9, "score": 0.048131'))
    assert "search row #2 page: the table says 5, the JSON 9" in warnings(r)
    assert r.search[1].page == 5


def test_page_in_another_language_parses_by_structure():
    r = parse_file(DE)
    assert isinstance(r, Ruling)
    v = r.values
    assert v["question"] == "Mit wie vielen Fähren beginnt jeder Spieler?"
    assert (v["game"], v["edition"]) == ("Saltmarsh Ferries", "bg-900001-de-2e")
    assert v["answer_text"].startswith("Jeder Spieler beginnt") and v["signoff"] == (
        "Jetzt weißt du es.")
    assert v["refs_json"] is not None and v["citations_json"] is not None
    assert [s.fused_rank for s in r.search] == [1, 2, 3, 4]
    assert all(s.in_json and s.in_table for s in r.search)
    assert [x.fused_rank for x in r.reads] == [2, 1, 5, 4]
    assert [(c.n, c.page) for c in r.citations] == [(1, 4), (2, 1)]
    assert v["k"] == 60  # "bei k=60": read from the shape k=N
    for column in ("outcome", "tokens_in", "arms_fused", "fence_passed", "n_arms"):
        assert v.get(column) is None
    unknown = json.loads(v["unknown"])
    assert "Erzeugung — Zeiten und Weg" in unknown["sections"]
    assert unknown["fields"]["Token ein"] == "1600"
    w = warnings(r)
    assert "missing: outcome line" in w and "carried-by names unknown arm(s) vektor" in w


def test_without_the_asked_with_line_the_label_finds_the_question():
    r = parsed(en_text().replace("Asked with: Saltmarsh Ferriesbg-900001-en-2e\n\n", ""))
    assert r.get("question") == "How many ferries does each player start with?"
    assert r.get("badge") == "Answered counted as answered"
    assert r.get("answer_text").startswith("Each player starts")
    assert r.get("game") is None and "no 'Asked with' line" in warnings(r)


@pytest.mark.parametrize("data, missing", [
    (b"", ("question", "answer or debug block")),
    (b"Just a shopping list\n\n- eggs\n- milk\n", ("question", "answer or debug block")),
    (b"\xff\xfe\x00garbage", ("UTF-8 text",)),
])
def test_a_page_that_is_no_ruling_is_a_failure(data, missing):
    r = parse_bytes(data, "junk.txt", "junk")
    assert isinstance(r, ParseFailure)
    assert r.missing == missing
    assert "junk.txt" in str(r)


def test_decode_flags_a_carrier_that_was_not_fused(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text(en_text().replace("\tvector + full-text\t", "\tvector + rerank\t"),
                     encoding="utf-8")
    res = import_rulings([plain], tmp_path / "runs", "plain")
    assert "unknown arm(s) rerank" in warnings(res.rulings[0])
    row4 = next(r for r in rows_of(Run(res.path), "ruling_decodes") if r["fused_rank"] == 4)
    assert "carried_by_not_fused" in row4["flags"] and row4["ranks"] == [4, 5, None]


def test_abstained_two_arm_page():
    r = parse_file(ABSTAINED)
    assert isinstance(r, Ruling)
    assert (r.get("outcome"), r.get("n_arms"), r.get("arms_fused")) == (
        "abstained", 2, ("dense", "bm25"))
    assert r.get("ceiling") == 2 / (60 + 1)
    assert r.citations == () and r.get("signoff") is None
    assert [str(w).split(": ", 1)[1] for w in r.warnings] == ["missing: chosen-chunks table"]


def test_import_writes_a_rulings_run_and_reports_failures(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing to see here\n", encoding="utf-8")
    res = import_rulings([FIXTURES, junk], tmp_path / "runs", "r1")
    run = Run(res.path)
    assert run.manifest["kind"] == "rulings" and run.manifest["status"] == "complete"
    assert run.tables() == ["ruling_citations", "ruling_decodes", "ruling_reads", "ruling_refs",
                            "rulings"]
    rulings = run.table("rulings")
    assert sorted(rulings["question_id"]) == ["ruling-saltmarsh-abstained", "ruling-saltmarsh-de",
                                              "ruling-saltmarsh-ferries"]
    sources = {Path(s["file"]).name: s for s in run.manifest["rulings"]["sources"]}
    assert sources["junk.txt"]["status"] == "failed" and sources["junk.txt"]["missing"]
    from rulegauge.store.rundir import file_sha256

    assert sources[EN.name]["sha256"] == file_sha256(EN)
    assert sources[DE.name]["warnings"]
    en = sorted((r for r in rows_of(run, "ruling_decodes")
                 if r["question_id"] == "ruling-saltmarsh-ferries"), key=lambda r: r["fused_rank"])
    assert [r["ranks"] for r in en] == [[1, 1, 1], [2, 2, 3], [2, 3, 3], [4, 5, None],
                                        [4, None, None]]
    assert all(r["reproduces"] for r in en)
    assert [r["n_carried"] for r in en] == [3, 3, None, 2, 1]
    reads = [r for r in rows_of(run, "ruling_reads") if r["question_id"] == EN.stem]
    assert [r["carried_by"] for r in reads] == ["dense+bm25+boost", "dense+bm25+boost", "boost",
                                                "dense+bm25"]


def test_import_of_nothing_raises(tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing\n", encoding="utf-8")
    from rulegauge.core.errors import RulegaugeError

    with pytest.raises(RulegaugeError, match=r"junk\.txt"):
        import_rulings([junk], tmp_path / "runs")
    assert not (tmp_path / "runs").exists()


@pytest.fixture
def cli():
    return typer_app(register)


def test_cli_import_prints_one_row_per_ruling(cli, tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["rulings", "import", str(EN), str(ABSTAINED), str(junk),
                                   "--out", str(tmp_path), "--run-id", "r"])
    assert res.exit_code == 0, res.output
    assert "5/5" in res.output and "abstained" in res.output and "passed" in res.output
    assert "not imported" in res.output and "junk.txt" in res.output


def test_cli_import_exits_2_when_nothing_imports(cli, tmp_path):
    junk = tmp_path / "junk.txt"
    junk.write_text("nothing\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["rulings", "import", str(junk), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "no ruling page imported" in res.output
    res = CliRunner().invoke(cli, ["rulings", "import", str(EN), "--rounding", "nope"])
    assert res.exit_code == 2 and "half_up" in res.output


@pytest.mark.shared
def test_real_ruling_page_imports_completely(tmp_path):
    if not SHARED_PAGE.is_file():
        pytest.skip(f"{SHARED_PAGE} is absent")
    res = import_rulings([SHARED_PAGE.parent], tmp_path, "real")
    run = Run(res.path)
    rulings = run.table("rulings")
    assert len(rulings) == 1
    row = rulings.iloc[0]
    assert list(row["warnings"]) == []
    nulls = [c for c in rulings.columns if row[c] is None or (
        not hasattr(row[c], "__len__") and row[c] != row[c])]
    assert nulls == []
    assert (row["question"], row["edition"], row["n_arms"], row["k"]) == (
        "How do I play?", "bg-191300-en-1e", 3, 60)
    letters, nonspace = letters_ratio(row["answer_text"])
    assert (row["fence_nonspace_chars"], row["fence_letter_density"]) == (
        nonspace, round(letters / nonspace, 5))
    dec = sorted(rows_of(run, "ruling_decodes"), key=lambda r: r["fused_rank"])
    assert len(dec) == 10
    unique = {r["fused_rank"]: r["ranks"] for r in dec if r["ranks"] is not None}
    assert unique == {1: [1, 1, 2], 2: [1, 3, 3], 3: [2, 2, 8], 4: [5, 5, 6], 5: [3, 7, 7],
                      8: [5, 9, None], 9: [8, 8, None], 10: [4, 13, None]}
    assert [r["fused_rank"] for r in dec if r["ranks"] is None] == [6, 7]
    for r in dec:
        assert r["reproduces"] in (True, None)
        assert r["n_candidates"] >= r["n_consistent"] >= 1
        for cand in json.loads(r["candidates"]):
            exact = sum((Fraction(1, 60 + x) for x in cand if x is not None), Fraction(0))
            assert rounds_to(exact, r["fused_score"])
    ruling = parse_file(SHARED_PAGE)
    assert all(rd.decoding.candidates for rd in decode_ruling(ruling))
