"""Page lists' helpers, by formula."""

import numpy as np

from rulegauge.metrics.page_lists import first_pages


def test_first_pages_marks_each_pages_first_position():
    pages = np.array([[3, 1, 3, -1, 1, 2], [-1, -1, -1, -1, -1, -1], [5, 5, 5, 5, 5, 5]])
    want = [[True, True, False, False, False, True], [False] * 6, [True] + [False] * 5]
    assert first_pages(pages).tolist() == want
    assert first_pages(np.zeros((2, 0), np.int64)).shape == (2, 0)


def test_first_pages_equals_a_loop_on_random_rows():
    rng = np.random.default_rng(7)
    pages = rng.integers(-1, 6, (40, 12))
    got = first_pages(pages)
    for row, g in zip(pages.tolist(), got.tolist(), strict=True):
        seen: set[int] = set()
        want = []
        for p in row:
            want.append(p >= 0 and p not in seen)
            seen.add(p)
        assert g == want
