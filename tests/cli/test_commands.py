"""Every registered command, each in a fresh process (the ``rulegauge`` console script).

The commands are enumerated from the typer app, never listed by hand: a command
without a case in :data:`CASES` fails :func:`test_every_command_has_a_case`. For
each command: ``rulegauge <cmd> --help`` runs in a subprocess and shows an example;
the example parses against the command's options; and the command runs for real
in a fresh subprocess on a small fixture run (built once per session from
``tests/fixtures/configs/lexical.toml``). A fresh process is the point: a command
that works only because another command's imports registered something (e.g.
``rulings score`` and the ruling tables) fails here.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer.main

from rulegauge.cli import app
from tests.helpers.common import FIXTURES, LEXICAL, REPO
from tests.helpers.documents import make_pdf

CID = "rrf_k60_bm25+boost"
SAMPLE = REPO / "goldsets" / "sample.yaml"
RULINGS = FIXTURES / "rulings"


def _walk(cmd: Any, path: tuple[str, ...]) -> list[tuple[str, ...]]:
    # typer vendors its own click: groups are recognised by their sub-commands
    if getattr(cmd, "commands", None):
        return [p for name, sub in sorted(cmd.commands.items()) for p in _walk(sub, (*path, name))]
    return [path]


ROOT = typer.main.get_command(app)
COMMANDS = _walk(ROOT, ())


def _command(path: tuple[str, ...]) -> Any:
    cmd: Any = ROOT
    for name in path:
        cmd = cmd.commands[name]
    return cmd


def _examples(path: tuple[str, ...]) -> list[list[str]]:
    """The argument lists of every ``Example:`` in the command's docstring (each one's
    lines joined up to the next blank line or ``Example:``), without the leading
    ``rulegauge <command>``."""
    text = _command(path).help or ""
    assert "Example:" in text, f"rulegauge {' '.join(path)}: docstring has no 'Example:'"
    out = []
    for part in text.split("Example:")[1:]:
        tail = part.strip().split("\n\n")[0]
        words = shlex.split(" ".join(line.strip() for line in tail.splitlines()))
        assert words[:1 + len(path)] == ["rulegauge", *path], f"example does not start with rulegauge {path}"
        out.append(words[1 + len(path):])
    return out


def _example(path: tuple[str, ...]) -> list[str]:
    """The first example's argument list."""
    return _examples(path)[0]


def _rulegauge() -> list[str]:
    script = Path(sys.executable).with_name("rulegauge")
    return [str(script)] if script.exists() else [sys.executable, "-c",
                                                  "from rulegauge.cli import main; main()"]


