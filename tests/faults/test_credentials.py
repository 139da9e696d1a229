"""Credentials never stored, never printed in part (issue 33, item 2; marker ``faults``).

Secrets are planted in every place a request carries them: a bearer token from the
environment, a URL's ``user:password``, a query key (``?api_key=``), a cookie, an LLM
judge's API key and its base URL's password. The real commands (``rulegauge run`` with
two ``http`` arms, ``rulegauge judges llm``) run against an endpoint that echoes every
request into its replies, errors included (:mod:`tests.helpers.echo_endpoint`); then
every file the commands wrote and everything they printed is searched for each secret
and for every 8-character piece of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rulegauge.judging.poolfile import FoundBy, Pool, PoolPage, PoolQuestion, write_pool
from tests.helpers import fault_inputs as fi
from tests.helpers.common import REPO
from tests.helpers.echo_endpoint import echo_endpoint

pytestmark = pytest.mark.faults

SECRETS = {
    "RG_T_SEARCH_TOKEN": "tokA9f3Kq7Zp2Lm8Wx",
    "url password": "pwB7d2Rr9Tk4Nq1Vy",
    "query key": "qkC5h8Jm3Xs6Pw0Ez",
    "cookie": "ckD4g7Hn2Yt9Qv5Fu",
    "RG_T_JUDGE_KEY": "jkE3k6Lp9Sw2Rx8Mz",
    "judge url password": "jpF2m5Qr8Ut1Wy4Xa",
}
QUESTIONS = "".join(f'  - {{id: q{i}, language: en, question: "How far does a boat move {i}?", '
                    "pages: [rb#2]}\n" for i in range(1, 5))


def _pieces(secret: str) -> set[str]:
    return {secret[i:i + 8] for i in range(len(secret) - 7)}


def _config(url: str) -> str:
    host = url.split("://", 1)[1]
    base = f"http://ann:{SECRETS['url password']}@{host}/search?api_key={SECRETS['query key']}"
    arm = (f'kind = "http"\nurl = "{base}"\n'
           'body = { q = "{question}", qid = "{question_id}", k = "{depth}" }\n'
           'doc = "doc"\npage = "page"\nscore = "score"\non_unmatched = "keep"\n'
           "max_error_rate = 0.9\nretries = 0\ntimeout_s = 20\n")
    headers = ('headers = { Authorization = "Bearer {env:RG_T_SEARCH_TOKEN}", '
               f'Cookie = "session={SECRETS["cookie"]}; theme=dark" }}\n')
    return (f"[arms.live]\n{arm}{headers}[arms.basic]\n{arm}"  # basic: user:password as Basic
            '[grid]\nk = [60]\narms = [["live", "basic"]]\n')


def _suite(url: str) -> str:
    host = url.split("://", 1)[1]
    return (f'[suite]\nname = "j"\n[answerers.local]\nprovider = "openai"\nmodel = "stub"\n'
            f'endpoint = "http://judge:{SECRETS["judge url password"]}@{host}"\nretries = 0\n'
            '[answerers.local.parameters]\napi_key_env = "RG_T_JUDGE_KEY"\n'
            '[judge]\nanswerer = "local"\n')


def _pool() -> Pool:
    found = (FoundBy("r1", "live", "arm", 1),)
    qs = (PoolQuestion("q1", "How far does a boat move?", "en", ()),)
    pages = (PoolPage("q1", "rb#1", found, "Setup. Each player takes five lantern tokens."),
             PoolPage("q1", "rb#2", found, "UNPARSEABLE turn order."),
             PoolPage("q1", "rb#3", found, "FAILS scoring."))
    return Pool("hostile", "g.yaml", "0" * 64, ("r1",), 10, (), qs, pages)


def _rulegauge(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "250", "HF_HUB_OFFLINE": "1",
           "RULEGAUGE_CACHE": str(root / "cache"), "RG_T_SEARCH_TOKEN": SECRETS["RG_T_SEARCH_TOKEN"],
           "RG_T_JUDGE_KEY": SECRETS["RG_T_JUDGE_KEY"]}
    return subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()", *args],
                          cwd=root, env=env, capture_output=True, text=True, timeout=300)


def test_no_secret_nor_any_8_character_piece_of_one_is_stored_or_printed(tmp_path: Path) -> None:
    fi.tiny(tmp_path, questions=QUESTIONS)
    with echo_endpoint() as url:
        (tmp_path / "c.toml").write_text(_config(url), encoding="utf-8")
        (tmp_path / "s.toml").write_text(_suite(url), encoding="utf-8")
        write_pool(_pool(), tmp_path / "pool.jsonl")
        ran = _rulegauge(tmp_path, "run", "-g", "g.yaml", "-c", "c.toml", "-o", "runs",
                         "--run-id", "r1")
        judged = _rulegauge(tmp_path, "judges", "llm", "pool.jsonl", "--suite", "s.toml",
                            "-o", "judged/llm.jsonl")
    printed = ran.stdout + ran.stderr + judged.stdout + judged.stderr
    assert "Traceback" not in printed, printed
    assert ran.returncode == 0, printed
    assert judged.returncode == 1 and "every call failed" in printed, printed  # the 401 page
    run = tmp_path / "runs" / "r1"
    arms = json.loads((run / "manifest.json").read_text())["arms"]
    assert arms["live"]["errors"] == 3 and arms["basic"]["errors"] == 3  # q2, q3, q4: error rows
    assert arms["live"]["unmatched_count"] == 1  # q1's echoed header as a doc id
    assert arms["live"]["foreign_hits"] == 1  # kept at its rank, scrubbed: the grep below finds no piece of it
    journal = [json.loads(x) for x in (run / "arms-journal" / "live.jsonl").read_text().splitlines()]
    assert all("reply" not in r for r in journal)  # hits, never the body
    assert next(h["id"] for r in journal if r["question_id"] == "q1" for h in r["hits"]) == "rb#2"
    summary = json.loads((tmp_path / "judged" / "llm.jsonl.summary.json").read_text())
    assert summary["judged"] == 1 and summary["unparseable_pairs"] == 1
    assert summary["unparseable"][0]["reply"].startswith("I will not grade this")
    files = [p for folder in (tmp_path / "runs", tmp_path / "judged") for p in folder.rglob("*")
             if p.is_file()]
    assert len(files) > 10
    for name, secret in SECRETS.items():
        for piece in _pieces(secret):
            assert piece not in printed, (name, piece, printed)
            stored = [str(p) for p in files if piece.encode() in p.read_bytes()]
            assert not stored, (name, piece, stored)
