"""The recording harness's shell shims (templates/shims/): the programs a recorded run finds on its
PATH in place of the real ones. Files, not strings in the code, so that shellcheck reads them as
it reads every generated script (tests/test_shims.py)."""

from __future__ import annotations

import shutil
from functools import cache
from importlib import resources

from tipcgen.inputs import read_bytes
from tipcgen.sandbox import SYSTEM_PATH

_FRAGMENT = "# shellcheck shell=bash\n"  # a part of a shim (no shebang): the directive is shellcheck's only
_ENV_BASH = "#!/usr/bin/env bash\n"


@cache
def shim(name: str) -> str:
    """The text of templates/shims/NAME (a fragment without its shellcheck directive line)."""
    root = str(resources.files("tipcgen.templates"))
    text = read_bytes(f"{root}/shims/{name}", tree=root, what="a shim of tipcgen's harness").decode("utf-8")
    return bash_by_path(text).removeprefix(_FRAGMENT)


def bash_by_path(script: str) -> str:
    """`script` with `#!/usr/bin/env bash` made the system bash's path (as the sandbox's PATH finds
    it): a recorded run starts thousands of shims, and `env` looking bash up is one exec more each
    (a third of a recorder's cost). Unchanged when no such bash is found."""
    bash = _bash()
    return f"#!{bash}\n" + script[len(_ENV_BASH) :] if bash and script.startswith(_ENV_BASH) else script


@cache
def _bash() -> str:
    found = shutil.which("bash", path=SYSTEM_PATH) or ""
    return found if found.startswith("/") and " " not in found else ""