def rulegauge(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``rulegauge ARGS`` in a fresh process (offline, wide output, no colour)."""
    env = {**os.environ, "COLUMNS": "250", "NO_COLOR": "1", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.run([*_rulegauge(), *map(str, args)], capture_output=True, text=True,
                          cwd=cwd or REPO, env=env, timeout=600)


def _ok(res: subprocess.CompletedProcess[str], code: int = 0) -> str:
    assert res.returncode == code, f"exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    assert "Traceback" not in res.stderr, res.stderr
    return res.stdout + res.stderr


# ---------------------------------------------------------------------------
# help and examples (one subprocess per command)
# ---------------------------------------------------------------------------

def test_the_walk_finds_the_commands() -> None:
    assert {("run",), ("export",), ("rulings", "score"), ("baseline", "save")} <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_example_parses(path: tuple[str, ...]) -> None:
    # click parses the example's options and arguments: an unknown option, a missing
    # required one or a value of the wrong type raises a UsageError
    for args in _examples(path):
        with _command(path).make_context(" ".join(path), list(args)) as ctx:
            assert ctx.params is not None


def test_a_bad_example_would_not_parse() -> None:
    with pytest.raises(Exception, match="No such option"):
        _command(("export",)).make_context("export", ["latest", "--no-such-option"])
    with pytest.raises(Exception, match="Missing"):
        _command(("gate",)).make_context("gate", ["--run", "latest"])


@pytest.mark.slow  # one interpreter start per command (~1-4 s each on a loaded machine)
@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_in_a_fresh_process_shows_the_example(path: tuple[str, ...]) -> None:
    out = _ok(rulegauge(*path, "--help"))
    assert "Example" in out, out
    words = " ".join(_example(path)).split()[:1]  # the example's first word, as shown
    assert all(w in out for w in words), (words, out)


# ---------------------------------------------------------------------------
# each command for real, in a fresh process, on a fixture run
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Fixture:
    runs: Path      # the --runs-dir holding the fixture run
    run: Path       # the fixture run directory (lexical arms, the embedded sample)
    build: subprocess.CompletedProcess[str]


@pytest.fixture(scope="session")
def fixture_run(tmp_path_factory: pytest.TempPathFactory) -> Fixture:
    runs = tmp_path_factory.mktemp("cmd-runs")
    res = rulegauge("run", "--config", LEXICAL, "--out", runs, "--run-id", "fx")
    _ok(res)
    return Fixture(runs, runs / "fx", res)


Case = Callable[[Fixture, Path], None]


def _run(fx: Fixture, tmp: Path) -> None:
    out = fx.build.stdout
    assert CID in out and "recall@5" in out
    assert (fx.run / "manifest.json").exists() and (fx.run / "metrics.parquet").exists()


def _list(fx: Fixture, tmp: Path) -> None:
    out = _ok(rulegauge("list"))
    assert "bm25" in out and "recall@k" in out


def _validate(fx: Fixture, tmp: Path) -> None:
    assert "OK" in _ok(rulegauge("validate", SAMPLE))


def _ingest(fx: Fixture, tmp: Path) -> None:
    out = _ok(rulegauge("ingest", FIXTURES / "corpus" / "lanterns.txt", "--json"))
    assert "chunks" in out


def _from_qrels(fx: Fixture, tmp: Path) -> None:
    (tmp / "qrels.txt").write_text("q1 0 bw-rules#3 1\nq2::1 0 bw-rules#4 1\n"
                                   "q2::1 0 bw-faq#1 1\n", encoding="utf-8")
    (tmp / "qs.tsv").write_text("q1\tHow many coins?\nq2\tCan I act twice?\n", encoding="utf-8")
    out = _ok(rulegauge("goldset", "from-qrels", tmp / "qrels.txt", tmp / "qs.tsv",
                      "--documents", SAMPLE, "-o", tmp / "g.yaml"))
    assert "2 questions" in out and (tmp / "g.yaml").exists()


def _import_beir(fx: Fixture, tmp: Path) -> None:
    res = rulegauge("goldset", "import-beir", FIXTURES / "beir" / "tidepool", "-o", tmp / "tp")
    assert "16 questions" in _ok(res) and (tmp / "tp" / "goldset.yaml").exists()
    assert "importing corpus.jsonl" in res.stderr  # progress on stderr


def _import_trec(fx: Fixture, tmp: Path) -> None:
    trec = FIXTURES / "trec" / "tidepool"
    res = rulegauge("goldset", "import-trec", trec / "topics.txt", trec / "qrels.txt", "--corpus",
                    trec / "corpus.tsv", "-o", tmp / "tt")
    assert "16 questions" in _ok(res) and (tmp / "tt" / "goldset.yaml").exists()
    assert "OK" in _ok(rulegauge("validate", tmp / "tt" / "goldset.yaml"))


def _from_outline(fx: Fixture, tmp: Path) -> None:
    pdf = make_pdf(tmp / "toy.pdf", [["Setup rules here"], ["Turn order rules"]],
                   outline=[(0, "Setup of the game", 0), (0, "Turn order", 1)])
    out = _ok(rulegauge("goldset", "from-outline", pdf, "-o", tmp / "o.yaml", "--doc-id", "toy"))
    assert "derived questions" in out and (tmp / "o.yaml").exists()


def _parallel(fx: Fixture, tmp: Path) -> None:
    pages = {"en": [("Harbour", "Harbour\n\nEach boat docks in the harbour."),
                    ("Lanterns", "Lanterns\n\nLight a lantern for two oil.")],
             "de": [("Hafen", "Hafen\n\nJedes Boot legt im Hafen an."),
                    ("Laternen", "Laternen\n\nEine Laterne kostet zwei Öl.")]}
    args: list[str | Path] = []
    for lang, rows in pages.items():
        doc = tmp / f"toy-{lang}.txt"
        doc.write_text("\f".join(body for _, body in rows) + "\f", encoding="utf-8")
        tsv = ["page\tfile\ttitle"] + [f"{i}\t{f}.xml\t{t}" for i, (t, _), f
                                       in zip((1, 2), rows, ("harbour", "lantern"), strict=True)]
        doc.with_name(f"toy-{lang}.pages.tsv").write_text("\n".join(tsv) + "\n", encoding="utf-8")
        args += ["--doc", f"{lang}={doc}"]
    out = _ok(rulegauge("goldset", "parallel", *args, "--ask", "de", "-o", tmp / "p.yaml"))
    assert "derived questions" in out and (tmp / "p.yaml").exists()


def _answer_and_answerers(fx: Fixture, tmp: Path) -> None:
    shutil.copytree(fx.run, tmp / "runs" / "ans")
    out = _ok(rulegauge("answer", "ans", "-a", "extractive", "-c", CID, "--runs-dir", tmp / "runs"))
    assert "extractive" in out
    out = _ok(rulegauge("answerers", "ans", "--config", CID, "--runs-dir", tmp / "runs"))
    assert "extractive" in out


def _compare(fx: Fixture, tmp: Path) -> None:
    out = _ok(rulegauge("compare", "fx", "fx", "--config", CID, "--n-resamples", "200",
                      "--runs-dir", fx.runs))
    assert "recall@5" in out and "p (holm)" in out


def _gate(fx: Fixture, tmp: Path) -> None:
    policy = tmp / "policy.toml"
    policy.write_text(f'[gate]\nconfig = "{CID}"\nn_resamples = 200\n'
                      '[metrics."recall@5"]\nmax_drop = 0\n', encoding="utf-8")
    out = _ok(rulegauge("gate", "--baseline", "fx", "--run", "fx", "--policy", policy,
                      "--runs-dir", fx.runs, "--junit", tmp / "g.xml"))
    assert "PASS" in out and (tmp / "g.xml").exists()


def _baseline_save(fx: Fixture, tmp: Path) -> None:
    out = _ok(rulegauge("baseline", "save", "fx", "b", "--dir", tmp / "baselines",
                      "--runs-dir", fx.runs))
    assert "saved" in out and (tmp / "baselines" / "b" / "metrics.parquet").exists()


def _bands(fx: Fixture, tmp: Path) -> None:
    assert CID in _ok(rulegauge("bands", "fx", "--runs-dir", fx.runs))


def _report(fx: Fixture, tmp: Path) -> None:
    _ok(rulegauge("report", "fx", "-o", tmp / "r.html", "--runs-dir", fx.runs))
    assert (tmp / "r.html").read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype")


def _tune(fx: Fixture, tmp: Path) -> None:
    import json

    out = json.loads(_ok(rulegauge("tune", "fx", "--folds", "3", "--json", "--runs-dir", fx.runs)))
    assert out["n_folds"] == 3 and sum(out["wins"].values()) == 3


def _power(fx: Fixture, tmp: Path) -> None:
    out = _ok(rulegauge("power", "fx", "-m", "recall@5", "-c", "arm-bm25", "--sd", "0.3", "--delta", "0.05",
                        "--runs-dir", fx.runs))
    # paired t-test, alpha 0.05 two-sided, power 0.8, SD 0.3, delta 0.05: n = 285 (statsmodels TTestPower)
    assert "285" in out, out


def _query(fx: Fixture, tmp: Path) -> None:
    out = _ok(rulegauge("query", "select count(distinct question_id) as n from metrics",
                      "--format", "csv", "--runs-dir", fx.runs))
    assert out.splitlines()[:2] == ["n", "57"]


def _rulings(fx: Fixture, tmp: Path) -> None:
    _ok(rulegauge("rulings", "import", *sorted(RULINGS.glob("ruling-*.txt")), "--out", tmp,
                "--run-id", "rl"))


def _rulings_score(fx: Fixture, tmp: Path) -> None:
    # the import and the score are separate processes: score must register the
    # ruling tables itself (#11.3: it used to exit 2, "unknown table 'ruling_matches'")
    _rulings(fx, tmp)
    out = _ok(rulegauge("rulings", "score", "rl", "--runs-dir", tmp, "--goldset",
                      RULINGS / "goldset.yaml", "--mapping", RULINGS / "mapping.yaml"))
    assert "production against gold" in out


def _rulings_decode(fx: Fixture, tmp: Path) -> None:
    assert "candidate" in _ok(rulegauge("rulings", "decode", "0.048916", "--k", "60", "--arms", "3"))


def _export(fx: Fixture, tmp: Path) -> None:
    out = _ok(rulegauge("export", "fx", "-o", tmp / "trec", "--runs-dir", fx.runs))
    files = [p for p in (tmp / "trec").rglob("*") if p.is_file()]
    assert f"wrote {len(files)} files" in out


def _serve_search(fx: Fixture, tmp: Path) -> None:
    import json
    import re
    import urllib.request

    with subprocess.Popen([*_rulegauge(), "serve-search", "--port", "0", "--arms", "bm25,boost"],
                          stderr=subprocess.PIPE, text=True,
                          env={**os.environ, "COLUMNS": "250"}) as proc:
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()  # printed once the port is bound
            found = re.search(r"http://127\.0\.0\.1:(\d+)/search", line)
            assert found, line
            req = urllib.request.Request(found.group(0), data=json.dumps(
                {"q": "How many lanterns?", "k": 3, "debug": True}).encode(),
                headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=60) as resp:
                hits = json.loads(resp.read())["hits"]
            assert len(hits) == 3 and set(hits[0]["debug"]["ranks"]) == {"bm25", "boost"}
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def _facts_agreement(fx: Fixture, tmp: Path) -> None:
    import json

    labels = SAMPLE.with_name("sample-fact-labels.yaml")
    out = json.loads(_ok(rulegauge("facts", "agreement", labels, "--json")))
    assert out["matcher"]["items"] == 64 and out["matcher"]["accuracy"] > 0.9
    bad = tmp / "bad.yaml"
    bad.write_text("goldset: sample.yaml\nitems:\n  - {q: nope, fact: 0, stated: true, kind: k, answer: a}\n",
                   encoding="utf-8")
    res = rulegauge("facts", "agreement", bad, "--goldset", SAMPLE)
    assert res.returncode == 2 and f"{bad}:3: question 'nope'" in res.stderr
    assert "Traceback" not in res.stderr


def _judges_llm(fx: Fixture, tmp: Path) -> None:
    from rulegauge.judging.poolfile import FoundBy, Pool, PoolPage, PoolQuestion, write_pool
    from tests.helpers.llama_server import free_port

    pool = write_pool(Pool("g", "g.yaml", "ab" * 32, ("r",), 1, ("c",),
                           (PoolQuestion("q", "Why?", "en", ()),),
                           (PoolPage("q", "d#1", (FoundBy("r", "bm25", "arm", 1),), "t"),)),
                      tmp / "pool.jsonl")
    suite = tmp / "s.toml"
    suite.write_text(f'[suite]\nname = "s"\n[answerers.j]\nprovider = "openai"\nmodel = "m"\n'
                     f'endpoint = "http://127.0.0.1:{free_port()}"\nretries = 0\n'
                     '[judge]\nanswerer = "j"\n', encoding="utf-8")
    res = rulegauge("judges", "llm", pool, "--suite", suite, "-o", tmp / "llm.jsonl",
                  "--preflight-timeout", "2")
    assert res.returncode == 2 and "cannot reach" in res.stderr, res.stdout + res.stderr
    assert "Traceback" not in res.stderr and not (tmp / "llm.jsonl").exists()


def _trend(fx: Fixture, tmp: Path) -> None:
    out = _ok(rulegauge("trend", "--runs-dir", fx.runs))
    assert "trend over 1 retrieval run(s)" in out and "no alerts" in out


def _pool(fx: Fixture, tmp: Path) -> Path:
    pool = tmp / "pool.jsonl"
    out = _ok(rulegauge("pool", fx.run, "-k", "2", "-c", CID, "-o", pool))
    assert "unjudged pages" in out and pool.exists()
    return pool


def _served_page(served: Path) -> str:
    """The page ``rulegauge judge SERVED`` serves, from a fresh process (then stopped)."""
    import urllib.request

    from tests.helpers.llama_server import free_port

    port = free_port()
    proc = subprocess.Popen([*_rulegauge(), "judge", str(served), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        page = ""
        for _ in range(120):  # bounded: at most about a minute
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/?judge=ann", timeout=2) as reply:
                    page = reply.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        return page
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _judge(fx: Fixture, tmp: Path) -> None:
    assert "<html" in _served_page(_pool(fx, tmp)).lower()


def _judges(fx: Fixture, tmp: Path) -> None:
    from tests.helpers.judging import sample_copy

    gold = sample_copy(tmp)
    qrels = tmp / "gold.qrels"
    _ok(rulegauge("judges", "export", gold, "-o", qrels))
    assert qrels.exists()
    ann = tmp / "ann.jsonl"
    _ok(rulegauge("judges", "import", qrels, "--judge", "ann", "-g", gold, "-o", ann))
    out = _ok(rulegauge("judges", "agreement", ann, gold, "--resamples", "100"))
    assert "kappa" in out.lower()
    new = gold.with_name("sample-ann.yaml")
    _ok(rulegauge("goldset", "merge", gold, ann, "-o", new))
    assert "OK" in _ok(rulegauge("validate", new))


def _judges_auto(fx: Fixture, tmp: Path) -> None:
    """The model-free judge over a pool, then PPI from the hand-judged sample plus its labels."""
    import json

    auto = tmp / "overlap.jsonl"
    out = _ok(rulegauge("judges", "overlap", _pool(fx, tmp), "-o", auto))
    assert "judged by term-overlap-v1" in out and auto.is_file()
    out = _ok(rulegauge("judges", "ppi", fx.run, "--human", REPO / "goldsets" / "sample-judgments-hand.jsonl",
                        "--auto", auto, "-b", CID, "--json"))
    doc = json.loads(out[out.index("{"):out.rindex("}") + 1])
    assert "human labels on 16" in doc["notes"][0] and doc["tables"][0]["rows"]


def _generate(fx: Fixture, tmp: Path) -> None:
    from rulegauge.judging.proposals import read_proposals
    from rulegauge.judging.review import ReviewSession

    proposals = tmp / "proposals.jsonl"
    out = _ok(rulegauge("goldset", "generate", SAMPLE, "-a", "extractive", "--page", "bw-rules#3",
                      "-o", proposals))
    assert "proposals from 1 pages read" in out and "duplicates removed: 0" in out
    assert 'id="accept"' in _served_page(proposals)  # rulegauge judge serves the review page
    found = read_proposals(proposals)
    ReviewSession(found, tmp / "d.jsonl").decide("ann", found.proposals[0].proposal_id, "accept")
    out = _ok(rulegauge("goldset", "accept", proposals, tmp / "d.jsonl", "-o", tmp / "gen.yaml"))
    assert "1 questions" in out
    assert "OK" in _ok(rulegauge("validate", tmp / "gen.yaml", "--allow-outside"))


def _migrate(fx: Fixture, tmp: Path) -> None:
    new = REPO / "goldsets" / "sample" / "brackwater-rulebook-en2.txt"
    out = _ok(rulegauge("goldset", "migrate", SAMPLE, "--document", f"bw-rules={new}", "-o",
                        tmp / "en2.yaml"), code=1)  # written, labels flagged
    assert "49 of 57 questions carried" in out and (tmp / "en2.review.jsonl").is_file()
    assert "OK" in _ok(rulegauge("validate", tmp / "en2.yaml", "--allow-outside"))


CASES: dict[tuple[str, ...], Case] = {
    ("run",): _run, ("list",): _list, ("validate",): _validate, ("ingest",): _ingest,
    ("goldset", "from-qrels"): _from_qrels, ("goldset", "from-outline"): _from_outline,
    ("goldset", "import-beir"): _import_beir, ("goldset", "import-trec"): _import_trec,
    ("goldset", "parallel"): _parallel, ("answer",): _answer_and_answerers,
    ("answerers",): _answer_and_answerers, ("compare",): _compare, ("gate",): _gate,
    ("baseline", "save"): _baseline_save, ("bands",): _bands, ("report",): _report,
    ("query",): _query, ("tune",): _tune, ("power",): _power, ("rulings", "import"): _rulings,
    ("rulings", "score"): _rulings_score,
    ("rulings", "decode"): _rulings_decode, ("export",): _export,
    ("facts", "agreement"): _facts_agreement, ("trend",): _trend,
    ("pool",): _pool, ("judge",): _judge, ("judges", "agreement"): _judges, ("judges", "export"): _judges,
    ("judges", "import"): _judges, ("goldset", "merge"): _judges, ("serve-search",): _serve_search,
    ("judges", "llm"): _judges_llm, ("goldset", "generate"): _generate,
    ("goldset", "accept"): _generate, ("goldset", "migrate"): _migrate,
    ("judges", "overlap"): _judges_auto, ("judges", "ppi"): _judges_auto,
}


def test_every_command_has_a_case() -> None:
    missing = sorted(set(COMMANDS) - set(CASES))
    assert not missing, f"commands without a fresh-process case: {missing}"
    stale = sorted(set(CASES) - set(COMMANDS))
    assert not stale, f"cases for commands that are not registered: {stale}"


@pytest.mark.slow
@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_command_runs_in_a_fresh_process(path: tuple[str, ...], fixture_run: Fixture,
                                         tmp_path: Path) -> None:
    case = CASES.get(path)
    if case is None:
        pytest.fail(f"rulegauge {' '.join(path)} has no case in CASES")
    # a case that walks several commands (judges export -> import -> agreement -> goldset merge)
    # runs once for all of them: the same fresh processes, the same assertions; each command's
    # test then reports that walk's outcome (its failure, re-raised, under every command it covers)
    if case not in WALKED:
        try:
            case(fixture_run, tmp_path)
            WALKED[case] = None
        except BaseException as exc:
            WALKED[case] = exc
            raise
    if WALKED[case] is not None:
        raise WALKED[case]  # type: ignore[misc]


WALKED: dict[Case, BaseException | None] = {}
"""Each case function's outcome in this process (a case covering several commands runs once)."""


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_keeps_square_brackets(path: tuple[str, ...]) -> None:
    """Help is rendered by rich, which reads `[ray]` as markup and drops it: every bracketed
    word of an option's help must survive (`pip install 'rulegauge[ray]'`)."""
    import re

    from typer.testing import CliRunner

    cmd = ROOT
    for name in path:
        cmd = cmd.commands[name]
    wanted = {m for p in cmd.params for m in re.findall(r"\[[a-z][\w,.-]*\]", getattr(p, "help", None) or "")}
    out = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "300"}).output
    assert all(w in out for w in wanted), (wanted, out)
