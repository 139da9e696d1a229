"""Fault-tier rows of issue 44 items 1 and 3 (slices, overlap without judgments) and issue 45
item 3 (gold sets that grow, expected numbers): every refusal is exit 2 naming the slice,
the question, the side or the metric, with no traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.helpers import fault_inputs as fi
from tests.helpers import fault_runs as fr
from tests.helpers.fault_case import Case
from tests.helpers.fault_cases_issue25 import R

Build = Callable[[Path], None]
GATE = ("rulegauge", "gate", "--runs-dir", R, "-b", "a1", "--policy", "{root}/policy.toml", "-r", "a1")
TWO_QUESTIONS = ('  - {id: q1, language: en, question: "How far does a boat move?", pages: [rb#2], '
                 "tags: [moves]}\n"
                 '  - {id: q2, language: en, question: "What scores points?", pages: [rb#3]}\n')


def _policy(text: str) -> Build:
    def build(root: Path) -> None:
        fr.real_run(root, "a1")
        fi.write(root, "policy.toml", text)
    return build


def _old_baseline(root: Path) -> None:
    """A baseline of a1 saved before baselines kept the top of every list."""
    from rulegauge.store.baseline import save_baseline
    from rulegauge.store.rundir import Run

    fr.real_run(root, "a1")
    path = save_baseline(Run(root / "runs" / "a1"), root / "runs" / "baselines" / "old")
    manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    del manifest["baseline"]["fused_top"]
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    fi.write(root, "policy.toml", "[overlap]\nmin_rbo = 0.8\n")


def _changed_question(root: Path) -> None:
    """Run a1 over two questions, then the same gold set with q2's text changed (run b1)."""
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.retrieval import run

    fi.tiny(root, questions=TWO_QUESTIONS)
    run(RunOptions(goldset=root / "g.yaml", config=root / "lexical.toml", runs_dir=root / "runs",
                   run_id="a1", cache_dir=root / ".cache"))
    fi.write(root, "g.yaml", fi.goldset_text(questions=TWO_QUESTIONS.replace(
        "What scores points?", "What scores the most points?")))
    run(RunOptions(goldset=root / "g.yaml", config=root / "lexical.toml", runs_dir=root / "runs",
                   run_id="b1", cache_dir=root / ".cache"))
    fi.write(root, "policy.toml", '[metrics."hit@5"]\nmax_drop = 0\n')


def _tampered_expected(root: Path) -> None:
    """A baseline whose expected.yaml says another hit@5 than its tables."""
    from rulegauge.regression.expected import EXPECTED, expected_yaml
    from rulegauge.store.baseline import save_baseline, side_configs
    from rulegauge.store.rundir import Run

    fr.real_run(root, "a1")
    run = Run(root / "runs" / "a1")
    configs = [str(c) for c in side_configs(run)["config_id"]]
    text = expected_yaml(run, configs)
    path = save_baseline(run, root / "runs" / "baselines" / "b", files={EXPECTED: text})
    lines = [("      hit@5: 0.25" if line.startswith("      hit@5:") else line)
             for line in text.splitlines()]
    (path / EXPECTED).write_text("\n".join(lines) + "\n", encoding="utf-8")
    fi.write(root, "policy.toml", '[metrics."hit@5"]\nmax_drop = 0\n')


SLICES: tuple[Case, ...] = (
    Case("slices-44-1-selects-nothing", _policy(
        '[slices.errata]\ntag = "errata"\n[slices.errata.metrics."hit@5"]\nmax_drop = 0\n'),
        GATE, 2, "slice errata (tag errata) selects none of the 1 questions both runs share"),
    Case("slices-44-1-unknown-id", _policy(
        '[slices.ids]\nquestions = ["q1", "q9"]\n[slices.ids.metrics."hit@5"]\nmax_drop = 0\n'),
        GATE, 2, "slice ids: question(s) q9 are not among the 1 questions both runs share"),
    Case("slices-44-1-malformed", _policy(
        '[slices.x]\nanswerable = "yes"\nmetrics = 3\n[slices.y]\nlanguage = "en"\n'),
        GATE, 2, "slices.x.answerable: must be true or false"),
    Case("slices-44-1-bad-option", lambda root: fr.real_run(root, "a1"),
         ("rulegauge", "compare", "a1", "a1", "--runs-dir", R, "--slice", "colour=red"), 2,
         "--slice 'colour=red': expected one of tag=errata"),
    Case("overlap-44-3-old-baseline", _old_baseline,
         ("rulegauge", "gate", "--runs-dir", R, "-b", "old", "--policy", "{root}/policy.toml", "-r",
          "a1"), 2, "saved before baselines kept the top of every list: re-save it"),
    Case("overlap-44-3-persistence", lambda root: fr.real_run(root, "a1"),
         ("rulegauge", "compare", "a1", "a1", "--runs-dir", R, "--rbo-p", "1.5"), 2,
         "RBO persistence p must be in (0, 1), got 1.5"),
    Case("overlap-44-3-depth", _policy("[overlap]\nmin_rbo = 0.8\ndepth = 100000\n"), GATE, 2,
         "overlap.depth: must be <= 1000"),
    Case("grow-45-3-changed-question", _changed_question,
         ("rulegauge", "gate", "--runs-dir", R, "-b", "a1", "--policy", "{root}/policy.toml", "-r",
          "b1"), 2, "1 question(s) changed content under the same id (q2)"),
    Case("grow-45-3-expected-tampered", _tampered_expected,
         ("rulegauge", "gate", "--runs-dir", R, "-b", "b", "--policy", "{root}/policy.toml", "-r",
          "a1"), 2, "hit@5 is 0.25 in expected.yaml"),
)
