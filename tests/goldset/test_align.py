"""Page alignment by shingle containment: each kind of edit, exact shares, the backbone."""

from __future__ import annotations

from fractions import Fraction

from rulegauge.goldset.align import align, share, shingles


def _words(prefix: str, n: int) -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


A, B, C, D = _words("a", 40), _words("b", 40), _words("c", 40), _words("d", 40)
E = _words("e", 40)


def test_shingles_and_share_are_exact():
    assert len(shingles(A)) == 36  # 40 tokens -> 36 five-word runs
    assert shingles("one two") == frozenset({("one", "two")})
    assert shingles("  ") == frozenset()
    # the first 20 tokens of A hold 16 of its 36 shingles
    assert share(shingles(A), shingles(_words("a", 20))) == Fraction(16, 36)
    assert share(frozenset(), shingles(A)) == 0


def test_kept_moved_inserted_removed():
    # old: A B C D; new: A X C B (D removed, X inserted, B moved after C)
    al = align([A, B, C, D], [A, _words("x", 40), C, B])
    kinds = [p.kind for p in al.pages]
    assert kinds[0] == "kept" and kinds[3] == "removed"
    assert {kinds[1], kinds[2]} == {"kept", "moved"}  # the backbone keeps one of B, C in order
    assert al.of(1).whole == (1,) and al.of(2).whole == (4,) and al.of(3).whole == (3,)
    assert al.inserted == (2,)
    assert al.of(4).parts == () and al.of(4).coverage == 0


def test_split_merged_duplicated():
    # old page 1 split over new 1 and 2; old 2 and 3 merged into new 3; old 4 printed twice
    old = [A + " " + B, C, D, E]
    new = [A, B, C + " " + D, E, E]
    al = align(old, new)
    p1 = al.of(1)
    assert p1.kind == "split" and [j for j, _ in p1.parts] == [1, 2]
    assert sum(c for _, c in p1.parts) < 1  # the shingles across the cut are on neither page
    assert al.of(2).kind == al.of(3).kind == "kept" and al.of(2).whole == al.of(3).whole == (3,)
    assert al.of(4).kind == "duplicated" and al.of(4).whole == (4, 5)
    assert al.backbone[:3] == ((1, 1), (2, 3), (3, 3))


def test_changed_page():
    half = _words("a", 20) + " " + _words("z", 20)
    al = align([A], [half])
    assert al.of(1).kind == "changed" and al.of(1).coverage == Fraction(16, 36)
