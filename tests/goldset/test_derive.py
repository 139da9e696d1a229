"""Gold sets derived from structure: PDF outlines and parallel corpora, and their CLI."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
import typer
import yaml
from typer.testing import CliRunner

from rulegauge.cli.goldset import register
from rulegauge.core.errors import RegistryError, ValidationError
from rulegauge.goldset import parse
from rulegauge.goldset.derive import OUTLINE_TEMPLATES, from_outline
from rulegauge.goldset.parallel import PARALLEL_TEMPLATES, QUESTION_MODES, first_sentence, parallel, read_pages_tsv
from rulegauge.goldset.records import PageRef

# derived and imported gold sets are written beside their output and name the
# documents where they lie (outside the gold set's folder)
load_goldset = partial(parse.load_goldset, allow_outside=True)

# (title, target page, parent index or None): our own toy rulebook outline
OUTLINE = [
    ("Setup", 1, None),        # 0 depth 1; next depth<=1 entry (Turns) on page 3
    ("Components", 1, 0),      # 1 depth 2; next depth<=2 entry ("A") on page 2
    ("A", 2, 0),               # 2 too short
    ("Turns", 3, None),        # 3 depth 1; the last top-level entry: runs to page 8
    ("Actions", 3, 3),         # 4 depth 2; next depth<=2 entry (Scoring) on page 3
    ("Scoring", 3, 3),         # 5 depth 2; next depth<=2 entry (Actions, 2nd) on page 6
    ("Ties", 4, 5),            # 6 depth 3
    ("Actions", 6, 3),         # 7 duplicate title
    ("End of the game", 8, 3),  # 8 depth 2; section ends at the document's end
]


def make_pdf(path: Path, outline=OUTLINE, pages: int = 8) -> Path:
    from pypdf import PdfWriter

    w = PdfWriter()
    for _ in range(pages):
        w.add_blank_page(width=200, height=200)
    items: list[object] = []
    for title, page, parent in outline:
        items.append(w.add_outline_item(title=title, page_number=page - 1,
                                        parent=None if parent is None else items[parent]))
    w.write(path)
    return path


@pytest.fixture
def pdf(tmp_path: Path) -> Path:
    return make_pdf(tmp_path / "toy-rules.pdf")


def test_outline_questions_pages_and_skips(pdf: Path, tmp_path: Path) -> None:
    d = from_outline(pdf, tmp_path / "g.yaml", doc_id="toy", game="Toy", edition="en-1")
    gs = load_goldset(d.path)
    assert gs.derived is True
    assert dict(d.skipped) == {"title too short": 1, "title not unique": 2}
    assert (d.candidates, d.questions) == (len(OUTLINE) - 3, len(OUTLINE) - 3)
    by_id = {q.question_id: q for q in gs.questions}
    assert list(by_id) == ["toy-o0000", "toy-o0001", "toy-o0003", "toy-o0005", "toy-o0006",
                           "toy-o0008"]
    assert by_id["toy-o0005"].question == "Where are the rules for Scoring?"
    assert by_id["toy-o0005"].requirements == ((PageRef("toy", 3),),)
    assert by_id["toy-o0006"].tags == ("from-outline", "depth-3")
    assert gs.documents[0].game == "Toy" and gs.documents[0].path == str(pdf.resolve())


def test_outline_continuation_adds_next_page_as_alternative(pdf: Path, tmp_path: Path) -> None:
    gs = load_goldset(from_outline(pdf, tmp_path / "g.yaml", doc_id="toy",
                                   continuation=True).path)
    reqs = {q.question_id: [str(r) for r in q.requirements[0]] for q in gs.questions}
    assert reqs["toy-o0000"] == ["toy#1", "toy#2"]   # Setup 1, next top-level on 3
    assert reqs["toy-o0001"] == ["toy#1", "toy#2"]   # Components 1, "A" on 2
    assert reqs["toy-o0003"] == ["toy#3", "toy#4"]   # Turns: last top-level, 8 pages
    assert reqs["toy-o0005"] == ["toy#3", "toy#4"]   # Scoring 3, next sibling on 6
    assert reqs["toy-o0006"] == ["toy#4", "toy#5"]   # Ties 4, next shallower on 6
    assert reqs["toy-o0008"] == ["toy#8"]            # last page: nowhere to continue


def test_outline_depth_filter(pdf: Path, tmp_path: Path) -> None:
    d = from_outline(pdf, tmp_path / "g.yaml", min_depth=2, max_depth=2)
    gs = load_goldset(d.path)
    assert {q.tags[1] for q in gs.questions} == {"depth-2"}
    assert dict(d.skipped)["outside depth filter"] == 3  # Setup, Turns, Ties


def test_outline_sampling_is_seeded(pdf: Path, tmp_path: Path) -> None:
    a = from_outline(pdf, tmp_path / "a" / "g.yaml", max_questions=3, seed=7)
    b = from_outline(pdf, tmp_path / "b" / "g.yaml", max_questions=3, seed=7)
    assert a.path.read_text(encoding="utf-8") == b.path.read_text(encoding="utf-8")
    ids = {s: tuple(q.question_id for q in load_goldset(
        from_outline(pdf, tmp_path / f"s{s}.yaml", max_questions=3, seed=s).path).questions)
        for s in range(8)}
    assert all(len(v) == 3 and list(v) == sorted(v) for v in ids.values())
    assert len(set(ids.values())) > 1  # seeds draw different samples
    everything = load_goldset(from_outline(pdf, tmp_path / "all.yaml").path).questions
    assert set(ids[7]) <= {q.question_id for q in everything}


@pytest.mark.parametrize("language", OUTLINE_TEMPLATES.names())
def test_outline_templates_per_language(pdf: Path, tmp_path: Path, language: str) -> None:
    gs = load_goldset(from_outline(pdf, tmp_path / "g.yaml", language=language).path)
    assert {q.language for q in gs.questions} == {language}
    assert gs.documents[0].language == language
    assert "Scoring" in next(q.question for q in gs.questions if q.question_id.endswith("o0005"))


def test_outline_errors(pdf: Path, tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="choose one of: en, de"):
        from_outline(pdf, tmp_path / "g.yaml", language="xx")
    bare = make_pdf(tmp_path / "bare.pdf", outline=[])
    with pytest.raises(ValidationError, match="no bookmarks"):
        from_outline(bare, tmp_path / "g.yaml")
    with pytest.raises(ValidationError) as exc:
        from_outline(tmp_path / "missing.pdf", tmp_path / "g.yaml", min_depth=3, max_depth=2)
    assert len(exc.value.problems) == 2  # both problems reported together
    (tmp_path / "junk.pdf").write_bytes(b"not a pdf")
    with pytest.raises(ValidationError, match="not a readable PDF"):
        from_outline(tmp_path / "junk.pdf", tmp_path / "g.yaml")
    with pytest.raises(ValidationError, match=">= 1"):
        from_outline(pdf, tmp_path / "g.yaml", max_questions=0)
    with pytest.raises(ValidationError, match="no bookmark is usable"):
        from_outline(pdf, tmp_path / "g.yaml", min_depth=4)
    with pytest.raises(ValidationError, match="unknown kind 'manual'"):  # output is validated
        from_outline(pdf, tmp_path / "g.yaml", kind="manual")


# ---------------------------------------------------------------------------
# Parallel corpora: our own three-game toy manual in three languages
# ---------------------------------------------------------------------------

GAMES = {  # file key -> {language: (title, page text)}
    "lantern.xml": {
        "en": ("Lantern Row", "Lantern Row\n\nSetup\nDeal twelve cards face up in a row. "
               "Keep the rest as the stock."),
        "de": ("Laternenreihe", "Laternenreihe\n\nAufbau\nLege zwölf Karten offen in eine "
               "Reihe. Der Rest bildet den Stapel."),
        "ru": ("Ряд фонарей", "Ряд фонарей\n\nРаздача\nВыложите двенадцать карт в ряд. "
               "Остальные карты образуют колоду."),
    },
    "harbour.xml": {
        "en": ("Harbour", "Harbour\n\nSetup\nBuild four harbours from the aces. Move boats "
               "between them."),
        "de": ("Hafen", "Hafen\n\nAufbau\nBaue vier Häfen aus den Assen. Bewege Boote "
               "zwischen ihnen."),
        "ru": ("Гавань", "Гавань\n\nРаздача\nПостройте четыре гавани из тузов. Перемещайте "
               "лодки между ними."),
    },
    "tide.xml": {
        "en": ("Tide", "Tide\n\nSetup\nDeal twelve cards face up in a row. Then wait for "
               "the tide."),
        "de": ("Gezeiten", "Gezeiten\n\nAufbau\nLege zwölf Karten offen in eine Reihe. "
               "Dann warte auf die Flut."),
        "ru": ("Прилив", "Прилив\n\nРаздача\nВыложите двенадцать карт в ряд. Затем ждите "
               "прилива."),
    },
}
ORDER = {"en": ["lantern.xml", "harbour.xml", "tide.xml"],
         "de": ["harbour.xml", "lantern.xml", "tide.xml"],  # another page order: align by file
         "ru": ["lantern.xml", "harbour.xml", "tide.xml"]}


def make_parallel(folder: Path) -> dict[str, Path]:
    docs = {}
    for lang, keys in ORDER.items():
        docs[lang] = folder / f"toy-{lang}.txt"
        docs[lang].write_text("\f".join(GAMES[k][lang][1] for k in keys) + "\f",
                              encoding="utf-8")
        rows = ["page\tfile\ttitle"] + [f"{i}\t{k}\t{GAMES[k][lang][0]}"
                                        for i, k in enumerate(keys, start=1)]
        (folder / f"toy-{lang}.pages.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return docs


@pytest.fixture
def toy_docs(tmp_path: Path) -> dict[str, Path]:
    return make_parallel(tmp_path)


def test_parallel_title_questions_expect_the_answer_page(toy_docs, tmp_path: Path) -> None:
    d = parallel(toy_docs, ["ru", "de"], tmp_path / "p.yaml", game="Toy")
    gs = load_goldset(d.path)
    assert gs.derived and [doc.doc_id for doc in gs.documents] == ["toy-en"]
    assert gs.documents[0].language == "en"
    q = gs.question_by_id
    assert len(gs.questions) == d.questions == d.candidates == 6
    assert q["de-title-p001"].question == "Wie spielt man Laternenreihe?"
    assert q["de-title-p002"].question == "Wie spielt man Hafen?"
    assert q["de-title-p002"].requirements == ((PageRef("toy-en", 2),),)
    assert q["ru-title-p003"].question == "Как играть в «Прилив»?"
    assert q["ru-title-p003"].language == "ru"
    assert q["ru-title-p003"].tags == ("parallel", "mode-title", "source-ru")


def test_parallel_first_sentence_and_ambiguous_questions(toy_docs, tmp_path: Path) -> None:
    d = parallel(toy_docs, ["de"], tmp_path / "p.yaml", modes=("title", "first-sentence"))
    q = load_goldset(d.path).question_by_id
    assert q["de-first-sentence-p002"].question == "Baue vier Häfen aus den Assen."
    # Lantern Row and Tide open with the same sentence: neither can be asked that way
    assert "de-first-sentence-p001" not in q and "de-first-sentence-p003" not in q
    assert dict(d.skipped) == {"first-sentence: same question for several items": 2}


def test_parallel_sampling_is_seeded_and_shared_by_languages(toy_docs, tmp_path: Path) -> None:
    a = parallel(toy_docs, ["ru", "de"], tmp_path / "a" / "p.yaml", max_items=2, seed=3)
    b = parallel(toy_docs, ["ru", "de"], tmp_path / "b" / "p.yaml", max_items=2, seed=3)
    assert a.path.read_text(encoding="utf-8") == b.path.read_text(encoding="utf-8")
    qs = load_goldset(a.path).questions
    pages = {lang: {q.requirements[0][0].page for q in qs if q.language == lang}
             for lang in ("ru", "de")}
    assert len(pages["ru"]) == 2 and pages["ru"] == pages["de"]


def test_parallel_explicit_tables_and_errors(toy_docs, tmp_path: Path) -> None:
    tables = {lang: p.with_name(p.stem + ".pages.tsv") for lang, p in toy_docs.items()}
    moved = tmp_path / "tables"
    moved.mkdir()
    for t in tables.values():
        t.rename(moved / t.name)
    with pytest.raises(ValidationError) as exc:
        parallel(toy_docs, ["ru", "de"], tmp_path / "p.yaml")
    assert len(exc.value.problems) == 3  # every missing table at once
    gs = load_goldset(parallel(toy_docs, ["ru"], tmp_path / "p.yaml", pages_tsv={
        lang: moved / t.name for lang, t in tables.items()}).path)
    assert len(gs.questions) == 3
    with pytest.raises(ValidationError, match="other than the answer language"):
        parallel(toy_docs, ["en"], tmp_path / "p.yaml", pages_tsv={})
    with pytest.raises(RegistryError, match="title, first-sentence"):
        parallel(toy_docs, ["ru"], tmp_path / "p.yaml", modes=("bogus",))
    with pytest.raises(RegistryError, match="parallel question language"):
        parallel({**toy_docs, "xx": toy_docs["ru"]}, ["xx"], tmp_path / "p.yaml")


def test_pages_tsv_problems_are_collected(tmp_path: Path) -> None:
    p = tmp_path / "bad.pages.tsv"
    p.write_text("page\tfile\ttitle\nx\ta.xml\tA\n1\ta.xml\tA\n2\ta.xml\tB\n3\tc.xml\n",
                 encoding="utf-8")
    with pytest.raises(ValidationError) as exc:
        read_pages_tsv(p)
    assert [str(x).split(": ", 1)[0] for x in exc.value.problems] == [
        f"{p}:2", f"{p}:4", f"{p}:5"]
    p.write_text("page\tname\n1\ta\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="file, title"):
        read_pages_tsv(p)


def test_pages_beyond_the_document_are_rejected(toy_docs, tmp_path: Path) -> None:
    t = toy_docs["en"].with_name("toy-en.pages.tsv")
    t.write_text(t.read_text(encoding="utf-8") + "9\textra.xml\tExtra\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="page 9"):
        parallel(toy_docs, ["ru"], tmp_path / "p.yaml")


@pytest.mark.parametrize(("text", "title", "expected"), [
    ("Tide\n\nSetup\nDeal twelve cards. Then wait.", "Tide", "Deal twelve cards."),
    ("Tide\nno sentence end in this body at all", "Tide", "no sentence end in this body at all"),
    ("Title only\n\nGoal", "Title only", None),
    ("Х\nПостройте четыре гавани из тузов. Дальше.", "Х", "Постройте четыре гавани из тузов."),
    ("T\nبازی را چطور شروع کنیم؟ بعد", "T", "بازی را چطور شروع کنیم؟"),
    ("T\nv1.2 of the rules is used here. Next.", "T", "v1.2 of the rules is used here."),
])
def test_first_sentence(text: str, title: str, expected: str | None) -> None:
    assert first_sentence(text, title) == expected


def test_first_sentence_word_cap() -> None:
    assert first_sentence("T\n" + " ".join(["word"] * 50) + ".", "T", max_words=5) == \
        "word word word word word"


def test_registries_cover_the_rulegauge_languages() -> None:
    for reg in (OUTLINE_TEMPLATES, PARALLEL_TEMPLATES):
        assert set(reg.names()) == {"en", "de", "fr", "es", "ru", "fa"}
        assert all("{title}" in reg.get(n) for n in reg.names())
    assert QUESTION_MODES.names() == ["title", "first-sentence"]


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

@pytest.fixture
def app() -> typer.Typer:
    a = typer.Typer()
    register(a)
    return a


def test_cli_from_outline(app, pdf: Path, tmp_path: Path) -> None:
    out = tmp_path / "o.yaml"
    res = CliRunner().invoke(app, ["goldset", "from-outline", str(pdf), "-o", str(out),
                                   "--doc-id", "toy", "--max", "2", "--seed", "1",
                                   "--continuation"])
    assert res.exit_code == 0, res.output
    said = " ".join(res.output.split())  # rich wraps long lines
    assert "2 derived questions" in said and "2 title not unique" in said
    raw = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert raw["derived"] is True and len(raw["questions"]) == 2
    assert out.read_text(encoding="utf-8").startswith("# Derived gold set")


def test_cli_parallel(app, toy_docs, tmp_path: Path) -> None:
    out = tmp_path / "p.yaml"
    args = ["goldset", "parallel", "--ask", "ru", "--ask", "de", "-o", str(out)]
    for lang, p in toy_docs.items():
        args += ["--doc", f"{lang}={p}"]
    res = CliRunner().invoke(app, [*args, "--mode", "title", "--mode", "first-sentence"])
    assert res.exit_code == 0, res.output
    assert len(load_goldset(out).questions) == 3 * 2 + 1 * 2


@pytest.mark.parametrize(("extra", "message"), [
    (["--doc", "en"], "expected LANG=PATH"),
    (["--doc", "ru=a.txt", "--doc", "ru=b.txt"], "given twice"),
    (["--mode", "bogus"], "unknown parallel question mode"),
])
def test_cli_parallel_bad_input_exits_2(app, toy_docs, tmp_path: Path, extra, message) -> None:
    args = ["goldset", "parallel", "--ask", "ru", "-o", str(tmp_path / "p.yaml"),
            "--doc", f"en={toy_docs['en']}", *extra]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 2 and message in " ".join(res.output.split())


def test_cli_from_outline_bad_input_exits_2(app, tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["goldset", "from-outline", str(tmp_path / "none.pdf"),
                                   "-o", str(tmp_path / "o.yaml")])
    assert res.exit_code == 2 and "file not found" in " ".join(res.output.split())


@pytest.mark.parametrize("command", ["from-outline", "parallel", "from-qrels"])
def test_cli_help_has_an_example(app, command: str) -> None:
    res = CliRunner().invoke(app, ["goldset", command, "--help"])
    assert res.exit_code == 0 and "Example: rulegauge goldset " + command in res.output
