"""Ingestion report and the ``rulegauge ingest`` command."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from rich.console import Console
from typer.testing import CliRunner

from rulegauge.cli.ingest import register
from rulegauge.core.errors import ValidationError
from rulegauge.corpus.boilerplate import BoilerplateOptions
from rulegauge.corpus.chunking import ChunkingOptions
from rulegauge.corpus.ingest import (
    PAGE_CHECKS,
    IngestThresholds,
    SizeStats,
    ingest_report,
    render,
    spec_from_path,
)
from rulegauge.corpus.page_cache import PageCache
from tests.helpers.documents import FIXTURES, make_pdf, spec


def by_id(report):
    return {d.doc_id: d for d in report.documents}


def codes(doc) -> list[tuple[int | None, str]]:
    return [(w.page, w.code) for w in doc.warnings]


def test_size_stats_formulas() -> None:
    s = SizeStats.of([5, 1, 4, 2, 3, 10, 6, 7, 8, 9])
    assert (s.n, s.min, s.max) == (10, 1, 10)
    assert s.median == sorted([5, 1, 4, 2, 3, 10, 6, 7, 8, 9])[(10 - 1) // 2]  # lower median: 5
    assert s.p90 == 9  # ceil(0.9 * 10) = 9th smallest
    assert s.mean == pytest.approx(55 / 10)
    assert SizeStats.of([]) == SizeStats(0, 0, 0, 0, 0, 0.0)


def test_checks_registered() -> None:
    assert PAGE_CHECKS.names() == ["empty", "near_empty", "short", "long", "glyph_debris",
                                   "low_letter_density", "mostly_boilerplate"]


def test_report_on_fixture_files() -> None:
    paths = [FIXTURES / n for n in ("lanterns.txt", "lanterns.md", "lanterns.jsonl",
                                    "persian.txt", "glyphs.txt")]
    report = ingest_report(paths)
    docs = by_id(report)
    assert list(docs) == ["lanterns", "lanterns-2", "lanterns-3", "persian", "glyphs"]
    txt, md, jl, fa, gl = docs.values()
    assert (txt.format, txt.pages, txt.heading_source, txt.headings) == ("text", 2, "detected", 5)
    assert (md.format, md.pages, md.heading_source, md.headings) == ("markdown", 3, "outline", 5)
    assert md.headings_located is None  # counted for PDF outlines only
    assert (jl.format, jl.language, jl.empty_pages) == ("jsonl", "ru", 1)
    assert (3, "empty") in codes(jl)
    assert fa.language == "fa" and txt.language == "en"
    assert (1, "glyph_debris") in codes(gl) and (1, "low_letter_density") in codes(gl)
    assert txt.chunks == txt.chunk_chars.n
    assert txt.chars == sum(len(t) for t in _page_texts(FIXTURES / "lanterns.txt"))
    assert report.settings["method"] == "heading" and report.settings["boilerplate"] is None


def _page_texts(path: Path) -> list[str]:
    from rulegauge.corpus.loaders import load_document

    return [p.text for p in load_document(spec(path))[1]]


def test_page_warnings_thresholds(tmp_path: Path) -> None:
    f = tmp_path / "sizes.txt"
    f.write_text("Setup\nA lantern.\f" + "Lanterns light the harbour. " * 20 + "\f7\f",
                 encoding="utf-8")
    th = IngestThresholds(short_page_chars=200, long_page_chars=500, near_empty_letters=10)
    doc = ingest_report([f], thresholds=th).documents[0]
    assert codes(doc) == [(1, "short"), (2, "long"), (3, "near_empty")]


def test_pdf_report_counts_located_bookmarks(tmp_path: Path) -> None:
    pdf = make_pdf(tmp_path / "r.pdf",
                   [["Harbour Lanterns"], ["Setup", "Each player takes five lantern tokens."]],
                   outline=[(0, "Setup", 1), (0, "Missing Bookmark", 1)])
    doc = ingest_report([spec(pdf, "r")]).documents[0]
    assert (doc.heading_source, doc.headings, doc.headings_located) == ("outline", 2, 1)
    assert (1, "near_empty") in codes(doc)


def test_boilerplate_in_report(tmp_path: Path) -> None:
    f = tmp_path / "web.txt"
    f.write_text("Read more\nShare this\nSubscribe\nSetup text.", encoding="utf-8")
    doc = ingest_report([f], boilerplate=BoilerplateOptions()).documents[0]
    assert doc.boilerplate is not None and doc.boilerplate.by_reason == (("web_noise", 3),)
    assert (1, "mostly_boilerplate") in codes(doc)


def test_json_and_rich_rendering() -> None:
    report = ingest_report([FIXTURES / "lanterns.txt", FIXTURES / "glyphs.txt"],
                           ChunkingOptions(method="page"), BoilerplateOptions())
    data = json.loads(report.to_json())
    assert data["settings"]["method"] == "page"
    assert [d["doc_id"] for d in data["documents"]] == ["lanterns", "glyphs"]
    assert data["documents"][0]["chunk_chars"]["n"] == 2
    console = Console(record=True, width=200)
    render(report, console)
    out = console.export_text()
    assert "lanterns" in out and "glyph_debris" in out and "documents" in out


def test_errors_collected(tmp_path: Path) -> None:
    with pytest.raises(ValidationError) as info:
        ingest_report([tmp_path / "a.txt", FIXTURES / "lanterns.txt", tmp_path / "b.md"])
    assert len(info.value.problems) == 2
    with pytest.raises(ValidationError, match="cannot infer the format"):
        spec_from_path(tmp_path / "notes.docx")


def test_explicit_language_kept(tmp_path: Path) -> None:
    doc = ingest_report([FIXTURES / "persian.txt"], language="xx").documents[0]
    assert doc.language == "xx"


# --- CLI -------------------------------------------------------------------


@pytest.fixture
def app() -> typer.Typer:
    a = typer.Typer()
    register(a)

    @a.callback()
    def _root() -> None:  # keep "ingest" as a sub-command
        """test root"""

    return a


def test_cli_json(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["ingest", str(FIXTURES / "lanterns.txt"), "--json",
                                      "--chunking", "size", "--max-chars", "100"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["settings"]["method"] == "size" and data["settings"]["max_chars"] == 100
    assert data["documents"][0]["chunk_chars"]["max"] <= 100


def test_cli_table_folder_and_boilerplate(app: typer.Typer, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("lanterns.txt", "webpage.txt", "lanterns.md"):
        shutil.copy(FIXTURES / name, folder / name)
    (folder / "notes.docx").write_text("ignored", encoding="utf-8")
    result = CliRunner().invoke(app, ["ingest", str(folder), "--boilerplate"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "webpage" in result.stdout and "web_noise" in result.stdout
    assert "lanterns" in result.stdout


def test_cli_goldset(app: typer.Typer, tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "lanterns.txt", tmp_path / "lanterns.txt")
    (tmp_path / "gs.yaml").write_text(
        "goldset: lt\nversion: 1\ndescription: test\ndocuments:\n"
        "  - {id: lt-rules, path: lanterns.txt, kind: rulebook, game: Harbour Lanterns,"
        " edition: en-1, language: en}\n"
        "questions:\n"
        "  - {id: q1, language: en, question: \"How do lanterns score?\", pages: [lt-rules#2]}\n",
        encoding="utf-8")
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "gs.yaml"), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["documents"][0]["doc_id"] == "lt-rules"


@pytest.mark.parametrize("args, message", [
    (["--chunking", "words"], "choose one of: heading, page, size"),
    (["--max-chars", "10"], "max_chars must be >= 50"),
])
def test_cli_bad_options_exit_2(app: typer.Typer, args: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["ingest", str(FIXTURES / "lanterns.txt"), *args])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_cli_missing_path_exit_2(app: typer.Typer, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", str(tmp_path / "nope.pdf")])
    assert result.exit_code == 2 and "no such file or folder" in result.output


def test_cli_help_has_example(app: typer.Typer) -> None:
    result = CliRunner().invoke(app, ["ingest", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0 and "Example: rulegauge ingest" in result.output


# --- the real corpora ------------------------------------------------------


def _shared_documents(shared_dir: Path) -> list[Path]:
    corpora = shared_dir / "corpora"
    return [corpora / "secret-hitler" / "Secret_Hitler_Rules.pdf",
            *sorted((corpora / "aisleriot").glob("aisleriot-*.txt")),
            *sorted((corpora / "archaeology-texts").glob("*.txt"))]


@pytest.mark.shared
@pytest.mark.slow  # loads every shared PDF: 15-30 s
def test_ingest_every_shared_document(shared_dir: Path) -> None:
    report = ingest_report(_shared_documents(shared_dir), boilerplate=BoilerplateOptions())
    docs = by_id(report)
    sh = docs["Secret_Hitler_Rules"]
    assert (sh.pages, sh.heading_source) == (7, "detected")
    assert codes(sh) == [(1, "near_empty")]  # the cover
    for lang in ("en", "de", "fr", "es", "ru"):
        d = docs[f"aisleriot-{lang}"]
        assert (d.pages, d.language, d.heading_source, d.warnings) == (90, lang, "detected", ())
        assert d.chunk_chars.max <= 1200
    assert docs["fa-community-tutorial-archaeology"].language == "fa"
    assert docs["ru-rules-excerpt-fossil-dig"].language == "ru"
    web = docs["en-archeotrek-web-page"]
    assert web.boilerplate is not None and dict(web.boilerplate.by_reason)["tail"] >= 10
    assert all(w.code not in ("glyph_debris", "empty") for d in docs.values() for w in d.warnings)


@pytest.mark.shared
@pytest.mark.slow
def test_ingest_srd(shared_dir: Path, srd_pages: PageCache) -> None:
    path = shared_dir / "corpora" / "srd-5.1" / "SRD5.1-CCBY4.0License.pdf"
    # the page texts of the session's one extraction (conftest); cleaning, chunking and checks run here
    doc = ingest_report([path], boilerplate=BoilerplateOptions(), page_cache=srd_pages).documents[0]
    assert (doc.pages, doc.empty_pages, doc.heading_source, doc.headings) == (
        403, 0, "outline", 1958)
    assert doc.headings_located is not None and doc.headings_located >= 1800
    assert doc.boilerplate is not None
    assert dict(doc.boilerplate.by_reason)["repeated"] == 403  # the running header
    assert doc.chunk_chars.max <= 1200
    assert not [w for w in doc.warnings if w.code in ("glyph_debris", "empty", "long")]
