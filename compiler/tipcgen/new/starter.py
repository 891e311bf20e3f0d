"""`tipcgen new`: a commented starter spec for a model that has no TIPC suite yet.

The entry points are guessed from the repo's tree (the family's usual scripts, the model's YAML
under its config folders); whatever is not found is written as the family's usual value marked
TODO. The text is checked like any spec (`load_spec_text`) before it is written, so a starter
always validates, builds and plans; it is written atomically and never over an existing file
unless asked.

Only names are looked at, never contents: a candidate is taken when it is a regular file whose
real path stays inside the repo (a link leading out of it is named in the starter and not used),
and a path that a config line could not carry as one word is skipped.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from typing import Optional

from tipcgen.errors import SpecError, UsageError, printable
from tipcgen.inputs import dirs_below, resolve_inside
from tipcgen.new.families import FAMILIES, Family, candidates
from tipcgen.new.texts import say

# A model name is a file name and a word in config lines and paths.
MODEL_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]{0,99}")
# A path a config line carries as one word (the runners split lines on spaces).
_WORD = re.compile(r"[A-Za-z0-9_./+-]+")
MAX_CONFIG_FILES = 20_000  # YAML files looked at under the config folders (PaddleDetection: ~1,500)


@dataclass
class Guess:
    """What was found in the repo: role -> (spec text, repo path or None when a placeholder)."""

    entries: dict[str, tuple[Optional[str], Optional[str]]] = field(default_factory=dict)
    config: Optional[str] = None
    notes: list[str] = field(default_factory=list)  # links out of the repo, odd names: said in the starter


def check_model(model: str) -> str:
    if not MODEL_NAME.fullmatch(model) or model in (".", ".."):
        raise UsageError(
            f"MODEL {printable(model)!r}: a model name is 1-100 letters, digits, '.', '_', '+' or '-', starting"
            " with a letter or digit (it names the spec file, the config folder and output paths)"
        )
    return model


def family_of(name: str) -> Family:
    if name not in FAMILIES:
        raise UsageError(f"--family {printable(name)!r}: families: {', '.join(FAMILIES)}")
    return FAMILIES[name]


def _inside_file(repo: str, rel: str, notes: list[str]) -> bool:
    """Whether `rel` is a regular file of the repo reached without leaving it: the read gate's rule
    (a link inside the repo to a file inside it is fine; one leading out is named, not followed)."""
    path = os.path.join(repo, *rel.split("/"))
    if not os.path.lexists(path):
        return False
    try:
        real = resolve_inside(path, repo)
    except SpecError:
        notes.append(f"{printable(rel)}: a symbolic link leading out of the repo; not used")
        return False
    try:
        return stat.S_ISREG(os.stat(real).st_mode)
    except OSError:
        return False


def _find_config(repo: str, family: Family, model: str, notes: list[str]) -> Optional[str]:
    """The model's YAML below the family's config folders: `<model>.yml|yaml` first (case
    ignored), else the shortest name starting with the model's; the shortest path on a tie."""
    exact: list[str] = []
    prefix: list[str] = []
    seen = 0
    want = model.lower()
    for folder in family.config_dirs:
        top = os.path.join(repo, *folder.split("/"))
        if not os.path.isdir(top):
            continue
        try:
            resolve_inside(top, repo)
        except SpecError:
            notes.append(f"{folder}/: a symbolic link leading out of the repo; not looked in")
            continue
        for dirpath, dirs, names in dirs_below(top):
            dirs.sort()
            for name in sorted(names):
                stem, ext = os.path.splitext(name)
                if ext not in (".yml", ".yaml"):
                    continue
                seen += 1
                if seen > MAX_CONFIG_FILES:
                    notes.append(f"more than {MAX_CONFIG_FILES} YAML files below {folder}/; stopped looking")
                    return _best(exact, prefix)
                low = stem.lower()
                if low != want and not low.startswith(want):
                    continue
                rel = os.path.relpath(os.path.join(dirpath, name), repo).replace(os.sep, "/")
                if not _WORD.fullmatch(rel):
                    notes.append(f"{printable(rel)}: not one word of a config line; not used")
                    continue
                if _inside_file(repo, rel, notes):
                    (exact if low == want else prefix).append(rel)
    return _best(exact, prefix)


def _best(exact: list[str], prefix: list[str]) -> Optional[str]:
    for found in (exact, prefix):
        if found:
            return min(found, key=lambda p: (len(p), p))
    return None


def guess(repo: str, family: Family, model: str) -> Guess:
    out = Guess()
    out.config = _find_config(repo, family, model, out.notes) if family.config_dirs else None
    cfg = out.config or family.config_placeholder.replace("{model}", model)
    for role in ("train", "eval", "export", "infer"):
        options = candidates(family, role)
        hit = next((c for c in options if _inside_file(repo, c[0], out.notes)), None)
        chosen = hit or options[0]
        text = chosen[1].replace("{cfg}", cfg).replace("{model}", model)
        out.entries[role] = (text, hit[0] if hit else None)
    return out


