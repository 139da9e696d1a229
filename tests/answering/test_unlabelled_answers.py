"""An unlabelled question (``unlabelled: true``) has no right abstention: its
abstention_correct is not applicable (NaN), never a 0 or 1 counted in the mean."""

from __future__ import annotations

import math
from pathlib import Path

from typer.testing import CliRunner

from rulegauge.cli import app
from rulegauge.store.rundir import Run
from tests.helpers.common import FIXTURES


def test_abstention_correct_of_an_unlabelled_question_is_not_applicable(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["run", "-g", str(FIXTURES / "goldsets" / "mini-log.yaml"), "-c",
                                 str(FIXTURES / "configs" / "lexical.toml"), "-o", str(tmp_path),
                                 "--run-id", "log", "--answerer", "extractive", "-q"])
    assert r.exit_code == 0, r.output
    am = Run(tmp_path / "log").table("answer_metrics")
    ab = am[am["metric"] == "abstention_correct"].set_index("question_id")["value"]
    assert all(math.isnan(ab[q]) for q in ("log-1", "log-2", "log-3", "log-4"))
    assert not math.isnan(ab["m-1"]) and not math.isnan(ab["m-2"])
