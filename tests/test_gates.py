"""The gates: every file tipcgen reads goes through tipcgen.inputs, every file it writes through
tipcgen.fsio. A raw `open`, `read_text`, `json.loads`, `os.walk`, `shutil.copy` ... anywhere else in
the package fails this test, so a new command inherits the gates' rules (no read through a link
leading out of its tree, no block on a FIFO, a size bound, bounded JSON; no write through a link,
into a FIFO or a device, atomic) instead of re-implementing them."""

from __future__ import annotations

import ast
import os
import stat
from pathlib import Path

import pytest

from helpers.cli import run_argv
from tipcgen.errors import SpecError

PKG = Path(__file__).resolve().parents[1] / "compiler" / "tipcgen"
# The gates themselves, and the one YAML parser (it parses text the read gate returned, with its
# own bounds on size, depth, nodes and aliases: spec/yamlpos.py).
GATES = {"inputs.py", "fsio.py", "spec/yamlpos.py"}

# name -> why it is forbidden outside the gates
RAW_CALLS = {
    "open": "a raw open (use tipcgen.inputs.read_* to read, tipcgen.fsio to write)",
    "io.open": "a raw open",
    "os.open": "a raw open",
    "os.fdopen": "a raw open",
    "os.walk": "a raw directory walk (use tipcgen.inputs.dirs_below/walk)",
    "json.load": "unbounded JSON (use tipcgen.inputs.read_json/parse_json)",
    "json.loads": "unbounded JSON (use tipcgen.inputs.read_json/parse_json)",
    "shutil.copy": "a copy that reads through links",
    "shutil.copy2": "a copy that reads through links",
    "shutil.copyfile": "a copy that reads through links",
    "shutil.copyfileobj": "a copy of a raw stream",
    "shutil.copytree": "a tree copy that reads through links (symlinks=True copies them as links)",
    "tarfile.open": "an archive opened by path (open it through the gate, pass fileobj=)",
    "zipfile.ZipFile": "an archive opened by path (open it through the gate, pass the file object)",
    "yaml.load": "YAML outside the spec loader",
    "yaml.safe_load": "YAML outside the spec loader",
    "yaml.full_load": "YAML outside the spec loader",
    "yaml.unsafe_load": "YAML outside the spec loader",
    "pickle.load": "pickle runs code",
    "pickle.loads": "pickle runs code",
    "marshal.loads": "marshal of untrusted bytes",
}
RAW_METHODS = {
    "read_text": "Path.read_text (use tipcgen.inputs)",
    "read_bytes": "Path.read_bytes (use tipcgen.inputs)",
    "write_text": "Path.write_text (use tipcgen.fsio)",
    "write_bytes": "Path.write_bytes (use tipcgen.fsio)",
    "open": "Path.open / X.open (use tipcgen.inputs / tipcgen.fsio)",
    "load": "a parser's load of a stream (parse text the gate read)",
}
# Methods of these names that are not file access: the receiver is named here (`zf.open(info)`
# reads a member of an archive the gate opened).
METHOD_RECEIVERS_OK = {("zf", "open"), ("tf", "extractfile")}


# Calls that return a file object opened by the read gate (an archive is read from one).
GATE_OPENERS = ("open_read", "_opened")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _is_parser(receiver: ast.AST) -> bool:
    """Whether `receiver.load(...)` is a parser's load: YAML(...).load, yaml/json/pickle/toml."""
    if isinstance(receiver, ast.Call):
        return _dotted(receiver.func).split(".")[-1] in ("YAML", "Loader", "Unpickler")
    return _dotted(receiver).split(".")[-1].lower() in ("yaml", "json", "pickle", "marshal", "toml", "tomllib")


