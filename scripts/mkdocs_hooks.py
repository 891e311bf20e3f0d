"""mkdocs hooks for the docs site (mkdocs.yml).

- The pages are `docs/NAME.md` (English) and `docs/NAME.zh.md` (Chinese), so that GitHub shows
  English by default in the repo; the site's default language is Chinese, as upstream's TIPC docs
  are. mkdocs-static-i18n reads an unsuffixed file as the default language, so the build reads a
  staging copy where `NAME.md` is `NAME.en.md`, and drops each page's `[中文](...)`/`[English](...)`
  line (the theme's language switch replaces it).
- The generated reference pages must be fresh (scripts/docs_reference.py), or the build stops.
"""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

sys.path.insert(0, str(Path(__file__).resolve().parent))

import docs_reference  # the script beside this hook

_SWITCH = re.compile(r"^\[(中文|English)\]\([\w./-]+\.md\)\n\n?", re.M)
_STAGING: list = []


@event_priority(100)  # before the i18n plugin reads the files
def on_config(config, **kwargs):
    stale = docs_reference.stale()
    if stale:
        pages = ", ".join(stale)
        raise PluginError(f"stale generated reference pages: {pages}; run `python scripts/docs_reference.py`")
    source = Path(config["docs_dir"])
    staging = Path(tempfile.mkdtemp(prefix="tipcgen-docs-"))
    _STAGING.append(staging)
    shutil.copytree(source, staging, dirs_exist_ok=True)
    for page in staging.rglob("*.md"):
        text = _SWITCH.sub("", page.read_text(encoding="utf-8"), count=1)
        if not page.name.endswith(".zh.md") and page.with_name(page.stem + ".zh.md").is_file():
            page.unlink()
            page = page.with_name(page.stem + ".en.md")
        page.write_text(text, encoding="utf-8")
    config["docs_dir"] = str(staging)
    return config


def on_shutdown(**kwargs) -> None:
    for staging in _STAGING:
        shutil.rmtree(staging, ignore_errors=True)
