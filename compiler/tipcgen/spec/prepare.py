"""The `prepare` section of a spec: per mode, the artifacts to fetch, extract and link.

A mode's list holds steps, told apart by their first key:

- `url:`      Download: fetch an artifact (checksummed, cached, retried), copy it into `to`
              or extract it there;
- `extract:`  Extract: unpack an archive that ships with the model repo;
- `link:`     Link: `ln -s target link`, inside `dir`;
- `remove:`   Remove: `rm -rf` paths;
- `pip:`      Pip: `python3 -m pip install` requirements;
- `run:`      Run: a plain shell command (`bash -c`), for what the rest cannot say.
"""

from __future__ import annotations

import os
import posixpath
import re
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationInfo, field_validator, model_validator

from tipcgen.spec.policy import PlainText


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


_URL = re.compile(r"^https?://[^\s'\"`$;&|<>\\]+$")
_FILE_URL = re.compile(r"^file:///[^\s'\"`$;&|<>\\]*$")
# The directory a spec's file:// URLs may name (a local mirror); unset, they are refused: a
# spec from a pull request must not make prepare copy /etc/shadow into the repo.
FILE_URLS_ENV = "TIPC_ALLOW_FILE_URLS"
MAX_SIZE = 1 << 50  # 1 PiB: more is a mistake, and would overflow the bash's arithmetic
_BASE = re.compile(r"^https?://[^\s/'\"`$;&|<>\\]+(/[^\s'\"`$;&|<>\\]*)?$")
# One path component: a file or directory name we create.
_NAME = re.compile(r"^[^/\x00-\x1f]+$")

# Archive types by file name; `tar` also covers compressed tars (tar detects the compression).
_SUFFIXES = (
    (".tar.gz", "tar"),
    (".tgz", "tar"),
    (".tar.bz2", "tar"),
    (".tbz2", "tar"),
    (".tar.xz", "tar"),
    (".txz", "tar"),
    (".tar", "tar"),
    (".zip", "zip"),
)
EXTRACT_KINDS = ("tar", "tar.gz", "tgz", "zip")


def url_basename(url: str) -> str:
    """The file name a URL names (query and fragment dropped), or "download"."""
    path = url.split("?", 1)[0].split("#", 1)[0]
    name = posixpath.basename(path.split("://", 1)[-1].partition("/")[2])
    return name if name and name not in (".", "..") and _NAME.match(name) else "download"


def archive_kind(name: str) -> Optional[str]:
    """ "tar" or "zip" from an archive's file name, None when the name does not tell."""
    low = name.lower()
    for suffix, kind in _SUFFIXES:
        if low.endswith(suffix):
            return kind
    return None


def _rel_path(v: str, what: str, allow_dot: bool = True) -> str:
    """A relative path inside the model repo: no absolute paths, no `..` (control characters are
    refused by the field's type, PlainText)."""
    if not isinstance(v, str) or not v.strip():
        raise ValueError(f"{what} must be a non-empty path")
    if v.startswith("/"):
        raise ValueError(f"{what} {v!r} must be relative to the model repo root, not absolute")
    if ".." in v.split("/"):
        raise ValueError(f"{what} {v!r} must not contain `..`: prepare writes inside the model repo only")
    if not allow_dot and posixpath.normpath(v) == ".":
        raise ValueError(f"{what} {v!r} is the model repo root itself")
    return v


def _file_url(v: str) -> str:
    """A file:// URL, allowed only below the directory TIPC_ALLOW_FILE_URLS names."""
    root = os.environ.get(FILE_URLS_ENV, "")
    if not root:
        raise ValueError(
            f"{v!r}: a file:// URL reads a file of the machine prepare runs on; it is refused unless "
            f"{FILE_URLS_ENV} names the directory it lies in (a local mirror); or use an http(s) URL"
        )
    if not _FILE_URL.match(v) or ".." in v.split("/"):
        raise ValueError(f"{v!r} must be file:///<absolute path>, without `..`")
    path, top = v[len("file://") :], posixpath.normpath(root)
    if not path.startswith(top.rstrip("/") + "/"):
        raise ValueError(f"{v!r} lies outside {top}, the directory {FILE_URLS_ENV} allows")
    return v


