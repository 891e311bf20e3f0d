"""Digests that say whether two nodes run the same suite: sha256 of a file's bytes.

`tipcgen doctor` prints them and `tipcgen fleet` compares them across nodes (the remote side
runs `sha256sum`, so the digest must stay a plain sha256 of the raw bytes).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Union

from tipcgen.inputs import open_read


def bytes_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_digest(path: Union[str, Path]) -> str:
    """sha256 hex of the file's bytes (what `sha256sum FILE` prints first)."""
    h = hashlib.sha256()
    with open_read(str(path), what="a file to digest") as fh:
        for chunk in iter(lambda: fh.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def short(digest: str) -> str:
    """The 12 characters shown to users (like git's short hashes)."""
    return digest[:12]
