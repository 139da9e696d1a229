"""What a command needs of the run ``latest`` names, beyond its kind, tables and metrics.

``latest`` is the newest complete run that fits the command (:func:`rulegauge.store.rundir.open_run`).
A :class:`Wants` adds two needs: the **same gold set**, by the SHA-256 of its file (``compare BASE
latest``: the candidate is the newest run of the base's gold set; ``judges agreement ... GOLD --run
latest``: a run of that gold set), and the **configs the command names** (``report -c ID latest``,
``pool -c ID``, ``bands -c ID``, ``power --config ID``: a run that scored them, by id or by name).
A newer run that does not fit is skipped and named with why (``run r7 skipped: gold set tidepool
3f2a..., not sample d3757...``), so a folder holding the runs of several gold sets still gives each
command the run it means.

Edge cases: a run whose manifest lists no configs (older manifests) is read for its ``configs``
table; a config named by several configs of a run fits (the command says which it takes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq


@dataclass(frozen=True)
class Wants:
    """The gold set (``goldset_sha256``; ``goldset`` its name, for messages) and ``configs``
    (ids or names) a run must have to be the ``latest`` of a command."""

    goldset_sha256: str | None = None
    goldset: str = ""
    configs: tuple[str, ...] = ()

    @classmethod
    def of(cls, *, manifest: dict[str, Any] | None = None, configs: Sequence[str] | None = None) -> Wants | None:
        """The needs of a command: the gold set of ``manifest`` (a run it already opened), and ``configs``."""
        gold = (manifest or {}).get("goldset") or {}
        sha = gold.get("sha256") if isinstance(gold, dict) else None
        wants = cls(str(sha) if sha else None, str(gold.get("name") or "") if isinstance(gold, dict) else "",
                    tuple(configs or ()))
        return wants if wants.goldset_sha256 or wants.configs else None

    def describe(self) -> str:
        parts = ([f"gold set {self.goldset or '?'} {self.goldset_sha256[:12]}"] if self.goldset_sha256 else []) + \
                ([f"config(s) {', '.join(self.configs)}"] if self.configs else [])
        return " and ".join(parts)

    def lacks(self, path: Path, manifest: dict[str, Any]) -> str:
        """Why the run at ``path`` does not fit ('' when it does)."""
        if self.goldset_sha256:
            gold = manifest.get("goldset") or {}
            sha = str(gold.get("sha256") or "") if isinstance(gold, dict) else ""
            if sha != self.goldset_sha256:
                name = gold.get("name", "?") if isinstance(gold, dict) else "?"
                return (f"gold set {name} {sha[:12] or '(none)'}, not {self.goldset or '?'} "
                        f"{self.goldset_sha256[:12]}")
        keys = _config_keys(path, manifest, self.configs) if self.configs else set()
        missing = [c for c in self.configs if c not in keys]
        return f"no config {', '.join(missing)}" if missing else ""


def _config_keys(path: Path, manifest: dict[str, Any], selectors: Sequence[str] = ()) -> set[str]:
    """The config ids of a run (its manifest's list) and, when a selector is not among them, the
    ids and names in its ``configs`` table."""
    config = manifest.get("config")
    listed = config.get("configs") if isinstance(config, dict) else None
    keys = {str(c) for c in listed} if isinstance(listed, list) else set()
    table = Path(path) / "configs.parquet"
    if any(c not in keys for c in selectors) and "configs" in (manifest.get("tables") or {}) and table.is_file():
        t = pq.read_table(table, columns=[c for c in ("config_id", "name") if c in pq.read_schema(table).names])
        for column in t.column_names:
            keys |= {str(v) for v in t.column(column).to_pylist() if v is not None}
    return keys
