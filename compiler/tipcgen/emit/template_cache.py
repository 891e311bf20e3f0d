"""tipcgen's compiled templates, kept between runs in the user's cache directory
(`$TIPC_CACHE/templates`, default `~/.cache/tipcgen/templates`): compiling the templates is about a
third of a `tipcgen build`, and every build, check and migrate would compile them again.

Only tipcgen's own templates are ever compiled (no spec or config text is a template). jinja2 keys
an entry by the template's name and checks a checksum of its source; the entry's name carries a
digest of the environment's options and jinja2's version: an edited template, or one compiled with
other settings, is compiled anew. What is loaded runs as code, so the cache is used only where no
one else can write: a directory of this user's, not a link, not group- or world-writable
(fsio.is_private_dir). A cache that cannot be read or written (a read-only home, a sandbox) is
skipped without a word: the templates are compiled as before, and the output is the same bytes.
"""

from __future__ import annotations

import hashlib
import os
from typing import Optional

import jinja2

from tipcgen.errors import TipcError
from tipcgen.fsio import cache_dir, is_private_dir, private_dir, write_atomic
from tipcgen.inputs import read_owned

# A compiled template is a few tens of kilobytes; anything much larger is not one of ours.
_MAX_ENTRY = 4 << 20


class TemplateCache(jinja2.BytecodeCache):
    def __init__(self, directory: str, salt: str):
        self.directory = directory
        self.salt = salt  # what else the compiled code depends on (the options, jinja2's version)

    def _entry(self, bucket: jinja2.bccache.Bucket) -> Optional[str]:
        # checked on each use: the directory may have been swapped since the last template
        if not is_private_dir(self.directory):
            return None
        return os.path.join(self.directory, f"{self.salt}-{bucket.key}.cache")

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        path = self._entry(bucket)
        if path is None:
            return
        try:
            data = read_owned(path, self.directory, _MAX_ENTRY)
            if data:
                bucket.bytecode_from_string(data)
        except Exception:  # unreadable, or not a compiled template (pickle and marshal raise many kinds)
            bucket.reset()  # compiled again

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            private_dir(self.directory)
            path = self._entry(bucket)
            if path is not None:
                write_atomic(path, bucket.bytecode_to_string(), 0o600)
        except (TipcError, OSError):
            pass


def template_cache(options: dict) -> TemplateCache:
    """The user's cache ($TIPC_CACHE, else ~/.cache/tipcgen) for an Environment made with `options`."""
    salt = hashlib.sha256(repr((jinja2.__version__, sorted(options.items()))).encode()).hexdigest()[:16]
    return TemplateCache(os.path.join(cache_dir(os.environ), "templates"), salt)
