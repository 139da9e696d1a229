"""Fault-tier rows of issue 42, item 2 (contracts enforced where a component enters a run) and
issue 43, item 20 (a plug-in table never makes older runs unreadable).

Each contract is broken by a plug-in of the fixture package's hostile distribution
(``tests/fixtures/plugins/acme_rulegauge``, ``hostile_entry_points.txt``), installed as
:mod:`tests.helpers.fault_cases_plugins` installs it: a fusion method ignoring the config's weights,
one declaring a ceiling 10x the reachable score, one taking no weights given some, one scoring
above its ceiling once lists run deeper than the entry probes; a metric declaring the ranking
bounds [0, 1] that gives 1.83; a plug-in table (``acme_notes``) written by its plug-in command with
the key repeated or 2.5 in its int32 column, or planted in a run's files past the writer.

What must hold: exit 2 naming the component and its package, no traceback; a method refused at
entry leaves no run folder, a value refused mid-run leaves the run ``failed``, a table refused
leaves the run as it was (complete, without the table); a run made before the plug-in was
installed re-scores (``run --from``) and, where the plug-in's table is needed, the message names
the plug-in and its package.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from tests.helpers import fault_runs as fr
from tests.helpers.fault_case import Case
from tests.helpers.fault_cases_plugins import HOSTILE, PLUGGED, RUN, ended_failed, failed, method, plugged, site

FUSION = f"(rulegauge.fusion, from {HOSTILE}) broke the fusion contract (docs/plugins.md): config f: "
NOTES = f"table 'acme_notes' (rulegauge.tables, from {HOSTILE}) broke the table contract (docs/plugins.md): "
WEIGHTED = ('[arms.bm25]\n[arms.boost]\n[grid]\nk = [60]\narms = [["bm25"]]\n'
            '[[configs]]\nname = "f"\nmethod = "acme-unweighted"\narms = ["bm25", "boost"]\nweights = {boost = 2}\n')


def older_run(root: Path) -> None:
    """The plug-in site and a complete run ``r0`` made without it (no ``acme_notes`` table)."""
    site(root)
    fr.real_run(root, "r0")


def planted_notes(root: Path) -> None:
    """:func:`older_run`, then an ``acme_notes`` file whose key repeats (every question twice),
    written past the run writer and recorded in the manifest with its true hash."""
    older_run(root)
    run = root / "runs" / "r0"
    questions = pq.read_table(run / "questions.parquet", columns=["question_id"]).column(0).to_pylist()
    out = run / "acme_notes.parquet"
    pq.write_table(pa.table({"run_id": ["r0"] * 2 * len(questions), "question_id": questions * 2,
                             "notes": pa.array(range(2 * len(questions)), pa.int32())}), out)
    from rulegauge.core.digest import file_sha256

    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["tables"]["acme_notes"] = {"sha256": file_sha256(out), "rows": 2 * len(questions)}
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def notes_refused(root: Path) -> None:
    """After: run ``r0`` is still complete and holds no ``acme_notes`` table, in its folder or manifest."""
    run = root / "runs" / "r0"
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "complete" and "acme_notes" not in manifest["tables"], manifest
    assert not (run / "acme_notes.parquet").exists()


def rescored(root: Path) -> None:
    """After: ``r1``, re-scored from the older ``r0``, is complete and carries no ``acme_notes``."""
    manifest = json.loads((root / "runs" / "r1" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["status"] == "complete" and "acme_notes" not in manifest["tables"], manifest
    assert manifest["source_run"]["run_id"] == "r0"


def notes(*args: str) -> tuple[str, ...]:
    return (*PLUGGED, "acme-notes", "r0", "--runs-dir", "{root}/runs", *args)


def _failed_with(fragment: str) -> Callable[[Path], None]:
    return failed(fragment, ranks_stored=True)


H_CONTRACTS: tuple[Case, ...] = (
    # --- fusion: probed at entry (nothing written), checked at run time (the run ends failed) ------
    Case("#42.2-fusion-ignores-weights", plugged(method("acme-noweights")), RUN, 2,
         f"fusion method 'acme-noweights' {FUSION}its fused order does not change with the weights", no_runs=True),
    Case("#42.2-fusion-ceiling-10x-too-high", plugged(method("acme-highceiling")), RUN, 2,
         f"fusion method 'acme-highceiling' {FUSION}a chunk ranked first by every arm scores 0.01639344262295082, "
         "not the declared ceiling 0.16393442622950818", no_runs=True),
    Case("#42.2-fusion-takes-no-weights-given-some", plugged(WEIGHTED), RUN, 2,
         f"config f: fusion method 'acme-unweighted' (rulegauge.fusion, from {HOSTILE}) takes no weights "
         "(it declares takes_weights = False); remove the weights boost=2", no_runs=True),
    Case("#42.2-fusion-above-its-ceiling-at-run-time", plugged(method("acme-overshoot")), RUN, 2,
         f"fusion method 'acme-overshoot' {FUSION.removesuffix(': ')}, question q1: fused score",
         after=_failed_with("exceeds the declared ceiling")),
    # --- metrics: every value within the family's declared bounds -------------------------------------
    Case("#42.2-metric-above-its-declared-bounds", plugged(), (*RUN[:-2], "-c", "{root}/lexical.toml", "-m",
                                                             "acme_overmetric@5"), 2,
         f"metric 'acme_overmetric' (rulegauge.metrics, from {HOSTILE}) broke the metric contract (docs/plugins.md): "
         "acme_overmetric@5 (computed by acme_rulegauge.hostile_metrics) is 1.83 for question q1: outside the "
         "declared bounds [0.0, 1.0]", after=ended_failed("outside the declared bounds [0.0, 1.0]")),
    # --- tables: values cast to the declared schema, keys unique when written and when read ----------
    Case("#42.2-table-key-repeated", older_run, notes("--plant", "repeat"), 2,
         f"{NOTES}the key (question_id) repeats: row 2 (question_id='q1') repeats row 1", after=notes_refused),
    Case("#42.2-table-float-in-int-column", older_run, notes("--plant", "float"), 2,
         f"{NOTES}column notes, row 1 (question_id='q1'): 2.5 does not cast to the declared int32",
         after=notes_refused),
    Case("#42.2-table-key-repeated-verify", planted_notes,
         (*PLUGGED, "baseline", "save", "r0", "b0", "--dir", "{root}/baselines", "--runs-dir", "{root}/runs"), 2,
         f"{NOTES}the key (question_id) repeats: row 2 (question_id='q1') repeats row 1",
         after=lambda root: not (root / "baselines").exists() or fr.after_folder_empty("baselines")(root)),
    # --- issue 43, item 20: a plug-in table never makes older runs unreadable ------------------------
    Case("#43.20-plugin-table-required-older-run-rescored", older_run,
         (*PLUGGED, "run", "--from", "r0", "-o", "{root}/runs", "--run-id", "r1", "-c", "{root}/lexical.toml"), 0,
         "run directory", after=rescored),
    Case("#43.20-plugin-table-needed-names-the-plugin", older_run, notes("--show"), 2,
         f"search_latency); table 'acme_notes' is declared by a plug-in (rulegauge.tables, from {HOSTILE}), and "
         "this run was made without it"),
)
