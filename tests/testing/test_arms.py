"""The arm conformance suite over every registered arm (built-in or installed plug-in) on the
embedded sample; arms that cannot run here (parameters needed, a service not ready) skip saying why."""

import pytest

from rulegauge.arms.base import ARMS
from rulegauge.testing.arms import check_arm, sample_inputs


@pytest.fixture(scope="module")
def inputs():
    return sample_inputs()


@pytest.mark.slow
@pytest.mark.parametrize("kind", ARMS.names())
def test_every_registered_arm_keeps_the_contract(kind, inputs):
    result = check_arm(kind, inputs=inputs)
    if result.skipped:
        pytest.skip(f"{kind}: {result.skipped}")
    assert result.problems == ()


def test_bm25_keeps_the_contract_and_an_arm_that_needs_parameters_is_skipped_not_passed(inputs):
    assert check_arm("bm25", inputs=inputs) == check_arm("bm25", inputs=inputs)
    r = check_arm("bm25", inputs=inputs)
    assert r.problems == () and r.skipped is None
    ext = check_arm("external", inputs=inputs)
    assert ext.problems == () and "cannot be built without parameters" in (ext.skipped or "")


def test_an_unregistered_class_is_checked_by_its_own_name(inputs):
    class Renamed(ARMS.get("bm25")):
        name = "not-bm25"

    r = check_arm(Renamed, inputs=inputs)
    assert r.problems == () and r.name == "not-bm25"


def test_the_http_arm_keeps_the_contract_against_the_reference_service(inputs, tmp_path):
    """The arm that needs a service, run against rulegauge's own reference search service."""
    from tests.helpers.reference_service import reference_service

    body = {"q": "{question}", "question_id": "{question_id}", "game": "{game}", "edition": "{edition}",
            "lang": "{language}", "k": "{depth}", "arms": "bm25,boost", "debug": True}
    with reference_service() as served:
        result = check_arm("http", {"url": served.url, "body": body, "chunk": "chunk_id", "score": "score"},
                           inputs=inputs, cache_dir=tmp_path)
    assert result.skipped is None and result.problems == ()
