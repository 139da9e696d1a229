"""The phases of answering have their own inputs: the plan settles options against the run
and writes nothing; specs read LABEL=NAME one way; the ask phase skips current answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegauge.answering.asking import jobs_for
from rulegauge.answering.frames import build_reads
from rulegauge.answering.journal import Journal, journal_path
from rulegauge.answering.plan import AnswerOptions, plan
from rulegauge.answering.read import ReadOptions
from rulegauge.answering.runner import answer_run
from rulegauge.answering.specs import split_label
from rulegauge.core.errors import RulegaugeError
from tests.helpers.answering import EchoAnswerer, register_echo, write_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    register_echo()
    EchoAnswerer.calls = []
    return write_run(tmp_path / "run-1")


def test_split_label_is_the_one_reading_of_label_name():
    assert split_label("big=ollama") == ("big", "ollama")
    assert split_label("ollama") == ("ollama", "ollama")
    assert split_label("a=b=ollama") == ("a=b", "ollama")  # then refused: labels hold no '='


def test_the_plan_writes_nothing_and_settles_defaults(run_dir: Path):
    before = sorted(p.name for p in run_dir.iterdir())
    p = plan(run_dir, AnswerOptions(answerers=(("echo", {}), ("b=echo", {}))))
    assert sorted(p.name for p in run_dir.iterdir()) == before
    assert p.order == ("echo", "b") and p.max_workers == 2 and p.max_error_rate == 0.05
    assert p.read_options == ReadOptions() and len(p.config_ids) == 1


def test_the_plan_refuses_what_would_mix_incomparable_answers(run_dir: Path):
    answer_run(run_dir, [("echo", {})])
    p = plan(run_dir, AnswerOptions(answerers=(("other=echo", {}),)))
    assert p.order == ("echo", "other")  # earlier labels first, and kept
    with pytest.raises(RulegaugeError, match="read_options"):
        plan(run_dir, AnswerOptions(answerers=(("echo", {}),), read_options=ReadOptions(final=2)))
    with pytest.raises(RulegaugeError, match="judge 'nobody'"):
        plan(run_dir, AnswerOptions(answerers=(("echo", {}),), judge="nobody"))


def test_the_ask_phase_asks_only_what_the_journal_lacks(run_dir: Path):
    answer_run(run_dir, [("echo", {})])
    p = plan(run_dir, AnswerOptions(answerers=(("echo", {}),)))
    reads = build_reads(p.inputs, p.config_ids, p.read_options)
    have = Journal(journal_path(run_dir, "echo")).load()
    jobs, covered = jobs_for(EchoAnswerer(), reads, have, p)
    assert jobs == [] and covered == len(reads.requests)
    jobs, _ = jobs_for(EchoAnswerer(), reads, {}, p)
    assert len(jobs) == len(reads.requests)
