"""Answerer suites: parsing, every problem at once, the example in docs, the CLI."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from rulegauge.answering.suite import load_suite, parse_suite
from rulegauge.core.errors import ValidationError
from tests.helpers.common import REPO

EXAMPLE = REPO / "docs" / "examples" / "answerers.toml"


def test_example_suite_in_docs_is_valid() -> None:
    s = load_suite(EXAMPLE)
    assert [a.label for a in s.answerers] == ["extractive", "small", "big"]
    assert s.name == "ollama-small-vs-big" and s.max_error_rate == 0.05 and s.workers == 2
    assert s.judge == "big"
    assert s.sha256 == hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    small = dict(s.answerers[1].params)
    assert small == {"model": "qwen2.5:0.5b", "base_url": "http://127.0.0.1:11434",
                     "timeout_s": 120, "retries": 2, "temperature": 0.0, "num_ctx": 8192}
    assert s.answerers[1].concurrency == 1 and s.answerers[0].concurrency is None
    assert s.describe()["answerers"] == ["extractive", "small", "big"]


def test_every_problem_is_reported_at_once_with_the_allowed_keys() -> None:
    raw = {"suite": {"nmae": "x", "max_error_rate": 2},
           "answerers": {"a": {"provider": "ollama", "modle": "m", "concurrency": 0},
                         "b": {"provider": "nosuch"},
                         "c": {"provider": "openai", "model": "m", "endpoint": "ftp://x",
                               "prompt": "answer-v9"},
                         "d": {"provider": "ollama", "model": "m", "parameters": {"bogus": 1}},
                         "e": {"provider": "ollama", "timeout_s": 5,
                               "parameters": {"timeout_s": 6}}},
           "judge": {"answerer": "zz"}, "extra": 1}
    with pytest.raises(ValidationError) as e:
        parse_suite(raw, "s.toml")
    text = str(e.value)
    for needle in ("s.toml: extra: unknown key; allowed: suite, answerers, judge",
                   "suite.nmae: unknown key; allowed: name, max_error_rate, workers",
                   "suite.max_error_rate: must be a number within [0, 1]",
                   "answerers.a.modle: unknown key; allowed: provider, model, endpoint",
                   "answerers.a.concurrency: must be an integer between 1 and 256",
                   "answerers.b.provider: 'nosuch'; choose one of:",
                   "answerers.c.prompt: unknown prompt version 'answer-v9'",
                   "is not an http(s) URL",
                   "unknown parameter(s) bogus",
                   "answerers.e.parameters.timeout_s: given twice (also as timeout_s)",
                   "judge.answerer: 'zz' is not an answerer of this suite"):
        assert needle in text, needle
    assert len(e.value.problems) >= 11


@pytest.mark.parametrize(("text", "why"), [
    (b"[answerers.a\nprovider=1", "not valid TOML"),
    (b"\xff\xfe", "not valid TOML"),
    (b"[suite]\nname = 'x'\n", "declare at least one answerer"),
])
def test_unreadable_suites_are_refused(tmp_path: Path, text: bytes, why: str) -> None:
    p = tmp_path / "s.toml"
    p.write_bytes(text)
    with pytest.raises(ValidationError, match=why):
        load_suite(p)
    with pytest.raises(ValidationError, match="cannot read suite file"):
        load_suite(tmp_path / "missing.toml")
