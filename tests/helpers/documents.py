"""Test documents: corpus fixtures folder, PDFs made on the fly, document specs."""

from __future__ import annotations

from pathlib import Path

from rulegauge.corpus.records import DocumentSpec
from tests.helpers.common import FIXTURES as _FIXTURES

FIXTURES = _FIXTURES / "corpus"


def make_pdf(path: Path, pages: list[list[str]], outline: list[tuple[int, str, int]] = (),
             labels: list[tuple[int, int, str, str | None, int]] = (),
             title: str | None = None) -> Path:
    """Write a small PDF whose pages hold ``pages`` (one list of lines per page).

    Text uses a Type0 font with Identity-H encoding and a ToUnicode map (no font
    program is needed for extraction), so any script can be written. ``outline``
    rows are ``(level, title, page_index)`` in order (level 0 = top); ``labels``
    rows are pypdf ``set_page_label`` arguments ``(from, to, style, prefix, start)``.
    """
    from pypdf import PdfWriter
    from pypdf.generic import (
        ArrayObject,
        DecodedStreamObject,
        DictionaryObject,
        NameObject,
        NumberObject,
        TextStringObject,
    )

    chars = sorted({ch for lines in pages for line in lines for ch in line})
    cid = {ch: i + 1 for i, ch in enumerate(chars)}
    cmap_lines = [f"<{cid[ch]:04X}> <{ord(ch):04X}>" for ch in chars if ord(ch) <= 0xFFFF]
    cmap = ("/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            "/CMapName /Test def 1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
            f"{len(cmap_lines)} beginbfchar\n" + "\n".join(cmap_lines) + "\nendbfchar\n"
            "endcmap CMapName currentdict /CMap defineresource pop end end")
    w = PdfWriter()
    to_unicode = DecodedStreamObject()
    to_unicode.set_data(cmap.encode("ascii"))
    descendant = DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/CIDFontType2"),
        NameObject("/BaseFont"): NameObject("/TestSans"),
        NameObject("/CIDSystemInfo"): DictionaryObject({
            NameObject("/Registry"): TextStringObject("Adobe"),
            NameObject("/Ordering"): TextStringObject("Identity"),
            NameObject("/Supplement"): NumberObject(0)}),
        NameObject("/DW"): NumberObject(500)})
    font = DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type0"),
        NameObject("/BaseFont"): NameObject("/TestSans"),
        NameObject("/Encoding"): NameObject("/Identity-H"),
        NameObject("/DescendantFonts"): ArrayObject([w._add_object(descendant)]),
        NameObject("/ToUnicode"): w._add_object(to_unicode)})
    font_ref = w._add_object(font)
    for lines in pages:
        page = w.add_blank_page(612, 792)
        page[NameObject("/Resources")] = DictionaryObject({
            NameObject("/Font"): DictionaryObject({NameObject("/F1"): font_ref})})
        ops = ["BT", "/F1 11 Tf", "72 720 Td", "14 TL"]
        for line in lines:
            ops.append("<" + "".join(f"{cid[ch]:04X}" for ch in line) + "> Tj T*")
        ops.append("ET")
        content = DecodedStreamObject()
        content.set_data("\n".join(ops).encode("ascii"))
        page[NameObject("/Contents")] = w._add_object(content)
    parents: list = []
    for level, text, index in outline:
        parent = parents[level - 1] if level > 0 else None
        item = w.add_outline_item(title=text, page_number=index, parent=parent)
        parents = [*parents[:level], item]
    for args in labels:
        w.set_page_label(*args)
    if title is not None:
        w.add_metadata({"/Title": title})
    with open(path, "wb") as f:
        w.write(f)
    return path


def spec(path: Path | str, doc_id: str = "d", **options: object) -> DocumentSpec:
    return DocumentSpec(doc_id, str(path), "rulebook", "Harbour Lanterns", "en-1", "en", "",
                        tuple(sorted(options.items())))


