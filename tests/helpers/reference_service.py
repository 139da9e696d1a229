"""The reference search service for tests: started on 127.0.0.1 in a thread.

``reference_service(arms)`` yields a :class:`Served` (base URL, and the questions
asked so far, in order); ``delay_s`` slows every request (for kill-and-resume
tests). ``http_grid`` writes a grid file with an ``http`` arm against it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rulegauge.arms import load_builtin_arms
from rulegauge.pipeline.retrieval import SAMPLE_GOLDSET
from rulegauge.pipeline.search_service import SearchService, build_service, serving

LEXICAL = ("bm25", "boost")
_BUILT: dict[tuple[str, ...], SearchService] = {}


@dataclass
class Served:
    base: str
    asked: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"{self.base}/search"


@dataclass
class _Counting(SearchService):
    served: Served | None = None
    delay_s: float = 0.0

    def search(self, req: Mapping[str, Any]) -> dict[str, Any]:
        if self.served is not None:
            self.served.asked.append(str(req.get("question_id")))
        if self.delay_s:
            time.sleep(self.delay_s)
        return super().search(req)


_LOCK = threading.Lock()


@contextmanager
def reference_service(arms: tuple[str, ...] = LEXICAL, delay_s: float = 0.0) -> Iterator[Served]:
    load_builtin_arms()
    with _LOCK:
        if arms not in _BUILT:
            _BUILT[arms] = build_service(SAMPLE_GOLDSET, arms)
    base = _BUILT[arms]
    served = Served("")
    svc = _Counting(base.corpus, base.arms, base.k, base.depth, served, delay_s)
    with serving(svc) as url:
        served.base = url
        yield served


BODY = ('{ q = "{question}", question_id = "{question_id}", game = "{game}", '
        'edition = "{edition}", lang = "{language}", k = "{depth}", arms = "ARMS", debug = true }')


def http_grid(path: Path, url: str, arms: str = "bm25,boost", extra: str = "",
              grid: str = '[["bm25", "boost"], ["live"]]') -> Path:
    """A grid with ``[arms.live]`` asking ``url`` for ``arms`` fused (``extra``: more keys)."""
    path.write_text(f'''[arms.live]
kind = "http"
url = "{url}"
body = {BODY.replace("ARMS", arms)}
chunk = "chunk_id"
score = "score"
{extra}
[grid]
k = [60]
arms = {grid}
''', encoding="utf-8")
    return path
