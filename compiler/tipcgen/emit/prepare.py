"""What prepare does for a spec: per mode, the artifacts to fetch, extract and link.

`mode_steps` turns a mode's validated steps into flat operations (dicts of strings) that both
implementations run: the generated `prepare.sh` (templates/prepare.sh.j2) and
`tipcgen prepare` (run/prepare/). Everything the two must agree on is computed here once: the
normalized destination, the cache entry, the stamp's name.

Cache layout (under $TIPC_CACHE, default ~/.cache/tipcgen):

    sha256/<sha256 of the file>/<url basename>     artifacts whose spec gives sha256
    url/<sha256 of the url>/<url basename>         unverified artifacts, keyed by their spec URL
    .../<url basename>.part                        a download in progress (resumed next time)

Destination state: `<to>/.tipcgen/<file>.stamp`, one per artifact, records its source, its sha256
and the top-level entries it put into `<to>`; while all of them exist, the artifact is not fetched
or extracted again.
"""

from __future__ import annotations

import hashlib
import posixpath
import shlex
from typing import Optional

from tipcgen.dialects import Layout
from tipcgen.emit.docs_lang import PREPARE_WORDS
from tipcgen.spec.ir import Spec, prepare_word_modes
from tipcgen.spec.modes import prepare_modes
from tipcgen.spec.prepare import Download, Extract, Link, Pip, Remove, Run, url_basename

STATE_DIR = ".tipcgen"


def archive_name(url: str) -> str:
    return url_basename(url)


def cache_relpath(url: str, sha256: str | None) -> str:
    """The artifact's file in the cache, relative to the cache root."""
    if sha256:
        return f"sha256/{sha256}/{url_basename(url)}"
    return f"url/{hashlib.sha256(url.encode('utf-8')).hexdigest()}/{url_basename(url)}"


def link_path(step: Link) -> str:
    return posixpath.normpath(posixpath.join(step.dir, step.link))


def mode_steps(steps: list) -> list[dict]:
    """A mode's steps as flat operations (all values strings or lists of strings)."""
    out: list[dict] = []
    for step in steps:
        if isinstance(step, Download):
            out.append(
                dict(
                    kind="download",
                    url=step.url,
                    base=step.mirror or "",
                    sha256=step.sha256 or "",
                    size="" if step.size is None else str(step.size),
                    to=posixpath.normpath(step.to),
                    file=step.file,
                    format=step.kind,
                    cache=cache_relpath(step.url, step.sha256),
                    rename=[[old, new] for old, new in step.rename.items()],
                )
            )
        elif isinstance(step, Extract):
            out.append(
                dict(
                    kind="extract",
                    archive=posixpath.normpath(step.extract),
                    format=step.kind,
                    to=posixpath.normpath(step.to),
                    file=posixpath.basename(step.extract),
                )
            )
        elif isinstance(step, Link):
            out.append(dict(kind="link", path=link_path(step), target=step.target, dir=posixpath.normpath(step.dir)))
        elif isinstance(step, Remove):
            out.append(dict(kind="remove", paths=[posixpath.normpath(p) for p in step.remove]))
        elif isinstance(step, Pip):
            out.append(dict(kind="pip", packages=list(step.pip)))
        elif isinstance(step, Run):
            out.append(dict(kind="run", command=step.run, dir=posixpath.normpath(step.dir)))
    return out


def _ticks(items) -> str:
    return ", ".join(f"`{i}`" for i in items)


def _describe_download(step: Download, w: dict[str, str]) -> str:
    check = f"{w['verified']} `{step.sha256[:12]}…`" if step.sha256 else w["unverified"]
    if step.kind == "file":
        dest = posixpath.join(step.to, step.name) if step.name else step.to
        line = f"{w['download']} `{step.url}` {w['to']} `{dest}`"
    else:
        line = f"{w['download']} `{step.url}` {w['extract_after']} `{step.to}`"
        for old, new in step.rename.items():
            line += w["rename"].format(f"`{old}`", f"`{new}`")
    return line + w["sep"] + check


def _describe_step(step: object, w: dict[str, str]) -> str | None:
    """The human line for one step, or None for a kind that has none."""
    if isinstance(step, Download):
        return _describe_download(step, w)
    if isinstance(step, Extract):
        return f"{w['extract']} `{step.extract}` {w['to']} `{step.to}`"
    if isinstance(step, Link):
        return f"{w['link']} `{link_path(step)}` -> `{step.target}`"
    if isinstance(step, Remove):
        return f"{w['remove']} " + ", ".join(f"`{p}`" for p in step.remove)
    if isinstance(step, Pip):
        return f"{w['pip']} " + " ".join(f"`{p}`" for p in step.pip)
    if isinstance(step, Run):
        where = w["in_dir"].format(step.dir) if posixpath.normpath(step.dir) != "." else ""
        return f"{w['run']} `{step.run}`{where}"
    return None


def describe_steps(steps: list, lang: str = "zh") -> list[str]:
    """One human line per prepare step (for the docs), then notes on the mirror and the cache."""
    w = PREPARE_WORDS[lang]
    out = []
    mirrors: list[str] = []
    downloads = 0
    for step in steps:
        line = _describe_step(step, w)
        if line is not None:
            out.append(line)
        if isinstance(step, Download):
            downloads += 1
            if step.mirror and step.mirror not in mirrors:
                mirrors.append(step.mirror)
    if mirrors:
        out.append(w["mirror"].format(_ticks(mirrors)))
    if downloads:
        out.append(w["cache"])
    return out