def _name(v: str, what: str) -> str:
    if not _NAME.match(v or "") or v in (".", "..") or v.startswith(".tipcgen"):
        raise ValueError(f"{what} {v!r} must be one plain file name (no `/`, not `.`/`..`/.tipcgen*)")
    return v


class Download(Model):
    """Fetch an artifact into the cache (checksummed, retried, resumed), then copy it into `to`
    or extract it there. Without `sha256` the artifact is unverified (the docs say so)."""

    url: PlainText = Field(description="http(s) or file URL of the artifact.")
    to: PlainText = Field(description="Directory (relative to the model repo root) the artifact lands in.")
    sha256: Optional[PlainText] = Field(
        None, description="Expected sha256 (64 lowercase hex digits); `tipcgen hash URL` prints it."
    )
    size: Optional[int] = Field(None, ge=0, description="Expected size in bytes, if known.")
    extract: Union[bool, Literal["tar", "tar.gz", "tgz", "zip"]] = Field(
        False, description="Extract into `to` (true: archive type from the file name) or copy the file."
    )
    name: Optional[PlainText] = Field(None, description="File name in `to` (default: the URL's); not with extract.")
    rename: dict[PlainText, PlainText] = Field(
        default_factory=dict, description="Extracted top-level entries to rename: {in archive: in `to`}."
    )
    mirror: Optional[PlainText] = Field(
        None,
        description="Base of `url` that the TIPC_MIRROR environment variable "
        "replaces, e.g. https://paddleocr.bj.bcebos.com.",
    )

    @field_validator("sha256")
    @classmethod
    def _sha(cls, v):
        if v is not None and not re.fullmatch(r"[0-9a-f]{64}", v):
            raise ValueError("sha256 must be 64 lowercase hex digits")
        return v

    @field_validator("url")
    @classmethod
    def _url(cls, v):
        if v.startswith("file:"):
            return _file_url(v)
        if not _URL.match(v):
            raise ValueError(f"{v!r} is not a plain http(s) URL")
        if "@" in v.split("://", 1)[1].split("/", 1)[0]:
            raise ValueError(
                f"{v!r} holds credentials (user:password@): a spec is public and prepare prints its URLs; "
                "serve the file from a mirror (TIPC_MIRROR) instead"
            )
        return v

    @field_validator("size")
    @classmethod
    def _size(cls, v):
        if v is not None and v > MAX_SIZE:
            raise ValueError(f"size {v} is more than 1 PiB ({MAX_SIZE} bytes)")
        return v

    @field_validator("to")
    @classmethod
    def _to(cls, v):
        return _rel_path(v, "to")

    @field_validator("name")
    @classmethod
    def _file_name(cls, v):
        return v if v is None else _name(v, "name")

    @field_validator("rename")
    @classmethod
    def _rename(cls, v):
        for old, new in v.items():
            _name(old, "rename source")
            _name(new, "rename target")
        if len(set(v.values())) != len(v):
            raise ValueError("two entries are renamed to the same name")
        return v

    @field_validator("mirror")
    @classmethod
    def _mirror(cls, v, info: ValidationInfo):
        if v is None:
            return v
        if not _BASE.match(v) or v.endswith("/"):
            raise ValueError(
                f"mirror {v!r} must be an http(s) URL base without a trailing `/`, e.g. https://paddleocr.bj.bcebos.com"
            )
        url = info.data.get("url")
        if url is not None and not url.startswith(v + "/"):
            raise ValueError(f"mirror {v!r} is not a base of url {url!r}")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        if self.extract is not False:
            if self.name is not None:
                raise ValueError(
                    "`name` renames a copied file; for an extracted archive use `rename: {entry: new_name}`"
                )
            if self.kind is None:
                raise ValueError(
                    f"cannot tell the archive type of {self.file!r}; write `extract:` one of {', '.join(EXTRACT_KINDS)}"
                )
        elif self.rename:
            raise ValueError("`rename` applies to extracted entries; set `extract` or use `name`")
        return self

    @property
    def file(self) -> str:
        """The artifact's file name: in the cache, and in `to` unless extracted."""
        return self.name or url_basename(self.url)

    @property
    def kind(self) -> Optional[str]:
        """ "file" (copied), "tar" or "zip" (extracted); None when the archive type is unknown."""
        if self.extract is False:
            return "file"
        if self.extract is True:
            return archive_kind(url_basename(self.url))
        return "zip" if self.extract == "zip" else "tar"