def raw_access(source: str, filename: str = "<module>") -> list[tuple[int, str, str]]:
    """(line, call, why) of every raw file access in `source`."""
    found = []
    tree = ast.parse(source, filename)
    imported: dict[str, str] = {}  # `from json import loads` -> loads: json.loads
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        name = imported.get(name, name)
        if name in RAW_CALLS:
            if name == "shutil.copytree" and any(
                k.arg == "symlinks" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            ):
                continue  # links copied as links, never read through
            if name == "tarfile.open" and any(k.arg == "fileobj" for k in node.keywords):
                continue  # a stream the gate opened
            first = node.args[0] if node.args else None
            if name == "zipfile.ZipFile" and isinstance(first, ast.Call) and _dotted(first.func).endswith(GATE_OPENERS):
                continue
            found.append((node.lineno, name, RAW_CALLS[name]))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in RAW_METHODS:
            receiver = _dotted(node.func.value)
            if (receiver.split(".")[-1], node.func.attr) in METHOD_RECEIVERS_OK:
                continue
            if node.func.attr == "load" and not _is_parser(node.func.value):
                continue  # a method of ours named load (CheckCache.load), not a parser's
            found.append((node.lineno, f"{receiver or '?'}.{node.func.attr}", RAW_METHODS[node.func.attr]))
    return found


def _package_sources() -> dict[str, str]:
    return {
        str(p.relative_to(PKG)): p.read_text("utf-8")
        for p in sorted(PKG.rglob("*.py"))
        if str(p.relative_to(PKG)) not in GATES
    }


def test_no_raw_file_access_outside_the_gates():
    bad = []
    for rel, source in _package_sources().items():
        bad += [f"compiler/tipcgen/{rel}:{line}: {call}: {why}" for line, call, why in raw_access(source, rel)]
    assert not bad, "raw file access outside tipcgen.inputs / tipcgen.fsio:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "injected",
    [
        'open("/etc/passwd").read()',
        'Path("x").read_text()',
        "Path('x').write_bytes(b'')",
        "os.walk('.')",
        "json.loads(text)",
        "from json import loads as j\nj(text)",
        "shutil.copy('a', 'b')",
        "tarfile.open('a.tar')",
        "os.open('x', os.O_RDONLY)",
        "YAML(typ='rt').load(text)",
        "shutil.copytree('a', 'b')",
        "with open('x', 'w') as fh: fh.write('')",
    ],
)
def test_the_scan_fails_on_a_raw_access_injected_into_emit(injected):
    """The scan is not vacuous: a raw read or write added to emit/ (or anywhere) is found."""
    source = (PKG / "emit" / "files.py").read_text("utf-8")
    assert raw_access(source, "emit/files.py") == []
    found = raw_access(source + "\n\ndef _sneaky(text):\n    " + injected.replace("\n", "\n    ") + "\n", "x")
    assert found, f"{injected!r} was not caught"


def test_the_gates_exist_and_are_used():
    """Every package module that touches files does so through the gates (the scan above passes
    because they are used, not because nothing reads)."""
    users = [rel for rel, src in _package_sources().items() if "tipcgen.inputs" in src or "tipcgen.fsio" in src]
    assert len(users) >= 20, users


# --- the read gate's rules, as a user meets them -------------------------------------------------


def test_read_gate_refuses_fifo_without_blocking(tmp_path):
    from tipcgen.inputs import read_bytes, read_json

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for reader in (read_bytes, read_json):
        with pytest.raises(SpecError, match="named pipe"):
            reader(str(fifo), tree=str(tmp_path))


def test_read_gate_refuses_link_leading_out_and_devices(tmp_path):
    from tipcgen.inputs import read_bytes, read_owned

    (tmp_path / "out").symlink_to("/etc/passwd")
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(SpecError, match="outside"):
        read_bytes(str(tmp_path / "out"), tree=str(tmp_path))
    with pytest.raises(SpecError, match="outside"):
        read_bytes(str(tmp_path / "zero"), tree=str(tmp_path))
    with pytest.raises(SpecError, match="character device"):
        read_bytes("/dev/zero", tree="/dev")
    # a generated file is never a link, even one inside its tree
    (tmp_path / "real.sh").write_text("echo\n")
    (tmp_path / "inside.sh").symlink_to("real.sh")
    assert read_owned(str(tmp_path / "real.sh"), str(tmp_path)) == b"echo\n"
    with pytest.raises(SpecError, match="symbolic link"):
        read_owned(str(tmp_path / "inside.sh"), str(tmp_path))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"count": 1e400}', "does not fit"),
        ('{"count": ' + "9" * 30 + "}", "does not fit"),
        ("[" * 3000 + "]" * 3000, "nested"),
        ('{"a": NaN}', "finite"),
        ('{"a": 1, "a": 2}', "twice"),
        ("\xff", None),
        ("{", "not a JSON file"),
    ],
)
def test_json_gate_bounds(tmp_path, text, message):
    from tipcgen.inputs import read_json

    path = tmp_path / "x.json"
    path.write_bytes(text.encode("latin-1") if text == "\xff" else text.encode())
    with pytest.raises(SpecError) as err:
        read_json(str(path), tree=str(tmp_path))
    assert str(path) in str(err.value)
    if message:
        assert message in str(err.value)