def mode_variants(spec: Spec, mode: str) -> list[tuple[list[str], Optional[list[dict]]]]:
    """[(case patterns, operations)] of a mode: first the suites with steps of their own
    (prepare.sh picks them by the config's file name), last ([]: any other config, the spec's
    steps). Patterns match "/$FILENAME"."""
    own: dict[str, tuple[list[str], list[dict]]] = {}
    for suite in spec.suites.values():
        if mode in suite.prepare:
            ops = mode_steps(suite.prepare[mode])
            own.setdefault(repr(ops), ([], ops))[0].append("*/" + shlex.quote(suite.file))
    for file, raw in spec.other_configs.items():  # a verbatim config prepared in its chain's mode
        if mode in raw.prepare:
            ops = mode_steps(raw.prepare[mode])
            own.setdefault(repr(ops), ([], ops))[0].append("*/" + shlex.quote(file))
    return [*own.values(), ([], mode_steps(spec.prepare.get(mode, [])))]


def _shared_name_variants(owners: list[Spec], name: str, mode: str) -> list[tuple[list[str], Optional[list[dict]]]]:
    """A model_name that specs of several folders give with different steps (a repo's
    GeneralRecognition and GeneralRecognitionV2): each config picked by its folder and file; any
    other config of that name is refused (None)."""
    own: dict[str, tuple[list[str], Optional[list[dict]]]] = {}
    for spec in owners:
        for suite_name, suite in spec.suites.items():
            if suite.model_name == name:
                ops = mode_steps(spec.prepare_for(suite_name, mode))
                pattern = f"*/{shlex.quote(spec.model)}/{shlex.quote(suite.file)}"
                own.setdefault(repr(ops), ([], ops))[0].append(pattern)
        for file, raw in spec.other_configs.items():
            if name in raw.prepared_names(prepare_word_modes(spec.layout)):
                ops = mode_steps(raw.prepare.get(mode, []))
                pattern = f"*/{shlex.quote(spec.model)}/{shlex.quote(file)}"
                own.setdefault(repr(ops), ([], ops))[0].append(pattern)
    return [*own.values(), ([], None)]


def spec_modes(specs: list[Spec]) -> tuple[str, ...]:
    """The modes prepare.sh takes: the train chain's, and the other chains' the specs prepare for."""
    used = {mode for spec in specs for mode in spec.prepare}
    used |= {mode for spec in specs for suite in spec.suites.values() for mode in suite.prepare}
    used |= {mode for spec in specs for raw in spec.other_configs.values() for mode in raw.prepare}
    return prepare_modes(used)


def prepare_groups(specs: list[Spec]) -> list[tuple[list[str], list[tuple[str, list]]]]:
    """[(model names, [(mode, variants)])]: what prepare.sh does for each model name, as
    upstream's dispatches on the config's `model_name` (and, within it, on the config's file: see
    mode_variants). Model names whose steps are the same share an arm."""
    owners: dict[str, list[Spec]] = {}
    for spec in specs:
        for name in spec.model_names():
            owners.setdefault(name, []).append(spec)
    arms: dict[str, tuple[list[str], list]] = {}
    all_modes = spec_modes(specs)
    for name, specs_of_name in owners.items():
        per_spec = [[(mode, mode_variants(spec, mode)) for mode in all_modes] for spec in specs_of_name]
        if all(repr(m) == repr(per_spec[0]) for m in per_spec):
            modes = per_spec[0]
        else:
            modes = [(mode, _shared_name_variants(specs_of_name, name, mode)) for mode in all_modes]
        arms.setdefault(repr(modes), ([], modes))[0].append(name)
    return list(arms.values())


def prepare_context(specs: list[Spec], layout: Layout, banner: str) -> dict:
    groups = prepare_groups(specs)
    return dict(
        banner=banner,
        layout=layout,
        model_names=[n for names, _ in groups for n in names],
        model_name_index=layout.index("model_name"),
        word_modes=[m for m in layout.dialect.prepare_word_modes if m in spec_modes(specs)],
        python_index=layout.index("python"),
        read_lines=layout.read_lines,
        groups=groups,
        mode_names=list(spec_modes(specs)),
        mode_sections=mode_sections(spec_modes(specs)),
    )


def mode_sections(modes) -> list[tuple[str, str, str]]:
    """(mode, first section, the scripts that run such configs) for each known first section of a
    config no script of that mode runs (dialects.section_owners): prepare.sh refuses it in that
    mode (a train config in cpp_infer, a serving config in paddle2onnx_infer or whole_infer)."""
    from tipcgen.dialects import section_owners
    from tipcgen.spec.modes import FIXED_MODE_SCRIPTS, serves

    def named(scripts: tuple) -> str:  # a fixed-mode script's config: that script's, in its mode
        fixed = [s for s in scripts if s in FIXED_MODE_SCRIPTS]
        return " or ".join(fixed or scripts) + (
            f" (prepared in {' or '.join(FIXED_MODE_SCRIPTS[fixed[0]])} only)" if fixed else ""
        )

    owners = section_owners()
    return [
        (mode, section, named(scripts))
        for mode in modes
        for section, scripts in owners.items()
        if not serves(mode, scripts)
    ]