class Extract(Model):
    """Extract an archive that ships with the repo (tar/tar.gz/zip) into a directory."""

    extract: PlainText
    to: PlainText = "."
    format: Optional[Literal["tar", "tar.gz", "tgz", "zip"]] = None

    @field_validator("extract")
    @classmethod
    def _archive(cls, v):
        if not isinstance(v, str) or not v.strip():
            raise ValueError("extract must name an archive file")
        return v

    @field_validator("to")
    @classmethod
    def _to(cls, v):
        return _rel_path(v, "to")

    @model_validator(mode="after")
    def _known_kind(self):
        if self.kind is None:
            raise ValueError(
                f"cannot tell the archive type of {self.extract!r}; add `format:` one of {', '.join(EXTRACT_KINDS)}"
            )
        return self

    @property
    def kind(self) -> Optional[str]:
        if self.format is not None:
            return "zip" if self.format == "zip" else "tar"
        return archive_kind(posixpath.basename(self.extract))


class Link(Model):
    """`ln -s target link`, run inside directory `dir`."""

    link: PlainText
    target: PlainText
    dir: PlainText = "."

    @field_validator("link")
    @classmethod
    def _link(cls, v):
        return _rel_path(v, "link", allow_dot=False)

    @field_validator("dir")
    @classmethod
    def _dir(cls, v):
        return _rel_path(v, "dir")

    @field_validator("target")
    @classmethod
    def _target(cls, v):
        if not v:
            raise ValueError("target must be a non-empty path")
        return v


class Remove(Model):
    remove: list[PlainText]

    @field_validator("remove")
    @classmethod
    def _paths(cls, v):
        return [_rel_path(p, "remove", allow_dot=False) for p in v]


class Pip(Model):
    pip: list[PlainText]


class Run(Model):
    """A plain shell command (run with `bash -c` inside `dir`), for what other steps cannot say."""

    run: PlainText  # a shell command by design: review it like code
    dir: PlainText = "."

    @field_validator("run")
    @classmethod
    def _command(cls, v):
        if not v.strip():
            raise ValueError("run must be a non-empty command")
        return v

    @field_validator("dir")
    @classmethod
    def _dir(cls, v):
        return _rel_path(v, "dir")


def _step_kind(v: Any) -> str:
    """A prepare step's kind is told by its first key (url / extract / link / remove / pip / run)."""
    if isinstance(v, BaseModel):
        return type(v).__name__
    if isinstance(v, dict):
        for key, tag in (
            ("url", "Download"),
            ("extract", "Extract"),
            ("link", "Link"),
            ("remove", "Remove"),
            ("pip", "Pip"),
            ("run", "Run"),
        ):
            if key in v:
                return tag
    return "Download"


PrepareStep = Annotated[
    Union[
        Annotated[Download, Tag("Download")],
        Annotated[Extract, Tag("Extract")],
        Annotated[Link, Tag("Link")],
        Annotated[Remove, Tag("Remove")],
        Annotated[Pip, Tag("Pip")],
        Annotated[Run, Tag("Run")],
    ],
    Discriminator(_step_kind),
]
