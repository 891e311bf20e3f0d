"""Variants of legacy configs for tests: a config with some `key:value` lines replaced."""

from __future__ import annotations

from pathlib import Path


def variant(tmp_path: Path, base: Path, name: str, append: str = "", **lines: str) -> Path:
    """`base` with the value of each line whose key is in `lines` replaced (e.g. gpu_list="0"),
    and `append` added at its end, written to tmp_path/<name>.txt."""
    out = []
    for line in base.read_text().split("\n"):
        key = line.split(":", 1)[0]
        if key in lines:
            line = f"{key}:{lines[key]}"
        out.append(line)
    path = tmp_path / f"{name}.txt"
    path.write_text("\n".join(out) + append)
    return path


def fixture_text(folder: str, name: str) -> str:
    """A fixture config's text (tests/fixtures/<folder>/<name>): the golden harness's toy configs,
    which a chain's own tests start from."""
    from update_golden import FIXTURES

    return (FIXTURES / folder / name).read_bytes().decode("utf-8")
