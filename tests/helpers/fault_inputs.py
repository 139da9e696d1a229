"""Builders of hostile and broken inputs for the fault tier (tests/faults).

Each builder writes into a case folder ``root`` and returns nothing; the case's
command line refers to the files by name (``{root}`` is substituted). Everything
here is our own writing: a tiny rules text about an invented game.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from tests.helpers.documents import make_pdf

RULES = ("Setup. Each player takes five lantern tokens and a harbour board.\f"
         "Turn order. On your turn move your boat up to three harbour spaces.\f"
         "Scoring. A lit lantern scores two points at the end of the game.\n")

LEXICAL = """[defaults]
k = 60
depth = 100
[grid]
k = [60]
arms = [["bm25", "boost"]]
"""


def goldset_text(documents: str = "", questions: str = "", head: str = "") -> str:
    docs = documents or ("  - {id: rb, path: docs/rules.txt, kind: rulebook, game: Harbour, "
                         "edition: en-1, language: en}\n")
    qs = questions or ('  - {id: q1, language: en, question: "How far does a boat move?", '
                       "pages: [rb#2]}\n")
    return f"goldset: hostile\nversion: 1\n{head}documents:\n{docs}questions:\n{qs}"


def write(root: Path, name: str, text: str | bytes) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def tiny(root: Path, documents: str = "", questions: str = "", head: str = "") -> None:
    """A valid gold set ``g.yaml`` over ``docs/rules.txt`` plus ``lexical.toml``."""
    write(root, "docs/rules.txt", RULES)
    write(root, "g.yaml", goldset_text(documents, questions, head))
    write(root, "lexical.toml", LEXICAL)


def with_config(text: str):  # type: ignore[no-untyped-def]
    """Builder: the tiny gold set and a config file ``c.toml`` holding ``text``."""
    def build(root: Path) -> None:
        tiny(root)
        write(root, "c.toml", text)
    return build


def with_config_bytes(data: bytes):  # type: ignore[no-untyped-def]
    def build(root: Path) -> None:
        tiny(root)
        write(root, "c.toml", data)
    return build


def with_goldset(text: str | bytes, docs: dict[str, str | bytes] | None = None):  # type: ignore[no-untyped-def]
    """Builder: ``g.yaml`` holding ``text`` (plus ``docs/rules.txt`` and ``docs``)."""
    def build(root: Path) -> None:
        tiny(root)
        write(root, "g.yaml", text)
        for name, body in (docs or {}).items():
            write(root, name, body)
    return build


def with_document(name: str, body: str | bytes, kind: str = "rulebook"):  # type: ignore[no-untyped-def]
    """Builder: a gold set whose only document is ``docs/<name>``."""
    def build(root: Path) -> None:
        tiny(root, documents=f"  - {{id: rb, path: docs/{name}, kind: {kind}, game: Harbour, "
             "edition: en-1, language: en}\n", questions="  - {id: q1, language: en, "
             'question: "How far?", pages: []}\n')
        write(root, f"docs/{name}", body)
    return build


def yaml_bomb(levels: int = 9) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels + 1):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 9)}]")
    return "\n".join(lines) + "\n" + goldset_text()


def pdf_document(encrypt_user: str | None = None, encrypt_owner: str | None = None):  # type: ignore[no-untyped-def]
    """Builder: a gold set over ``docs/rules.pdf`` (two pages of text), encrypted
    with AES-256 when a password is given (pypdf + cryptography)."""
    def build(root: Path) -> None:
        from pypdf import PdfReader, PdfWriter

        tiny(root, documents="  - {id: rb, path: docs/rules.pdf, kind: rulebook, game: Harbour, "
             "edition: en-1, language: en}\n")
        path = root / "docs" / "rules.pdf"
        make_pdf(path, [["Setup. Each player takes five lanterns."],
                        ["Turn order. Move your boat up to three spaces."]])
        if encrypt_user is not None or encrypt_owner is not None:
            w = PdfWriter(clone_from=PdfReader(path))
            w.encrypt(user_password=encrypt_user or "", owner_password=encrypt_owner,
                      algorithm="AES-256")
            with open(path, "wb") as fh:
                w.write(fh)
    return build


def jsonl_document(lines: list[str]):  # type: ignore[no-untyped-def]
    return with_document("pages.jsonl", "\n".join(lines) + "\n")


def runs_with_truncated_table(root: Path) -> None:
    """Two synthetic runs under ``runs/``; one run's ``metrics.parquet`` cut in half."""
    from tests.helpers.fault_templates import synthetic_run as write_synthetic_run  # memoised

    write_synthetic_run(root / "runs" / "good", created="2025-01-01T00:00:00+00:00")
    bad = write_synthetic_run(root / "runs" / "bad", seed=1, created="2025-01-02T00:00:00+00:00")
    target = bad / "metrics.parquet"
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    pq.read_metadata(root / "runs" / "good" / "metrics.parquet")  # the other run is intact


def runs(root: Path) -> None:
    from tests.helpers.fault_templates import synthetic_run as write_synthetic_run  # memoised

    write_synthetic_run(root / "runs" / "good")


def runs_with_bad_manifest(root: Path) -> None:
    runs(root)
    write(root, "runs/broken/manifest.json", "{not json")


def ingest_folder(root: Path) -> None:
    """A folder of documents that also holds an unrelated JSONL export."""
    write(root, "folder/rules.txt", RULES)
    events = [json.dumps({"event": "click", "user": i, "ts": 1700000000 + i}) for i in range(2000)]
    write(root, "folder/analytics.jsonl", "\n".join(events) + "\n")
    make_pdf(root / "folder" / "leaflet.pdf", [["Quick start. Light a lantern to begin."]])


def ruling_page(root: Path) -> None:
    """A production ruling page (our own fixture) to import."""
    from tests.helpers.common import FIXTURES

    write(root, "ruling.txt", (FIXTURES / "rulings" / "ruling-saltmarsh-de.txt").read_bytes())
