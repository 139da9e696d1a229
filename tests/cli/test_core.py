"""The core CLI commands through typer's CliRunner."""

from __future__ import annotations

import subprocess
import sys

import pytest
from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.store.rundir import Run
from tests.helpers.common import LEXICAL, REPO

runner = CliRunner()


def test_help_lists_commands_with_examples():
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0
    for cmd in ("run", "list", "validate", "export", "goldset"):
        assert cmd in res.output
    for cmd in ("run", "list", "validate", "export"):
        sub = runner.invoke(app, [cmd, "--help"])
        assert sub.exit_code == 0 and "Example:" in sub.output, cmd


def test_list_shows_registries():
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 0
    for name in ("bm25", "boost", "external", "rrf", "recall@k", "nDCG@k", "MAP@k", "questions", "fused",
                 "fence_pass", "Success->hit", "AP->MAP"):
        assert name in res.output


def test_validate_ok_and_bad(tmp_path):
    res = runner.invoke(app, ["validate", str(REPO / "goldsets" / "sample.yaml")])
    assert res.exit_code == 0 and "OK" in res.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("goldset: x\nversion: 1\ndocuments: []\nquestions:\n"
                   "  - {id: a, language: en, question: '', pages: [nope]}\n")
    res = runner.invoke(app, ["validate", str(bad)])
    assert res.exit_code == 2
    assert "bad.yaml" in res.output


def test_run_prints_summary_and_writes_run(tmp_path):
    res = runner.invoke(app, ["run", "--config", str(LEXICAL), "--out", str(tmp_path), "--run-id", "cli"])
    assert res.exit_code == 0, res.output
    assert "rrf_k60_bm25+boost" in res.output and "recall@5" in res.output
    assert (tmp_path / "cli" / "fused.parquet").exists()


def test_run_bad_param_and_bad_config_exit_2(tmp_path):
    res = runner.invoke(app, ["run", "--config", str(LEXICAL), "--param", "bm25k1=3", "--out", str(tmp_path)])
    assert res.exit_code == 2 and "NAME.KEY=VALUE" in res.output
    bad = tmp_path / "grid.toml"
    bad.write_text("[grid]\narms = [['nosuch']]\n")
    res = runner.invoke(app, ["run", "--config", str(bad), "--out", str(tmp_path)])
    assert res.exit_code == 2 and "unknown arm 'nosuch'" in res.output


@pytest.mark.slow
def test_run_metrics_of_the_users_choice_with_other_tools_names(tmp_path):
    """`-m` in a fresh process: aliases map to canonical names, repeats collapse."""
    res = subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()", "run",
                          "--config", str(LEXICAL),
                          "--out", str(tmp_path), "--run-id", "m", "-m", "recall@3", "-m", "nDCG@20",
                          "-m", "RR@10", "-m", "Success@5", "-m", "hit_rate@5", "-m", "AP@10"],
                         capture_output=True, text=True, cwd=REPO, timeout=300)
    assert res.returncode == 0, res.stderr
    run = Run(tmp_path / "m")
    assert run.manifest["metrics"] == ["recall@3", "nDCG@20", "MRR@10", "hit@5", "MAP@10"]
    assert list(dict.fromkeys(run.table("metrics")["metric"])) == run.manifest["metrics"]


def test_grid_file_metrics_and_bad_names_exit_2(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text('metrics = ["P@3", "ndcg@5"]\n' + LEXICAL.read_text(encoding="utf-8"))
    res = runner.invoke(app, ["run", "--config", str(grid), "--out", str(tmp_path), "--run-id", "g"])
    assert res.exit_code == 0, res.output
    assert Run(tmp_path / "g").manifest["metrics"] == ["P@3", "nDCG@5"]
    res = runner.invoke(app, ["run", "--config", str(LEXICAL), "--out", str(tmp_path), "--run-id", "bad",
                              "-m", "recall@5", "-m", "hits@5", "-m", "nDCG", "-m", "nope@5"])
    assert res.exit_code == 2  # every bad name at once: refused (a peer's), no cutoff, unknown
    assert "metric 'hits@5' (ranx) is not computed by rulegauge" in res.output and "needs a cutoff" in res.output
    assert "unknown metric 'nope@5'" in res.output
    assert not (tmp_path / "bad").exists()


def test_the_run_command_defaults_are_defined_once():
    import re

    from tests.helpers.common import REPO

    text = "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "rulegauge").rglob("*.py"))
    for name in ("DEFAULT_MAX_FUSED_ROWS", "SUMMARY_ROWS"):
        assert len(re.findall(rf"^{name}\s*=", text, flags=re.MULTILINE)) == 1, name


def test_run_chunking_page_scores_whole_documents_of_an_imported_collection(tmp_path):
    """``--chunking page``: one chunk per page, so each document of an imported BEIR
    collection is one chunk (depth counts documents); an unknown method exits 2."""
    from rulegauge.goldset.beir import BeirImport, import_beir
    from tests.helpers.common import FIXTURES

    imported = import_beir(BeirImport(FIXTURES / "beir" / "tidepool", tmp_path / "tp"))
    long_doc = '{"_id": "long", "title": "A long one", "text": "' + "Tide pools hold life. " * 120 + '"}\n'
    with imported.shards[0].open("a", encoding="utf-8") as fh:  # a document of several default chunks
        fh.write(long_doc)
    base = ["run", "-g", str(imported.goldset), "-c", str(LEXICAL), "-o", str(tmp_path / "runs")]
    for method, run_id in (("page", "whole"), (None, "chunks")):
        res = runner.invoke(app, [*base, "--run-id", run_id, *(["--chunking", method] if method else [])])
        assert res.exit_code == 0, res.output
        # one game, only rulebooks: the boost arm of the grid says it acts as a lexical arm (issue 35 item 5)
        assert "warning: arm boost: every chunk is in a rulebook of the corpus's one game" in res.output
    whole, chunks = (Run(tmp_path / "runs" / r) for r in ("whole", "chunks"))
    assert whole.manifest["corpus"]["chunking"]["method"] == "page"
    assert len(whole.table("chunks")) == 43 < len(chunks.table("chunks"))
    bad = runner.invoke(app, [*base, "--run-id", "bad", "--chunking", "whole"])
    assert bad.exit_code == 2 and "unknown chunking method 'whole'" in bad.output
    assert not (tmp_path / "runs" / "bad").exists()