def test_json_gate_types_name_the_field(tmp_path):
    from typing_extensions import TypedDict

    from tipcgen.inputs import read_json

    class Entry(TypedDict):
        rule: str
        count: int

    path = tmp_path / "b.json"
    path.write_text('{"entries": [{"rule": "TIPC001", "count": "5"}]}')
    with pytest.raises(SpecError, match=r"entries\[0\]\.count"):
        read_json(str(path), tree=str(tmp_path), schema=dict[str, list[Entry]])


# --- the write gate's rules ----------------------------------------------------------------------


def test_write_gate_refuses_link_fifo_device(tmp_path):
    from tipcgen.fsio import PathError, append_text, open_output, write_atomic

    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (tmp_path / "lnk").symlink_to(victim)
    os.mkfifo(tmp_path / "fifo")
    for target, kind in (
        (tmp_path / "lnk", "symbolic link"),
        (tmp_path / "fifo", "FIFO"),
        (Path("/dev/null"), "device"),
    ):
        for write in (
            lambda p: write_atomic(str(p), b"x"),
            lambda p: append_text(str(p), "x"),
            lambda p: open_output(str(p)).close(),
        ):
            with pytest.raises(PathError, match=kind) as err:
                write(target)
            assert str(target) in str(err.value)
    assert victim.read_text() == "keep\n"
    assert stat.S_ISLNK(os.lstat(tmp_path / "lnk").st_mode)


def test_a_scratch_file_is_only_ever_created_never_written_through_or_over(tmp_path):
    """write_new (the oracles' staging of a run): a new file with its mode whatever the umask; a
    link, a FIFO or a file already at the path is refused naming it, and nothing is written there."""
    from tipcgen.fsio import PathError, write_new

    old = os.umask(0o077)
    try:
        write_new(str(tmp_path / "rec"), b"#!/bin/sh\n", 0o755)
    finally:
        os.umask(old)
    assert (tmp_path / "rec").read_bytes() == b"#!/bin/sh\n" and stat.S_IMODE(
        (tmp_path / "rec").stat().st_mode
    ) == 0o755
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    (tmp_path / "lnk").symlink_to(victim)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(tmp_path / "fifo")
    for name in ("lnk", "dangling", "fifo", "victim"):
        with pytest.raises(PathError, match="File exists") as err:
            write_new(str(tmp_path / name), b"x")
        assert str(tmp_path / name) in str(err.value)
    assert victim.read_text() == "keep\n" and not (tmp_path / "nowhere").exists()


def test_write_gate_failure_names_the_path_on_a_full_disk():
    """/dev/full is a device: refused by name before anything is written."""
    from tipcgen.fsio import PathError, append_text

    with pytest.raises(PathError, match="/dev/full"):
        append_text("/dev/full", "x")


def test_cli_on_fifo_input_does_not_hang(tmp_path):
    """The gate as the CLI meets it: a FIFO given as a lint baseline is refused at once."""
    os.mkfifo(tmp_path / "base.json")
    spec = Path(__file__).resolve().parents[1] / "specs" / "tiny_rec.yml"
    proc = run_argv(
        ["lint", str(spec), "--baseline", str(tmp_path / "base.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "named pipe" in proc.stderr and "Traceback" not in proc.stderr
