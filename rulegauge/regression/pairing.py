"""Which sides and configs a comparison pairs: side identities, provenance checks, config pairs.

:func:`provenance_differences` names every identity field (gold set hash, corpus hash)
that differs, so runs over different gold sets or corpora are refused, but for one pair:
a base on the old edition of a document and a candidate on the new one whose gold set
``rulegauge goldset migrate`` carried from the base's (:func:`migrated_pair`: the
candidate's ``manifest.goldset.migration`` names the base's gold set hash and each
migrated document's old and new hashes, every other document and the chunking are the
same);
:func:`comparable` also pairs a gold set that gained or lost questions over the same corpus
(:mod:`rulegauge.regression.grown`: compared on the questions both share);
:func:`resolve_config_pairs` pairs configs by id, by the selectors given (an id or a name
on each side), or the sole grid config of each side when their ids differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rulegauge.core.config_order import sort_configs
from rulegauge.core.errors import RulegaugeError
from rulegauge.regression.grown import grown_goldset
from rulegauge.store.baseline import Side, resolve_config, side_configs, side_label

# The manifest fields that must agree for two runs to be comparable.
IDENTITY: tuple[tuple[str, str, str], ...] = (
    ("gold set sha256", "goldset", "sha256"), ("corpus content hash", "corpus", "content_hash"))

@dataclass(frozen=True)
class SideSummary:
    """A side's identity as shown in reports; ``has_fused``: page ranks are known."""

    label: str
    run_id: str
    goldset: str | None
    goldset_sha256: str | None
    corpus_hash: str | None
    config_sha256: str | None
    has_fused: bool


def summarise_side(side: Side) -> SideSummary:
    m = side.manifest
    g, c = m.get("goldset") or {}, m.get("corpus") or {}
    return SideSummary(side_label(side), side.run_id, g.get("name"), g.get("sha256"),
                       c.get("content_hash"), (m.get("config") or {}).get("sha256"),
                       side.has_table("fused"))


def provenance_differences(base: Side, candidate: Side) -> tuple[str, ...]:
    """Every identity field (gold set hash, corpus hash) that differs or is missing.

    An imported set of production rulings has no corpus of ours (production searched
    its own), so the corpus check is skipped when either side is a rulings run; the
    gold set must still match."""
    out = []
    rulings = "rulings" in (base.manifest.get("kind"), candidate.manifest.get("kind"))
    for label, section, key in IDENTITY:
        if rulings and section == "corpus":
            continue
        b = (base.manifest.get(section) or {}).get(key)
        c = (candidate.manifest.get(section) or {}).get(key)
        if b is None or c is None or b != c:
            out.append(f"{label}: base {b or '(missing)'} vs candidate {c or '(missing)'}")
    return tuple(out)


@dataclass(frozen=True)
class MigratedPair:
    """A base on an old edition and a candidate on the new one, paired through the
    candidate's migrated gold set (module docstring); ``held_out``: the questions the
    migration left out (flagged labels), which the candidate may lack."""

    source: str
    source_sha256: str
    goldset: str
    goldset_sha256: str
    documents: tuple[tuple[str, str, str], ...]
    """(document id, old SHA-256, new SHA-256) of each migrated document."""
    held_out: tuple[str, ...]
    method: str
    labels: tuple[tuple[str, str, str], ...] = ()
    """(question, old page, new page) of every label the migration carried to another page."""

    def renamed(self, question_id: str) -> dict[str, str]:
        """The question's old page id -> its new one (pages carried elsewhere only)."""
        return {o: n for q, o, n in self.labels if q == question_id}

    def describe(self) -> str:
        docs = ", ".join(f"{d} {o[:12]} -> {n[:12]}" for d, o, n in self.documents)
        return (f"through the migrated gold set {self.goldset} ({self.goldset_sha256[:12]}) of "
                f"{self.source} ({self.source_sha256[:12]}), {self.method}: {docs}; "
                f"{len(self.held_out)} question(s) held out by the migration")


def migrated_pair(base: Side, candidate: Side) -> tuple[MigratedPair | None, tuple[str, ...]]:
    """(the pair, ()) when the candidate's gold set was migrated from the base's over the
    base's documents; (None, why not) when it was migrated but does not match the base;
    (None, ()) when the candidate's gold set is not a migrated one."""
    mig = (candidate.manifest.get("goldset") or {}).get("migration")
    if not isinstance(mig, dict):
        return None, ()
    why = []
    bg, cg = base.manifest.get("goldset") or {}, candidate.manifest.get("goldset") or {}
    if bg.get("sha256") != mig.get("source_sha256"):
        why.append(f"the candidate's gold set was migrated from gold set {mig.get('source')} "
                   f"{str(mig.get('source_sha256'))[:12]}, the base's is {bg.get('name')} "
                   f"{str(bg.get('sha256'))[:12]}")
    bc, cc = base.manifest.get("corpus") or {}, candidate.manifest.get("corpus") or {}
    bd, cd = bc.get("documents") or {}, cc.get("documents") or {}
    moved: dict[str, Any] = mig.get("documents") or {}
    if set(bd) != set(cd):
        why.append(f"documents differ: base {', '.join(sorted(bd))}; candidate {', '.join(sorted(cd))}")
    for doc in sorted(set(bd) & set(cd)):
        old, new = ((moved[doc].get("old_sha256"), moved[doc].get("new_sha256")) if doc in moved
                    else (cd[doc], bd[doc]))
        if bd[doc] != old or cd[doc] != new:
            why.append(f"document {doc}: base {str(bd[doc])[:12]}, candidate {str(cd[doc])[:12]}; "
                       + (f"the migration went from {str(old)[:12]} to {str(new)[:12]}" if doc in moved
                          else "not migrated, so it must be the same file"))
    if bc.get("chunking") != cc.get("chunking"):
        why.append("the corpora were chunked differently")
    if why:
        return None, tuple(f"migrated gold set: {w}" for w in why)
    return MigratedPair(str(mig.get("source")), str(mig.get("source_sha256")), str(cg.get("name")),
                        str(cg.get("sha256")),
                        tuple((d, str(moved[d].get("old_sha256")), str(moved[d].get("new_sha256")))
                              for d in sorted(moved)),
                        tuple(str(q) for q in mig.get("held_out") or ()),
                        f"{mig.get('method')} v{mig.get('method_version')}",
                        tuple((str(k).split(" ", 1)[0], str(k).split(" ", 1)[-1], str(v))
                              for k, v in sorted((mig.get("labels") or {}).items()))), ()


