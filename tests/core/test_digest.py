"""File digests agree with hashlib over the whole content."""

import hashlib
from pathlib import Path

from rulegauge.core.digest import file_sha256


def test_file_sha256_matches_hashlib(tmp_path: Path) -> None:
    data = bytes(range(256)) * 9000  # > 2 MiB, several read blocks
    path = tmp_path / "blob"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
    (tmp_path / "empty").write_bytes(b"")
    assert file_sha256(tmp_path / "empty") == hashlib.sha256(b"").hexdigest()
