"""The `prepare` section of a spec: per mode, the artifacts to fetch, extract and link."""

from __future__ import annotations

import re
from typing import Annotated, Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Discriminator, Tag, field_validator


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Download(Model):
    """Fetch a file into a directory, optionally extract it (tar/tar.gz/zip)."""

    url: str
    to: str
    sha256: Optional[str] = None
    extract: bool = False

    @field_validator("sha256")
    @classmethod
    def _sha(cls, v):
        if v is not None and not re.fullmatch(r"[0-9a-f]{64}", v):
            raise ValueError("sha256 must be 64 lowercase hex digits")
        return v

    @field_validator("url")
    @classmethod
    def _url(cls, v):
        if not re.match(r"^(https?|file)://[^\s'\"`$;&|<>\\]+$", v):
            raise ValueError(f"{v!r} is not a plain http(s) URL")
        return v


class Extract(Model):
    """Extract an archive that ships with the repo (tar/tar.gz/zip) into a directory."""

    extract: str
    to: str = "."


class Link(Model):
    """`ln -s target link`, run inside directory `dir`."""

    link: str
    target: str
    dir: str = "."


class Remove(Model):
    remove: list[str]


class Pip(Model):
    pip: list[str]


def _step_kind(v: Any) -> str:
    """A prepare step's kind is told by its first key (url / extract / link / remove / pip)."""
    if isinstance(v, BaseModel):
        return type(v).__name__
    if isinstance(v, dict):
        for key, tag in (("url", "Download"), ("extract", "Extract"), ("link", "Link"),
                         ("remove", "Remove"), ("pip", "Pip")):
            if key in v:
                return tag
    return "Download"


PrepareStep = Annotated[
    Union[Annotated[Download, Tag("Download")], Annotated[Extract, Tag("Extract")],
          Annotated[Link, Tag("Link")], Annotated[Remove, Tag("Remove")], Annotated[Pip, Tag("Pip")]],
    Discriminator(_step_kind),
]