def edition_hint(base: Side, candidate: Side) -> str:
    """A hint when the sides hold a document of one id with different bytes (a new edition)."""
    bd = (base.manifest.get("corpus") or {}).get("documents") or {}
    cd = (candidate.manifest.get("corpus") or {}).get("documents") or {}
    changed = sorted(d for d in set(bd) & set(cd) if bd[d] != cd[d])
    if not changed:
        return ""
    return (f" (a new edition of {', '.join(changed)}? Carry the base's gold set to it with "
            "rulegauge goldset migrate and run on the migrated gold set: docs/judging.md)")


@dataclass(frozen=True)
class ConfigPair:
    base: str
    candidate: str

    @property
    def label(self) -> str:
        return self.base if self.base == self.candidate else f"{self.base} -> {self.candidate}"


ConfigSelector = str | tuple[str, str]


def grid_pair(base_cfg: pd.DataFrame, cand_cfg: pd.DataFrame) -> ConfigPair | None:
    """The pair of the sole grid config on each side, if each side has exactly one."""
    b = base_cfg.loc[base_cfg["kind"] == "grid", "config_id"].tolist()
    c = cand_cfg.loc[cand_cfg["kind"] == "grid", "config_id"].tolist()
    return ConfigPair(str(b[0]), str(c[0])) if len(b) == 1 and len(c) == 1 else None


def resolve_config_pairs(base: Side, candidate: Side,
                         selectors: Sequence[ConfigSelector] | None = None
                         ) -> tuple[ConfigPair, ...]:
    """Pairs of configs to compare.

    A string selector names the same config (id or name) on both sides; a
    ``(base, candidate)`` tuple pairs two different ones. Without selectors:
    every config id present on both sides, plus the pair of the sole grid
    configs when each side has exactly one and their ids differ.
    """
    bc, cc = side_configs(base), side_configs(candidate)
    if selectors:
        pairs = []
        for sel in selectors:
            b_sel, c_sel = (sel, sel) if isinstance(sel, str) else sel
            pairs.append(ConfigPair(resolve_config(b_sel, bc, "base"),
                                    resolve_config(c_sel, cc, "candidate")))
        return tuple(dict.fromkeys(pairs))
    common = sort_configs(set(bc["config_id"].astype(str)) & set(cc["config_id"].astype(str)))
    pairs = [ConfigPair(str(i), str(i)) for i in common]
    gp = grid_pair(bc, cc)
    if gp is not None and gp.base != gp.candidate:
        pairs.insert(0, gp)
    if not pairs:
        raise RulegaugeError("no config in common: base has " + ", ".join(map(str, bc["config_id"]))
                           + "; candidate has " + ", ".join(map(str, cc["config_id"]))
                           + ". Pair them explicitly (base config, candidate config).")
    return tuple(pairs)


def against_reference(base: Side, candidate: Side, reference: str,
                      exclude: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Every candidate config (in config order) paired with the base's ``reference`` id:
    the family of a report, ``compare --reference`` and a ``family = "grid"`` gate. The
    reference against itself is left out when both sides are one run (no test), and so
    are the candidate ids in ``exclude``."""
    same = base.run_id == candidate.run_id
    ids = sort_configs(side_configs(candidate)["config_id"].astype(str))
    return [(reference, c) for c in ids if not (same and c == reference) and c not in exclude]


def comparable(base: Side, candidate: Side, *, force: bool = False
               ) -> tuple[tuple[str, ...], MigratedPair | None]:
    """(what differs, forced; the migrated pair) of two sides; raises :class:`RulegaugeError`
    naming the differences when the gold sets or corpora differ, no migrated gold set pairs
    them (:func:`rulegauge.regression.pairing.migrated_pair`), the gold set did not just gain
    or lose questions over the same corpus (:func:`rulegauge.regression.grown.grown_goldset`)
    and ``force`` is false."""
    diffs = provenance_differences(base, candidate)
    migrated = None
    if diffs:  # different gold sets and corpora: comparable only through a migrated gold set
        migrated, why = migrated_pair(base, candidate)
        grown = None
        if migrated is None and not why:  # or a gold set that grew over the same corpus
            grown, why = grown_goldset(base, candidate)
        diffs = () if migrated is not None or grown is not None else diffs + why
    if diffs and not force:
        raise RulegaugeError("runs are not comparable (use force to compare anyway): "
                             + "; ".join(diffs) + edition_hint(base, candidate))
    return diffs, migrated
