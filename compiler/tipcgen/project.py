"""A model repo switched to tipcgen: where its specs live and what tipcgen owns in its test_tipc/.

A repo root is a directory holding `test_tipc/`. Its specs are `test_tipc/specs/*.yml` unless an
optional `tipcgen.yml` at the root says otherwise:

    specs: test_tipc/specs   # folder of the repo's specs (relative, inside the repo)
    lang: zh                 # language of the generated docs (zh or en)

Ownership: `test_tipc/.tipcgen.manifest` lists every file tipcgen wrote there, with its sha256
(`<sha256>  <path>`, sorted). A repo build writes and replaces only files it lists (or files
identical to what it would write); files it no longer generates are removed only while their
content is still what it wrote; anything else in `test_tipc/` is never touched.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass, field
from typing import Optional

from tipcgen.errors import Problem, SpecError, UsageError, printable
from tipcgen.inputs import read_bytes, read_owned, read_text, resolve_inside

SETTINGS = "tipcgen.yml"
TIPC = "test_tipc"
DEFAULT_SPECS = "test_tipc/specs"
MANIFEST = "test_tipc/.tipcgen.manifest"
_KEYS = ("specs", "lang")
MANIFEST_BYTES = 4 << 20  # a manifest lists a few thousand files
OWNED_BYTES = 16 << 20  # a generated file (the largest, a schema or a PaddleClas doc, is far smaller)


@dataclass(frozen=True)
class Project:
    root: str
    specs: str  # relative to root, posix
    lang: str
    settings: Optional[str]  # the settings file, when there is one

    @property
    def specs_dir(self) -> str:
        return os.path.join(self.root, *self.specs.split("/"))


def is_repo_root(root: str) -> bool:
    return os.path.isdir(os.path.join(root, TIPC)) or os.path.isfile(os.path.join(root, SETTINGS))


def load_project(root: str) -> Project:
    """The project at `root`, or a UsageError/SpecError saying why it is not one."""
    if not os.path.isdir(root):
        raise UsageError(f"{root}: not a directory")
    settings = os.path.join(root, SETTINGS)
    values: dict[str, str] = {"specs": DEFAULT_SPECS, "lang": "zh"}
    found = None
    if os.path.lexists(settings):
        values.update(_read_settings(settings, read_text(settings)))
        found = settings
    elif not os.path.isdir(os.path.join(root, TIPC)):
        raise UsageError(
            f"{os.path.abspath(root)} is not a model repo root: it has neither {TIPC}/ nor {SETTINGS}; "
            "run this in the repo's root (or give SPEC files)"
        )
    project = Project(root=root, specs=values["specs"], lang=values["lang"], settings=found)
    _specs_inside(project)
    return project


def _specs_inside(project: Project) -> None:
    """The specs folder, every link on its way resolved, lies inside the repo: a committed link
    (`test_tipc/specs -> /elsewhere`, or `specs: lnk` naming one) must not build specs from
    outside the pull request into the repo."""
    try:
        resolve_inside(project.specs_dir, project.root)
    except SpecError:
        real = os.path.realpath(project.specs_dir)
        where = project.settings or project.specs_dir
        raise SpecError(
            [
                Problem(
                    printable(where),
                    None,
                    None,
                    "specs" if project.settings else None,
                    f"the specs folder {printable(project.specs)} leads to {printable(real)}, outside the repo "
                    "(a symbolic link on the way); tipcgen reads a repo's specs only inside the repo",
                )
            ]
        ) from None


def _read_settings(path: str, text: str) -> dict[str, str]:
    # the spec loader's bounded YAML parser (size, depth, aliases), which locates every key
    from tipcgen.spec.yamlpos import load_yaml

    def problem(line: int, col: int, field: str, message: str) -> SpecError:
        return SpecError([Problem(path, line, col, field, message, None)])

    data, positions = load_yaml(text, path)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise problem(1, 1, "", "the settings must be a mapping (specs:, lang:)")
    out: dict[str, str] = {}
    for key, value in data.items():
        line, col = positions.locate((key,), prefer_key=True) or (1, 1)
        if key not in _KEYS:
            raise problem(line, col, str(key), f"unknown setting {key!r}; settings are {', '.join(_KEYS)}")
        if not isinstance(value, str) or not value.strip():
            raise problem(line, col, key, f"{key} must be a non-empty string")
        if key == "lang" and value not in ("zh", "en"):
            raise problem(line, col, key, f"lang {value!r} must be zh or en")
        if key == "specs":
            norm = posixpath.normpath(value)
            if value.startswith("/") or norm == ".." or norm.startswith("../") or "\\" in value:
                raise problem(line, col, key, f"specs {value!r} must be a folder inside the repo (relative, no `..`)")
            value = norm
        out[key] = value
    return out


def manifest_text(files: dict[str, bytes]) -> bytes:
    """The ownership record of `files` (paths relative to the repo root)."""
    lines = [
        "# Files tipcgen generated in this test_tipc/ (sha256  path). `tipcgen build` replaces only these\n",
        "# and removes one it no longer generates only while it is unchanged. Do not edit.\n",
    ]
    lines += [f"{hashlib.sha256(data).hexdigest()}  {rel}\n" for rel, data in sorted(files.items())]
    return "".join(lines).encode("utf-8")


def read_manifest(root: str) -> dict[str, str]:
    """{path: sha256} of the files tipcgen wrote in root's test_tipc/ ({} when none)."""
    path = os.path.join(root, *MANIFEST.split("/"))
    try:  # tipcgen's own file: never a link, a FIFO or larger than 4 MiB (else: no claim at all)
        data = read_owned(path, root, MANIFEST_BYTES)
    except SpecError:
        return {}
    if data is None:
        return {}
    out = {}
    for line in data.decode("utf-8", "replace").splitlines():
        digest, sep, rel = line.partition("  ")
        if line.startswith("#") or not sep or len(digest) != 64:
            continue
        parts = rel.split("/")
        if parts[0] == TIPC and not any(p in ("", ".", "..") for p in parts):
            out[rel] = digest
    return out


