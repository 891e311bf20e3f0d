"""`tipcgen check`'s cache, so that a pre-commit hook costs nothing when nothing changed (as black's).

A spec that checked clean is recorded under a key of everything its generated files depend on:
its bytes and the path it was given as (the banners name it), the docs language, the output
directory, tipcgen's own code and templates (their content, not a version number), and the
environment validation reads. With the key, the record keeps the state (size, mtime, inode) of
every file below the model's `test_tipc/`. The next check of that spec, with the same key and the
same state, is clean without loading or rendering anything. Any other difference is a miss and the
spec is rendered and compared as usual, so an edited spec, template or generated file, a new stray
file or a deleted one is always seen. Best effort: a missing, unreadable or corrupt cache is a
miss, one that cannot be written is not written; `--no-cache` or `TIPC_CHECK_CACHE=0` turn it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from typing_extensions import TypedDict

from tipcgen.errors import TipcError
from tipcgen.fsio import cache_dir, is_temp, write_text
from tipcgen.inputs import dirs_below, read_bytes, read_json

_CODE_BYTES = 4 << 20  # one module or template of tipcgen's own


class _Entry(TypedDict, total=False):
    model: str
    files: int
    state: dict[str, list[int]]
    repo: bool
    skip: list[str]


class _CacheFile(TypedDict):
    version: int
    entries: dict[str, _Entry]


VERSION = 1
MAX_ENTRIES = 20_000  # specs remembered (a repo has at most a few hundred); the oldest go first
MAX_CACHE_BYTES = 64 << 20
ENV_KEYS = ("TIPC_ALLOW_FILE_URLS",)  # what spec validation reads from the environment
TOP = "test_tipc"


def code_digest() -> str:
    """sha256 of tipcgen's code and templates: any change to them makes every key new."""
    from importlib import resources

    import tipcgen

    digest = hashlib.sha256()
    base = Path(tipcgen.__file__).parent
    for path in sorted(base.rglob("*.py")):
        if "__pycache__" not in path.parts:
            data = read_bytes(str(path), _CODE_BYTES, tree=str(base), what="tipcgen's code")
            digest.update(str(path.relative_to(base)).encode() + b"\0" + data + b"\0")
    templates = Path(str(resources.files("tipcgen.templates")))
    for entry in sorted(templates.rglob("*")):  # the harness's shims too (templates/shims/)
        if entry.name.endswith((".j2", ".sh")) and entry.is_file() and "__pycache__" not in entry.parts:
            data = read_bytes(str(entry), _CODE_BYTES, tree=str(templates), what="a template")
            rel = entry.relative_to(templates).as_posix()
            digest.update(b"templates/" + rel.encode() + b"\0" + data + b"\0")
    return digest.hexdigest()


def tree_state(root: str, skip: frozenset = frozenset()) -> dict[str, list[int]]:
    """{relative path: [size, mtime_ns, inode]} of the files below root/test_tipc (temp files of
    an interrupted build left out: check only notes them; so are the `skip` paths, files whose
    bytes the key holds: a repo's own specs in test_tipc/specs/, so that touching one, or saving
    it unchanged, is no miss)."""
    state = {}
    base = os.path.join(root, TOP)
    for dirpath, _dirs, names in dirs_below(base):
        for name in names:
            if is_temp(name):
                continue
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if rel not in skip:
                state[rel] = [st.st_size, st.st_mtime_ns, st.st_ino]
    return state