def _q(text: str) -> str:
    """A YAML scalar for any text: JSON's double-quoted string is valid YAML."""
    return json.dumps(text, ensure_ascii=False)


def _comment(lang: str, key: str, indent: int, **values: str) -> list[str]:
    pad = " " * indent
    return [f"{pad}# {line}".rstrip() for line in say(lang, key, **values).splitlines()]


def _found(lang: str, g: Guess, role: str, indent: int) -> list[str]:
    _text, path = g.entries[role]
    return _comment(lang, "found" if path else "todo_entry", indent, path=path or "")


def render(model: str, family: Family, g: Guess, lang: str) -> str:
    """The starter spec's text."""
    lines: list[str] = []
    lines += _comment(lang, "head", 0, model=model, family=family.name)
    for note in g.notes:
        lines += _comment(lang, "note", 0, note=note)
    lines += ["tipcgen: 1", f"model: {_q(model)}", f"layout: {family.name}", ""]
    lines += _comment(lang, "docs", 0)
    lines += ["# docs:", "#   algorithm: TODO", ""]
    lines += _comment(lang, "prepare", 0)
    lines += [
        "# prepare:",
        "#   lite_train_lite_infer:",
        "#     - {url: https://example.com/TODO_lite_data.tar, to: ./dataset/}",
        "#     - {extract: ./dataset/TODO_lite_data.tar, to: ./dataset/}",
        "",
        "suites:",
        "  normal:",
    ]
    lines += _comment(lang, "file", 4)
    lines += ["    file: train_infer_python.txt", "    python: python3"]
    lines += _comment(lang, "topology", 4)
    lines += ["    topology: [0, [0, 1]]", "    train:"]
    lines += _comment(lang, "keys", 6)
    lines += ["      " + line.replace("{model}", model) for line in family.train_lines]
    lines += ["      run: [norm_train]", "    trainers:", "      norm:"]
    if family.config_dirs:
        path = g.config
        lines += _comment(lang, "config" if path else "todo_config", 8, path=path or "")
    lines += _found(lang, g, "train", 8)
    lines.append(f"        train: {_q(g.entries['train'][0] or '')}")
    lines += _found(lang, g, "export", 8)
    lines.append(f"        export: {_q(g.entries['export'][0] or '')}")
    lines.append("    eval:")
    lines += _found(lang, g, "eval", 6)
    lines.append(f"      command: {_q(g.entries['eval'][0] or '')}")
    lines.append("    export:")
    lines += ["      " + line.replace("{model}", model) for line in family.export_lines]
    lines += _comment(lang, "whole_infer", 4)
    lines += ["    # whole_infer:", "    #   - {model: ./pretrain_models/TODO.pdparams, export: True}"]
    lines.append("    inference:")
    lines += _found(lang, g, "infer", 6)
    lines.append(f"      script: {_q(g.entries['infer'][0] or '')}")
    lines += ["      " + line.replace("{model}", model) for line in family.inference_lines]
    return "\n".join(lines) + "\n"


def default_out(repo: str, model: str) -> tuple[str, Optional[str]]:
    """(spec path, the repo's docs language or None): `<specs folder>/<model>.yml` of the repo's
    project (tipcgen.yml or test_tipc/), else test_tipc/specs/; never through a link leading out
    of the repo (the project refuses such a specs folder, as `build` does)."""
    from tipcgen.project import DEFAULT_SPECS, is_repo_root, load_project

    if is_repo_root(repo):
        project = load_project(repo)
        return os.path.join(project.specs_dir, f"{model}.yml"), project.lang if project.settings else None
    path = os.path.join(repo, *DEFAULT_SPECS.split("/"), f"{model}.yml")
    resolve_inside(os.path.dirname(path), repo)
    return path, None


def new_spec(
    model: str, family_name: str, repo: str, out: Optional[str], lang: Optional[str], force: bool
) -> tuple[str, Guess]:
    """Write the starter spec; (its path, what was guessed). Everything is checked before the one
    write: a bad name, an existing file (unless `force`), a spec that would not validate."""
    from tipcgen.check.spec import load_imported_text
    from tipcgen.fsio import write_text

    check_model(model)
    family = family_of(family_name)
    if not os.path.isdir(repo):
        raise UsageError(f"--repo {printable(repo)}: not a directory")
    path, repo_lang = (out, None) if out else default_out(repo, model)
    lang = lang or repo_lang or "zh"
    if lang not in ("zh", "en"):
        raise UsageError(f"--lang {printable(lang)!r}: zh or en")
    if os.path.lexists(path) and not force:
        raise UsageError(f"{printable(path)} exists; not overwritten (pass --force to replace it)")
    g = guess(repo, family, model)
    text = render(model, family, g, lang)
    load_imported_text(text, path, repo)  # a starter that would not validate is a bug, said before writing
    write_text(path, text)
    return path, g
