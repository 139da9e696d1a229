"""The ``http`` arm against the reference service and against hostile endpoints."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rulegauge.core.errors import ConfigError, ValidationError
from rulegauge.pipeline.retrieval import RunOptions, run
from tests.helpers import search_endpoint as se
from tests.helpers.reference_service import http_grid, reference_service


def _ranks(path: Path, arm: str) -> pd.DataFrame:
    df = pd.read_parquet(path / "arm_ranks.parquet")
    return df[df["arm"] == arm].drop(columns=["arm", "run_id"]).reset_index(drop=True)


def test_same_ranks_as_in_process_single_arm_and_fused(tmp_path):
    with reference_service() as svc:
        grid = http_grid(tmp_path / "g.toml", svc.url, extra=f'''
[arms.live_bm25]
kind = "http"
url = "{svc.url}"
body = {{ q = "{{question}}", lang = "{{language}}", game = "{{game}}", k = "{{depth}}", arms = "bm25" }}
chunk = "chunk_id"
score = "score"''', grid='[["bm25", "boost"], ["live"], ["live_bm25"]]')
        res = run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="r"))
    # one arm asked over HTTP = the arm in process: chunks, ranks and scores to the bit
    pd.testing.assert_frame_equal(_ranks(res.path, "bm25"), _ranks(res.path, "live_bm25"))
    fused = pd.read_parquet(res.path / "fused.parquet")
    f = fused[(fused["config_id"] == "rrf_k60_bm25+boost") & (fused["fused_rank"] <= 100)]
    f = f[["question_id", "chunk_id", "fused_rank", "fused_score"]].set_axis(
        ["question_id", "chunk_id", "rank", "score"], axis=1)
    live = _ranks(res.path, "live")[["question_id", "chunk_id", "rank", "score"]]
    key = ["question_id", "rank"]
    f = f.sort_values(key).reset_index(drop=True).astype({"rank": "int64"})
    live = live.sort_values(key).reset_index(drop=True).astype({"rank": "int64"})
    pd.testing.assert_frame_equal(f, live)  # the service's fused list = the run's fused config
    info = json.loads((res.path / "manifest.json").read_text())["arms"]["live"]
    assert info["errors"] == 0 and info["unmatched_count"] == 0 and info["questions"] == 57
    journal = (res.path / "arms-journal" / "live.jsonl").read_text().splitlines()
    assert len(journal) == 57


def test_replay_serves_a_rerun_from_the_record_without_the_service(tmp_path):
    with reference_service() as svc:
        grid = http_grid(tmp_path / "g.toml", svc.url)
        first = run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="a"))
    record = first.path / "arms-journal" / "live.jsonl"
    replay = http_grid(tmp_path / "r.toml", svc.url, extra=f'replay = "{record}"')
    second = run(RunOptions(config=replay, runs_dir=tmp_path / "runs", run_id="b"))
    pd.testing.assert_frame_equal(_ranks(first.path, "live"), _ranks(second.path, "live"))


def test_get_fills_query_string_and_credentials_never_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("SEARCH_TOKEN", "tok-s3cret-value")
    seen: list[dict] = []

    def reply(req: dict) -> se.Behaviour:
        seen.append(req)
        return se.json({"data": {"hits": [{"doc": "bw-rules", "p": 1, "s": 1.0}]}})

    with se.search_endpoint(reply) as ep:
        grid = tmp_path / "g.toml"
        grid.write_text(f'''[arms.live]
kind = "http"
url = "{ep.url}"
method = "GET"
body = {{ q = "{{question}}", n = "{{depth}}", game = "{{game}}" }}
query = {{ api_key = "{{env:SEARCH_TOKEN}}" }}
headers = {{ Authorization = "Bearer {{env:SEARCH_TOKEN}}" }}
results = "data.hits"
doc = "doc"
page = "p"
score = "s"
on_unmatched = "keep"
[grid]
k = [60]
arms = [["live"]]
''', encoding="utf-8")
        res = run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="r"))
    assert seen[0]["method"] == "GET" and seen[0]["headers"]["Authorization"] == "Bearer tok-s3cret-value"
    assert "api_key=tok-s3cret-value" in seen[0]["path"] and "n=10" in seen[0]["path"]
    for f in res.path.rglob("*"):
        if f.is_file():
            assert b"tok-s3cret-value" not in f.read_bytes(), f
    info = json.loads((res.path / "manifest.json").read_text())["arms"]["live"]
    assert info["headers"] == {"Authorization": "***"}
    assert info["endpoint"] == ep.url


@pytest.mark.parametrize(("script", "message"), [
    ([se.html()], "reply is not JSON (text/html; invalid JSON: Expecting value at character 0): "
                  "'<html><body>Gateway login"),
    ([se.json({"results": []})], "results path 'hits' not found: the reply has no 'hits' (it has: results)"),
    ([se.json({"hits": [{"chunk_id": "nope#1", "score": 1.0}]})], "no id of the reply matches the corpus"),
    ([se.endless()], "over the cap of 100000 bytes"),
    ([se.trickle_body(0.05)], "no complete reply within the total deadline of 0.5 s"),
    ([se.redirect("http://elsewhere.invalid/search?token=x")],
     "redirect (HTTP 302) to another host refused: http://elsewhere.invalid/search"),
    ([se.status(503)], "HTTP 503"),
])
def test_preflight_refuses_bad_endpoints_before_any_folder(tmp_path, script, message):
    with se.search_endpoint(script) as ep:
        grid = http_grid(tmp_path / "g.toml", ep.url, extra="timeout_s = 0.5\nmax_body_bytes = 100000")
        with pytest.raises(ValidationError) as info:
            run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="r"))
    text = str(info.value)
    assert text.startswith("arm preflight failed; nothing was written")
    assert f"arm live (http): POST {ep.url}, question bw-01" in text or "no id of the reply" in text
    assert message in text
    assert not (tmp_path / "runs").exists()


def test_endpoint_down_is_exit_2_naming_arm_and_url(tmp_path):
    with se.search_endpoint([se.json({})]) as ep:
        url = ep.url
    grid = http_grid(tmp_path / "g.toml", url.replace("127.0.0.1", "user:pw@127.0.0.1"))
    with pytest.raises(ValidationError, match=r"arm live \(http\): POST " + url.replace(".", r"\.")
                       + r", question bw-01: .*ConnectionRefusedError"):
        run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="r"))
    assert not (tmp_path / "runs").exists()


def _failing_for(qids: set[str]):
    def reply(req: dict) -> se.Behaviour:
        if req["body"]["question_id"] in qids:
            return se.status(500)
        return se.json({"hits": [{"chunk_id": "bw-rules#p0001.c000", "score": 1.0}]})
    return reply


def test_errors_counted_below_threshold_and_stop_above(tmp_path):
    with se.search_endpoint(_failing_for({"bw-02", "bw-03"})) as ep:
        grid = http_grid(tmp_path / "g.toml", ep.url, extra="retries = 1\nbackoff_s = 0.0\nmax_error_rate = 0.05")
        res = run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="r"))
        info = json.loads((res.path / "manifest.json").read_text())["arms"]["live"]
        assert info["errors"] == 2 and info["empty_questions"] == 2
        assert info["error_examples"][0].startswith("question bw-02: gave up after 2 attempt(s); last: HTTP 500")
        strict = http_grid(tmp_path / "s.toml", ep.url, extra="retries = 0\nmax_error_rate = 0.01")
        with pytest.raises(ValidationError, match=r"2 of 57 calls failed, above max_error_rate 0\.01"):
            run(RunOptions(config=strict, runs_dir=tmp_path / "runs", run_id="s"))


def test_empty_for_every_question_stops_the_run(tmp_path):
    with se.search_endpoint([se.json({"hits": []})]) as ep:
        grid = http_grid(tmp_path / "g.toml", ep.url)
        with pytest.raises(ValidationError, match="the ranked list was empty for all 57 questions"):
            run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="r"))


@pytest.mark.parametrize(("extra", "message"), [
    ('headers = { X = "{questoin}" }', "unknown placeholder {questoin}; allowed: {question}, {question_id}"),
    ("colour = 1", "unknown parameter 'colour'; it accepts: url, url_env, method"),
    ('headers = { X = "{env:RULEGAUGE_NO_SUCH_VAR}" }', "environment variable RULEGAUGE_NO_SUCH_VAR is not set"),
    ('method = "PUT"', "method must be one of GET, POST"),
])
def test_bad_settings_name_what_is_allowed(tmp_path, extra, message):
    grid = http_grid(tmp_path / "g.toml", "http://127.0.0.1:9/search", extra=extra)
    with pytest.raises((ValidationError, ConfigError)) as info:
        run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="r"))
    assert message in str(info.value)
    assert not (tmp_path / "runs").exists()


def test_url_env_with_credentials_never_recorded(tmp_path, monkeypatch):
    with reference_service() as svc:
        secret_url = svc.url.replace("http://", "http://ann:pw-s3cret@") + "?token=tok-s3cret"
        monkeypatch.setenv("SEARCH_URL", secret_url)
        grid = http_grid(tmp_path / "g.toml", svc.url)
        text = grid.read_text(encoding="utf-8").replace(f'url = "{svc.url}"', 'url_env = "SEARCH_URL"')
        grid.write_text(text, encoding="utf-8")
        res = run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="r"))
    info = json.loads((res.path / "manifest.json").read_text())["arms"]["live"]
    assert info["endpoint"] == svc.url and info["url_env"] == "SEARCH_URL"
    for f in res.path.rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            assert b"s3cret" not in data, f


def test_env_at_the_start_of_url_is_the_base_of_the_url_sent(tmp_path, monkeypatch):
    """``url = "{env:SEARCH_BASE}/search"`` (docs/arms.md, docs/ci/team-grid.toml): the scheme and host
    are checked on the URL as sent; the journal keys on the template, the manifest names the host."""
    with reference_service() as svc:
        monkeypatch.setenv("SEARCH_BASE", svc.base)
        grid = http_grid(tmp_path / "g.toml", "{env:SEARCH_BASE}/search")
        res = run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="r"))
        assert len(svc.asked) == 57 + 1  # every question, and the preflight's one
    info = json.loads((res.path / "manifest.json").read_text())["arms"]["live"]
    assert info["endpoint"] == svc.url
    journal = (res.path / "arms-journal" / "live.jsonl").read_text(encoding="utf-8")
    assert '"{env:SEARCH_BASE}/search"' in journal and svc.base not in journal
    monkeypatch.setenv("SEARCH_BASE", "127.0.0.1:8700")  # no scheme: refused before anything runs
    with pytest.raises((ConfigError, ValidationError),
                       match=r"url .\{env:SEARCH_BASE\}/search. is not an http\(s\) URL once filled in"):
        run(RunOptions(config=grid, runs_dir=tmp_path / "runs", run_id="s"))
    assert not (tmp_path / "runs" / "s").exists()
