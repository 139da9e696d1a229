"""Runs one documentation page's commands, in order, in a scratch copy of the repository.

The scratch folder holds what the docs assume is beside them (``goldsets/``, ``docs/``,
``notebooks/``, ``benchmarks/``, ``tests/fixtures/``, the committed ``runs/baselines/``) and
``../shared`` as a link to the real data folder. A plain ``rulegauge`` line (``NAME=value``
prefixes, ``a && b``) runs in this process through typer's CliRunner with the scratch folder
as the working directory (one interpreter, pandas imported once); any other line (pipes,
``$(...)``, ``python``, ``bash``, ``jq``) runs through ``bash -c`` with ``.venv/bin`` first on
``PATH``; a line ending in ``&`` starts in the background and is stopped when the page ends.
"""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from typer.testing import CliRunner

from rulegauge.cli import app
from tests.helpers.common import REPO, SHARED
from tests.helpers.docs_tier import Block, Command

COPIED = ("goldsets", "docs", "notebooks", "benchmarks", "tests/fixtures", "runs/baselines")
PLAIN = re.compile(r"^[^|;`$<>()]*$")  # no pipe, substitution or redirection: runs in-process
SERVER_WAIT_S = 60.0


@dataclass
class Outcome:
    command: Command
    code: int
    output: str


@dataclass
class PageRun:
    """A page's scratch folder and what its commands gave."""

    root: Path
    env: dict[str, str]
    outcomes: list[Outcome] = field(default_factory=list)
    background: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @classmethod
    def make(cls, tmp: Path, cache: Path) -> PageRun:
        root = tmp / "repo"
        for rel in COPIED:
            src = REPO / rel
            if src.exists():
                shutil.copytree(src, root / rel, symlinks=True,
                                ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
        if SHARED.is_dir():
            (tmp / "shared").symlink_to(SHARED, target_is_directory=True)
        env = {"RULEGAUGE_CACHE": str(cache), "COLUMNS": "250", "HF_HUB_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "MLFLOW_ALLOW_FILE_STORE": "true"}
        return cls(root, env)

    def run_block(self, block: Block) -> list[Outcome]:
        for target, source in block.given:
            dest = self.root / target
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(self.root / source, dest)
        for text in block.before:
            code, output = self._run(Command(block.page, block.line, text))
            assert code == 0, f"{block.page}:{block.line}: before `{text}` exited {code}:\n{output[-3000:]}"
        out = []
        for cmd in block.commands:
            if cmd.skip or ("../shared" in cmd.text and not SHARED.is_dir()):
                continue  # the session summary lists the skipped; ../shared absent: said at the top
            if cmd.text.endswith("&"):
                self._background(cmd)
                continue
            code, text = self._run(cmd)
            out.append(Outcome(cmd, code, text))
        self.outcomes += out
        return out

    def _run(self, cmd: Command) -> tuple[int, str]:
        if PLAIN.match(cmd.text) and all(p.strip().split()[0:1] and _is_rulegauge(p)
                                         for p in re.split(r"\s&&\s", cmd.text)):
            return self._in_process(cmd)
        return self._shell(cmd.text)

    def _in_process(self, cmd: Command) -> tuple[int, str]:
        texts, code = [], 0
        for part in re.split(r"\s&&\s", cmd.text):
            words = shlex.split(part)
            env = dict(self.env)
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                k, _, v = words.pop(0).partition("=")
                env[k] = v
            args = [w2 for w in words[1:] for w2 in self._glob(w)]
            cwd = os.getcwd()
            os.chdir(self.root)
            try:
                res = CliRunner().invoke(app, args, env=env, catch_exceptions=True)
            finally:
                os.chdir(cwd)
            text = res.output
            if res.exception is not None and not isinstance(res.exception, SystemExit):
                import traceback

                text += "".join(traceback.format_exception(res.exception))
            texts.append(text)
            code = res.exit_code
            if code != 0:
                break
        return code, "".join(texts)

    def _glob(self, word: str) -> list[str]:
        if not any(ch in word for ch in "*?["):
            return [word]
        found = sorted(glob.glob(word, root_dir=self.root))
        return found or [word]

    def _shell(self, text: str) -> tuple[int, str]:
        env = {**os.environ, **self.env,
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        # the scratch copy has no .venv: the docs' .venv/bin/X is this interpreter's X
        text = re.sub(r"(?<![\w/])\.venv/bin/", f"{Path(sys.executable).parent}/", text)
        proc = subprocess.run(["bash", "-c", text], cwd=self.root, env=env, capture_output=True,
                              text=True, timeout=600)
        return proc.returncode, proc.stdout + proc.stderr

    def _background(self, cmd: Command) -> None:
        env = {**os.environ, **self.env,
               "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
        log = (self.root / f".docs-tier-{cmd.line}.log").open("wb")
        proc = subprocess.Popen(["bash", "-c", "exec " + cmd.text.rstrip(" &")], cwd=self.root,
                                env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        self.background.append(proc)
        port = re.search(r"--port\s+(\d+)", cmd.text)
        if port:
            _wait_for_port(int(port.group(1)), proc)

    def stop(self) -> None:
        for proc in self.background:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def _is_rulegauge(part: str) -> bool:
    words = [w for w in shlex.split(part) if not re.match(r"^[A-Z_][A-Z0-9_]*=", w)]
    return bool(words) and words[0] in ("rulegauge", ".venv/bin/rulegauge")


def _wait_for_port(port: int, proc: subprocess.Popen[bytes]) -> None:
    end = time.monotonic() + SERVER_WAIT_S
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise AssertionError(f"the background server ended (exit {proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"nothing listened on port {port} within {SERVER_WAIT_S:.0f} s")
