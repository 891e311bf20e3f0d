"""What prepare.sh does for a spec: per mode, the artifacts to fetch, extract and link."""

from __future__ import annotations

import posixpath

from .layouts import Layout
from .modes import MODES
from .prepare_spec import Download, Extract, Link, Pip, Remove
from .spec import Spec


def archive_name(url: str) -> str:
    return posixpath.basename(url.split("?", 1)[0]) or "download"


_WORDS = {
    "zh": dict(download="下载", extract_after="并解压到", to="到", unverified="未校验（未提供 sha256）",
               verified="sha256 校验", extract="解压", link="创建软链接", remove="删除", pip="pip 安装"),
    "en": dict(download="download", extract_after="and extract into", to="into", unverified="unverified (no sha256)",
               verified="sha256-checked", extract="extract", link="symlink", remove="remove", pip="pip install"),
}


def link_path(step: Link) -> str:
    return posixpath.normpath(posixpath.join(step.dir, step.link))


def describe_steps(steps: list, lang: str = "zh") -> list[str]:
    """One human line per prepare step (for the docs)."""
    w = _WORDS[lang]
    out = []
    for step in steps:
        if isinstance(step, Download):
            check = f"{w['verified']} `{step.sha256[:12]}…`" if step.sha256 else w["unverified"]
            where = w["extract_after"] if step.extract else w["to"]
            out.append(f"{w['download']} `{step.url}` {where} `{step.to}`，{check}" if lang == "zh"
                       else f"{w['download']} `{step.url}` {where} `{step.to}`, {check}")
        elif isinstance(step, Extract):
            out.append(f"{w['extract']} `{step.extract}` {w['to']} `{step.to}`")
        elif isinstance(step, Link):
            out.append(f"{w['link']} `{link_path(step)}` -> `{step.target}`")
        elif isinstance(step, Remove):
            out.append(f"{w['remove']} " + ", ".join(f"`{p}`" for p in step.remove))
        elif isinstance(step, Pip):
            out.append(f"{w['pip']} " + " ".join(f"`{p}`" for p in step.pip))
    return out


def prepare_context(spec: Spec, layout: Layout, banner: str) -> dict:
    modes = []
    for mode in MODES:
        steps = []
        for step in spec.prepare.get(mode, []):
            if isinstance(step, Download):
                file = archive_name(step.url)
                steps.append(dict(kind="download", url=step.url, to=step.to, extract=step.extract,
                                  sha256=step.sha256 or "", file=file,
                                  archive=posixpath.normpath(posixpath.join(step.to, file))))
            elif isinstance(step, Extract):
                steps.append(dict(kind="extract", archive=step.extract, to=step.to))
            elif isinstance(step, Link):
                steps.append(dict(kind="link", path=link_path(step),
                                  target=step.target, dir=step.dir))
            elif isinstance(step, Remove):
                steps.append(dict(kind="remove", paths=step.remove))
            elif isinstance(step, Pip):
                steps.append(dict(kind="pip", packages=step.pip))
        modes.append((mode, steps))
    return dict(banner=banner, spec=spec, layout=layout, model_names=spec.model_names(),
                model_name_index=layout.index("model_name"), python_index=layout.index("python"),
                read_lines=layout.read_lines, modes=modes)
