"""Output read in CI logs (rulegauge.cli.output, rulegauge.cli.progress): with stdout piped
(not a terminal) no table row is broken across lines, ``--format tsv|markdown|json``
parse, and progress reaches a piped stderr as timestamped lines. Fresh processes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.table import Table

from rulegauge.cli.output import FormatConsole, format_console, make_console, table_rows
from rulegauge.cli.progress import plain_stage
from rulegauge.core.errors import RegistryError
from tests.helpers.common import FIXTURES, LEXICAL, REPO

RULEGAUGE = str(Path(sys.executable).parent / "rulegauge")
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "COLUMNS": "80"}
STAMP = re.compile(r"^\d\d:\d\d:\d\d ")


def _rulegauge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RULEGAUGE, *args], capture_output=True, text=True, cwd=REPO,
                          timeout=600, env=ENV)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    res = _rulegauge("run", "--config", str(LEXICAL), "-o", str(out), "--run-id", "r")
    assert res.returncode == 0, res.stderr
    # progress on a piped stderr: timestamped lines with counts, none of rich's bars
    lines = res.stderr.splitlines()
    assert any(STAMP.match(x) and "arm bm25: searching 0/57" in x for x in lines), res.stderr
    assert any(STAMP.match(x) and "arm bm25: searching 57/57 done in" in x for x in lines)
    assert any(STAMP.match(x) and "building the corpus: 4 documents 4/4 done in" in x for x in lines), res.stderr
    assert "━" not in res.stderr
    return out / "r"


def _tsv_tables(text: str) -> list[list[list[str]]]:
    """Tables of a --format tsv output: blocks apart by blank lines, '# ' lines skipped."""
    tables: list[list[list[str]]] = []
    for block in text.split("\n\n"):
        rows = [line.split("\t") for line in block.splitlines() if line and not line.startswith("# ")]
        if rows:
            assert len({len(r) for r in rows}) == 1, f"ragged TSV block: {rows}"
            tables.append(rows)
    return tables


def _check_forms(*args: str) -> list[list[list[str]]]:
    """Run ARGS in every format; the table form has one body line per TSV row, each row's
    first cell whole on its line; markdown rows have the header's width; json parses."""
    tsv = _rulegauge(*args, "--format", "tsv")
    assert tsv.returncode in (0, 1), tsv.stderr
    tables = _tsv_tables(tsv.stdout)
    assert tables and all(len(t) > 1 for t in tables), tsv.stdout
    table = _rulegauge(*args)
    body = [x for x in table.stdout.splitlines() if x.startswith("│")]
    assert len(body) == sum(len(t) - 1 for t in tables), table.stdout  # no row wrapped
    for row in (r for t in tables for r in t[1:]):
        assert any(line.startswith(f"│ {row[0]} ") for line in body), (row, table.stdout)
    md = _rulegauge(*args, "--format", "markdown")
    assert md.returncode == tsv.returncode, md.stderr
    pipes = [x for x in md.stdout.splitlines() if x.startswith("|")]
    assert pipes and all(x.endswith("|") for x in pipes)
    js = _rulegauge(*args, "--format", "json")
    assert js.returncode == tsv.returncode, js.stderr
    json.loads(js.stdout)
    return tables


def test_gate_rows_whole_when_piped(run_dir: Path) -> None:
    tables = _check_forms("gate", "--baseline", str(run_dir), "--run", str(run_dir), "--policy",
                          str(FIXTURES / "policies" / "tolerant.toml"), "--config",
                          "rrf_k60_bm25+boost")
    assert tables[0][0] == ["status", "check", "expected", "measured", "message"]


def test_compare_rows_whole_when_piped(run_dir: Path) -> None:
    tables = _check_forms("compare", str(run_dir), str(run_dir), "--n-resamples", "200")
    assert any("rrf_k60_bm25+boost" in " ".join(r) for r in tables[0][1:])


def test_ingest_rows_whole_when_piped() -> None:
    tables = _check_forms("ingest", str(FIXTURES / "corpus" / "lanterns.txt"), "--language",
                          "en", "-q")
    assert tables[0][0][0] == "doc"


def test_rulings_import_rows_whole_when_piped(tmp_path: Path) -> None:
    pages = sorted(str(p) for p in (FIXTURES / "rulings").glob("ruling-*.txt"))
    tables = _check_forms("rulings", "import", *pages, "--out", str(tmp_path))
    assert len(tables[0]) == len(pages) + 1


def test_validate_line_is_whole_when_piped() -> None:
    res = _rulegauge("validate", str(REPO / "goldsets" / "sample.yaml"))
    assert res.returncode == 0, res.stderr
    assert len(res.stdout.strip().splitlines()) == 1 and len(res.stdout) > 80
    # progress per document on the piped stderr: the start and the end of each stage
    lines = res.stderr.splitlines()
    assert any(STAMP.match(x) and x.endswith("validate: building 4 documents 0/4")
               for x in lines), res.stderr
    assert any(STAMP.match(x) and "validate: checking 57 questions 1/1 done in" in x for x in lines)


def test_format_console_renders_each_form() -> None:
    table = Table("config", "hit@5", title="run x")
    table.add_row("rrf_k60_bm25+dense+boost_w-dense0.5|x", "0.750")
    table.add_row("tab\there", "[b]0.5[/b]")
    assert table_rows(table) == ("run x", ["config", "hit@5"],
                                 [["rrf_k60_bm25+dense+boost_w-dense0.5|x", "0.750"],
                                  ["tab here", "[b]0.5[/b]"]])
    assert table_rows(table, markup=True)[2][1] == ["tab here", "0.5"]
    con = FormatConsole("json")
    con.print("a note", table)
    assert con.tables[0]["rows"] == [["rrf_k60_bm25+dense+boost_w-dense0.5|x", "0.750"],
                                     ["tab here", "[b]0.5[/b]"]]
    assert con.notes == ["a note"]
    with pytest.raises(RegistryError, match="unknown output format 'csvx'"), format_console("csvx"):
        pass
    assert make_console().width >= 4000  # pytest captures stdout: not a terminal


def test_plain_progress_lines_are_throttled() -> None:
    out: list[str] = []

    class Sink:
        def print(self, text: str, **_: object) -> None:
            out.append(text)

    now = [0.0]
    stage = plain_stage(Sink(), clock=lambda: now[0], every_s=5.0)  # type: ignore[arg-type]
    with stage("arm dense: embedding passage texts", 3000) as advance:  # type: ignore[attr-defined]
        for _ in range(30):
            now[0] += 1.0
            advance(100)
    body = [x[9:] for x in out]
    assert body[0] == "arm dense: embedding passage texts 0/3000"
    assert body[1:-1] == [f"arm dense: embedding passage texts {n}/3000" for n in (500, 1000, 1500, 2000, 2500)]
    assert body[-1] == "arm dense: embedding passage texts 3000/3000 done in 30.0s"
    assert all(STAMP.match(x) for x in out)
