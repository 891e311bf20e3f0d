"""What prepare.sh does for a spec: per mode, the artifacts to fetch, extract and link."""

from __future__ import annotations

import posixpath

from .layouts import Layout
from .modes import MODES
from .spec import Download, Extract, Link, Pip, Remove, Spec


def archive_name(url: str) -> str:
    return posixpath.basename(url.split("?", 1)[0]) or "download"


def describe_steps(steps: list) -> list[str]:
    """One human line per prepare step (for the docs)."""
    out = []
    for step in steps:
        if isinstance(step, Download):
            verb = "download+extract" if step.extract else "download"
            check = f"sha256 {step.sha256[:12]}…" if step.sha256 else "unverified (no sha256)"
            out.append(f"{verb} `{step.url}` -> `{step.to}` ({check})")
        elif isinstance(step, Extract):
            out.append(f"extract `{step.extract}` -> `{step.to}`")
        elif isinstance(step, Link):
            out.append(f"link `{posixpath.join(step.dir, step.link)}` -> `{step.target}`")
        elif isinstance(step, Remove):
            out.append("remove " + ", ".join(f"`{p}`" for p in step.remove))
        elif isinstance(step, Pip):
            out.append("pip install " + " ".join(f"`{p}`" for p in step.pip))
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
                steps.append(dict(kind="link", path=posixpath.normpath(posixpath.join(step.dir, step.link)),
                                  target=step.target, dir=step.dir))
            elif isinstance(step, Remove):
                steps.append(dict(kind="remove", paths=step.remove))
            elif isinstance(step, Pip):
                steps.append(dict(kind="pip", packages=step.pip))
        modes.append((mode, steps))
    return dict(banner=banner, spec=spec, layout=layout, model_names=spec.model_names(),
                model_name_index=layout.index("model_name"), python_index=layout.index("python"),
                read_lines=layout.read_lines, modes=modes)
