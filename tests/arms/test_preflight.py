"""Arm preflight: every arm of a run checks itself before any run folder exists."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from rulegauge.arms import load_builtin_arms
from rulegauge.arms.base import ARMS, ArmContext, preflight_arms
from rulegauge.arms.results import ArmResult
from rulegauge.core.errors import ConfigError, ValidationError
from rulegauge.pipeline.options import RunOptions
from rulegauge.pipeline.retrieval import run
from tests.helpers.common import make_tiny_corpus

CALLS: list[str] = []


class ProbeArm:
    """A test arm whose preflight fails when told to, and which records it was closed."""

    name: ClassVar[str] = "preflight-probe"

    def __init__(self, fail: str = "", boom: bool = False) -> None:
        if boom:
            raise ConfigError("cannot be built")
        self.fail = fail

    def preflight(self, corpus: Any, questions: Sequence[Any], context: ArmContext) -> str | None:
        CALLS.append(f"preflight {len(corpus.chunks)} {len(questions)} {context.run_dir}")
        return self.fail or None

    def close(self) -> None:
        CALLS.append("close")

    def prepare(self, corpus: Any, context: ArmContext) -> None:
        pass

    def search(self, questions: Sequence[Any], depth: int) -> list[ArmResult]:
        return [ArmResult(q.question_id, self.name, ()) for q in questions]

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name}


@pytest.fixture(autouse=True, scope="module")
def _probe_registered() -> Iterator[None]:
    """The probe arm is registered while this file's tests run and withdrawn after: the
    registry other test files (of the same worker) read holds the built-ins only."""
    load_builtin_arms()
    ARMS.add(ProbeArm.name, ProbeArm)
    yield
    ARMS.withdraw([ProbeArm.name])


def test_every_problem_named_by_arm_and_arms_closed():
    CALLS.clear()
    corpus = make_tiny_corpus()
    arms = {"ok": {"kind": "preflight-probe"},
            "down": {"kind": "preflight-probe", "fail": "http://127.0.0.1:9/ refused"},
            "broken": {"kind": "preflight-probe", "boom": True}, "bm25": {}}
    with pytest.raises(ValidationError) as info:
        preflight_arms(list(arms), corpus, ["q1", "q2"],  # type: ignore[list-item]
                       ArmContext(cache_dir=Path("unused"), arm_params=arms))
    text = str(info.value)
    assert text.startswith("arm preflight failed; nothing was written (2 problem(s))")
    assert "arm down (preflight-probe): http://127.0.0.1:9/ refused" in text
    assert "arm broken (preflight-probe): cannot be built" in text
    assert "arm ok" not in text and "bm25" not in text
    expected = [f"preflight {len(corpus.chunks)} 2 None", "close"] * 2
    assert expected == CALLS


def test_passing_preflight_raises_nothing():
    preflight_arms(["ok", "bm25"], make_tiny_corpus(), [],
                   ArmContext(cache_dir=Path("unused"), arm_params={"ok": {"kind": "preflight-probe"}}))


def test_run_refused_before_any_folder(tmp_path: Path):
    config = tmp_path / "grid.toml"
    config.write_text('[arms.live]\nkind = "preflight-probe"\nfail = "endpoint is down"\n'
                      '[grid]\nk = [60]\narms = [["bm25", "live"]]\n', encoding="utf-8")
    runs = tmp_path / "runs"
    with pytest.raises(ValidationError, match=r"arm live \(preflight-probe\): endpoint is down"):
        run(RunOptions(config=config, runs_dir=runs, run_id="r"))
    assert not runs.exists()