class CheckCache:
    def __init__(self, path: Optional[Path], environ: Mapping[str, str]):
        self.path = path
        self.environ = environ
        self.entries: dict[str, dict] = {}
        self.changed = False
        self._code: Optional[str] = None
        self._specs: dict[str, list[str]] = {}  # repo key -> its spec files below the root
        if path is None:
            return
        try:
            data = read_json(
                str(path),
                str(path.parent),
                _CacheFile,
                what="tipcgen's check cache",
                limit=MAX_CACHE_BYTES,
                links=False,
                values=MAX_CACHE_BYTES,
                objects=MAX_CACHE_BYTES,
            )
        except TipcError:
            return  # no cache, or not ours (a link, a FIFO, too big, nested, mistyped): every spec is a miss
        if data["version"] == VERSION:
            self.entries = dict(data["entries"])

    @classmethod
    def load(cls, environ: Mapping[str, str], enabled: bool = True) -> CheckCache:
        if not enabled or environ.get("TIPC_CHECK_CACHE", "1").strip().lower() in ("0", "false", "no"):
            return cls(None, environ)
        return cls(Path(cache_dir(environ)) / f"check-v{VERSION}.json", environ)  # prepare's cache dir

    def key(self, spec_path: str, lang: str, out: str) -> Optional[str]:
        """The spec's key, or None when its bytes cannot be read (the render says why)."""
        if self.path is None:
            return None
        try:
            data = read_bytes(spec_path)
        except (TipcError, OSError):
            return None
        if self._code is None:
            self._code = code_digest()
        material = [
            VERSION,
            self._code,
            spec_path,
            os.path.abspath(out),
            lang,
            hashlib.sha256(data).hexdigest(),
            [self.environ.get(k, "") for k in ENV_KEYS],
        ]
        return hashlib.sha256(json.dumps(material).encode()).hexdigest()

    def repo_key(self, spec_files: list[str], settings: Optional[str], lang: str, root: str) -> Optional[str]:
        """The key of a repo check: every spec's key, the settings file's bytes, the root."""
        keys = [self.key(path, lang, root) for path in spec_files]
        if self.path is None or any(k is None for k in keys):
            return None
        try:
            extra = hashlib.sha256(read_bytes(settings, what="settings")).hexdigest() if settings else ""
        except (TipcError, OSError):
            return None
        key = hashlib.sha256(json.dumps(["repo", keys, extra]).encode()).hexdigest()
        # the specs' bytes are in the key: their state (mtime, inode) is left out of the tree's
        rels = [os.path.relpath(os.path.abspath(p), os.path.abspath(root)).replace(os.sep, "/") for p in spec_files]
        self._specs[key] = sorted(r for r in rels if not r.startswith("../"))
        return key

    def hit(self, key: Optional[str], out: str) -> Optional[dict]:
        """The record of a spec whose key and generated files are unchanged, else None."""
        entry = self.entries.get(key) if key else None
        if not isinstance(entry, dict) or not isinstance(entry.get("model"), str):
            return None
        if "/" in entry["model"] or entry["model"] in ("", ".", ".."):
            return None
        tree = out if entry.get("repo") else os.path.join(out, entry["model"])
        skip = entry.get("skip", [])
        if not isinstance(skip, list) or not all(isinstance(x, str) for x in skip):
            return None
        if entry.get("state") != tree_state(tree, frozenset(skip)):
            return None
        return entry

    def record(self, key: Optional[str], model: str, files: int, out: str, repo: bool = False) -> None:
        """Remember a clean check of one spec (its tree out/model), or of a whole repo (`repo`:
        the tree out, `model` a label)."""
        if key is None or self.path is None:
            return
        self.entries.pop(key, None)
        tree = out if repo else os.path.join(out, model)
        skip = self._specs.get(key, []) if repo else []
        self.entries[key] = {"model": model, "files": files, "state": tree_state(tree, frozenset(skip))}
        if repo:
            self.entries[key]["repo"] = True
            self.entries[key]["skip"] = skip
        while len(self.entries) > MAX_ENTRIES:
            self.entries.pop(next(iter(self.entries)))
        self.changed = True

    def save(self) -> None:
        if self.path is None or not self.changed:
            return
        text = json.dumps({"version": VERSION, "entries": self.entries}, separators=(",", ":"))
        with contextlib.suppress(TipcError, OSError):  # best effort: a cache that cannot be written is not
            write_text(str(self.path), text, mode=0o600)