def file_digest(path: str) -> Optional[str]:
    """sha256 of a file tipcgen may own (None: missing, a link, not a regular file, or larger than
    anything tipcgen writes)."""
    try:
        data = read_owned(path, os.path.dirname(path) or ".", OWNED_BYTES)
    except SpecError:
        return None
    return None if data is None else hashlib.sha256(data).hexdigest()


# The kinds of file whose every generated copy starts with tipcgen's banner ("Generated by
# tipcgen ... Do not edit"): a manifest line claiming one without it is not tipcgen's claim.
BANNER = b"Generated by tipcgen"
BANNER_KINDS = (".sh", ".py", ".md")


def _looks_generated(path: str, rel: str) -> bool:
    if not rel.endswith(BANNER_KINDS):
        return True
    try:
        head = read_bytes(path, 512, tree=os.path.dirname(path) or ".", what="a generated file", links=False)
    except SpecError:
        return False
    return BANNER in head[:512]


@dataclass
class WritePlan:
    """What a repo build does to test_tipc/: files to write, owned files to remove, and what it
    refuses or leaves alone (each with the reason)."""

    write: dict[str, bytes]
    remove: list[str]
    kept: list[str]  # owned once, no longer generated, edited since: left, with a warning
    conflicts: list[str]  # exist, not ours, differ: a build refuses them unless adopting
    # listed in the manifest, but not what tipcgen wrote there (edited by hand, or a forged line):
    # refused like conflicts unless adopting
    edited: list[str] = field(default_factory=list)
    unclaimed: list[str] = field(default_factory=list)  # listed, the hash agrees, no banner: left


def plan_writes(root: str, files: dict[str, bytes], adopt: bool = False) -> WritePlan:
    """The manifest is a claim, not an authority: a file is replaced or removed only when its
    bytes are what the manifest says tipcgen wrote (its sha256 agrees, and a script or doc carries
    tipcgen's banner) or what this build writes; anything else is refused (replacing) or left in
    place (removing)."""
    owned = read_manifest(root)
    conflicts, edited = [], []
    for rel, data in files.items():
        path = os.path.join(root, *rel.split("/"))
        if rel == MANIFEST or not os.path.lexists(path) or adopt:
            continue
        have = file_digest(path)
        if have == hashlib.sha256(data).hexdigest():
            continue
        if rel not in owned:
            conflicts.append(rel)
        elif have != owned[rel] or not _looks_generated(path, rel):
            edited.append(rel)
    remove: list[str] = []
    kept: list[str] = []
    unclaimed: list[str] = []
    for rel, digest in sorted(owned.items()):
        if rel in files:
            continue
        path = os.path.join(root, *rel.split("/"))
        have = file_digest(path)
        if have is None:
            continue
        if have != digest:
            kept.append(rel)
        elif not _looks_generated(path, rel):
            unclaimed.append(rel)
        else:
            remove.append(rel)
    return WritePlan(write=files, remove=remove, kept=kept, conflicts=conflicts, edited=edited, unclaimed=unclaimed)
