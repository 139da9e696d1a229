"""Page ids: one way to build and split ``doc#page``."""

import pytest

from rulegauge.corpus.records import page_key, page_keys, split_page_key


def test_page_key_round_trips_and_splits_at_the_last_hash() -> None:
    assert page_key("sh-rules", 12) == "sh-rules#12"
    assert page_keys(["a", "b"], [1, 2]) == ["a#1", "b#2"]
    assert split_page_key("production:doc#x#7") == ("production:doc#x", 7)
    for bad in ("nohash", "doc#", "#3", "doc#iv"):
        with pytest.raises(ValueError, match="not a page id"):
            split_page_key(bad)
