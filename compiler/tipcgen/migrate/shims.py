"""The recording harness's shell shims (templates/shims/): the programs a recorded run finds on its
PATH in place of the real ones. Files, not strings in the code, so that shellcheck reads them as
it reads every generated script (tests/test_shims.py)."""

from __future__ import annotations

from functools import cache
from importlib import resources

from tipcgen.inputs import read_bytes

_FRAGMENT = "# shellcheck shell=bash\n"  # a part of a shim (no shebang): the directive is shellcheck's only


@cache
def shim(name: str) -> str:
    """The text of templates/shims/NAME (a fragment without its shellcheck directive line)."""
    root = str(resources.files("tipcgen.templates"))
    text = read_bytes(f"{root}/shims/{name}", tree=root, what="a shim of tipcgen's harness").decode("utf-8")
    return text.removeprefix(_FRAGMENT)
