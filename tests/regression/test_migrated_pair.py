"""Pairing an old-edition base with a new-edition candidate: only through a migrated gold set
whose hashes match the base's gold set and documents."""

from __future__ import annotations

from dataclasses import dataclass, field

from rulegauge.regression.pairing import edition_hint, migrated_pair, provenance_differences


@dataclass
class FakeSide:
    manifest: dict = field(default_factory=dict)
    run_id: str = "r"


CHUNKING = {"method": "heading"}


def _base() -> FakeSide:
    return FakeSide({"goldset": {"name": "g", "sha256": "G1"},
                     "corpus": {"content_hash": "C1", "chunking": CHUNKING,
                                "documents": {"rules": "R1", "faq": "F1"}}})


def _candidate(**changes) -> FakeSide:
    mig = {"source": "g", "source_sha256": "G1", "method": "shingle-containment", "method_version": 1,
           "documents": {"rules": {"old_sha256": "R1", "new_sha256": "R2"}}, "held_out": ["q3"],
           "labels": {"q1 rules#4": "rules#6"}}
    mig.update(changes.pop("migration", {}))
    docs = changes.pop("documents", {"rules": "R2", "faq": "F1"})
    return FakeSide({"goldset": {"name": "g-en2", "sha256": "G2", "migration": mig},
                     "corpus": {"content_hash": "C2", "chunking": changes.pop("chunking", CHUNKING),
                                "documents": docs}}, "c")


def test_a_matching_migration_pairs_the_editions():
    base, cand = _base(), _candidate()
    assert provenance_differences(base, cand)  # different gold sets and corpora...
    pair, why = migrated_pair(base, cand)  # ...paired through the migration
    assert why == () and pair is not None
    assert pair.documents == (("rules", "R1", "R2"),) and pair.held_out == ("q3",)
    assert pair.renamed("q1") == {"rules#4": "rules#6"} and pair.renamed("q2") == {}
    assert "held out" in pair.describe()


def test_a_mismatch_names_what_differs():
    base = _base()
    for cand, needle in ((_candidate(migration={"source_sha256": "G0"}), "migrated from gold set"),
                         (_candidate(documents={"rules": "R3", "faq": "F1"}), "document rules"),
                         (_candidate(documents={"rules": "R2", "faq": "F2"}), "not migrated"),
                         (_candidate(documents={"rules": "R2"}), "documents differ"),
                         (_candidate(chunking={"method": "page"}), "chunked differently")):
        pair, why = migrated_pair(base, cand)
        assert pair is None and any(needle in w for w in why), (needle, why)


def test_no_migration_no_pair_and_a_hint():
    base = _base()
    plain = FakeSide({**_candidate().manifest, "goldset": {"name": "x", "sha256": "G2"}})
    assert migrated_pair(base, plain) == (None, ())
    assert "goldset migrate" in edition_hint(base, plain)
    assert edition_hint(base, base) == ""
