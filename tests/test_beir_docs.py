"""docs/real-corpora.md "Run a BEIR collection": its three commands, run as written.

The commands are read from the section (never copied here) and run one after another in a
fresh folder, each in a fresh process; repository paths in them (``tests/``, ``docs/``,
``benchmarks/``) are taken from this checkout, ``rulegauge`` is the installed console
script and ``python`` this interpreter. Lexical arms only: three fresh processes.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers.common import REPO

DOC = REPO / "docs" / "real-corpora.md"


def section_commands() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    body = text.split("## Run a BEIR collection", 1)[1].split("\n## ", 1)[0]
    lines = [line.strip() for line in body.splitlines() if re.match(r"^    (rulegauge|python) ", line)]
    return [shlex.split(line) for line in lines]


def resolved(words: list[str]) -> list[str]:
    exe = shutil.which("rulegauge", path=str(Path(sys.executable).parent)) or "rulegauge"
    head = {"rulegauge": [exe], "python": [sys.executable]}[words[0]]
    return head + [str(REPO / w) if w.startswith(("tests/", "docs/", "benchmarks/")) else w for w in words[1:]]


def test_the_section_has_the_three_commands():
    cmds = section_commands()
    assert [c[:3] for c in cmds] == [["rulegauge", "goldset", "import-beir"],
                                     ["rulegauge", "run", "-g"], ["python", "benchmarks/reproduce.py",
                                                                  "tests/fixtures/beir/tidepool"]]


def test_the_commands_run_as_written(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    out = []
    for words in section_commands():
        res = subprocess.run(resolved(words), cwd=tmp_path, capture_output=True, text=True, env=env, timeout=900)
        assert res.returncode == 0, (words, res.stdout[-2000:], res.stderr[-2000:])
        out.append(res.stdout)
    assert "16 questions" in out[0] and (tmp_path / "tidepool-gold" / "goldset.yaml").is_file()
    assert "run tidepool: 16 questions" in out[1] and (tmp_path / "runs" / "tidepool" / "manifest.json").is_file()
    assert "arm-bm25" in out[1] and "arm-bm25" in out[2] and "recall@100" in out[1]
    manifest = json.loads((tmp_path / "runs" / "tidepool" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["depth_unit"] == "page" and manifest["corpus"]["chunking"]["method"] == "page"
    # the figures the section states for bm25 are the ones the commands give
    text = DOC.read_text(encoding="utf-8")
    bm25 = {m: line.split()[2] for line in out[2].splitlines() for m in ("nDCG@10", "recall@100")
            if line.startswith("arm-bm25 ") and line.split()[1] == m}
    assert f"`arm-bm25` nDCG@10 {bm25['nDCG@10']}, R@100 {bm25['recall@100']}" in text
