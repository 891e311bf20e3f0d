"""The shell examples of README.md and docs/: every fenced ```bash block, with the marker the line
before it may carry, parsed into the commands a reader would type.

Marker (an HTML comment on the line right before the fence; nothing shows on the site):

    <!-- docs-test: cwd=checkout exit=0,1 contains="up to date" -->
    <!-- docs-test: not-run: needs a Slurm cluster -->

- `cwd`: the scratch directory the block runs in (`checkout`: a copy of this repo's specs/,
  examples/ and generated/; `repo`: the bundled example model repo, examples/tiny_rec with its
  generated test_tipc/, as a maintainer's checkout before a switch; `model`: the same repo with no
  test_tipc/, a model that has no suite yet). Default `checkout`.
- `exit`: each command's exit code, in order (default: all 0); `contains`: text the block's
  output holds (for output that is stable).
- `needs=COMMAND`: the block shows a `tipcgen COMMAND` that another branch is adding; while the
  CLI lacks it the block is counted as waiting and not run, and the day the command lands it runs
  like any other (nothing to edit for it to be tested).
- `not-run: REASON`: the block is not run here (a GPU, nodes, a cluster); it is still checked to
  parse (`bash -n`) and to name only commands and options the CLI has.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"^<!--\s*docs-test:\s*(.*?)\s*-->$")
HEREDOC = re.compile(r"<<-?\s*'?\"?(\w+)'?\"?")


@dataclass
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    text: str
    commands: list = field(default_factory=list)
    cwd: str = "checkout"
    exits: list = field(default_factory=list)
    contains: list = field(default_factory=list)
    not_run: str = ""
    needs: list = field(default_factory=list)

    @property
    def where(self) -> str:
        shown = self.path.relative_to(REPO) if self.path.is_relative_to(REPO) else self.path
        return f"{shown}:{self.line}"


def doc_files() -> list[Path]:
    # The generated reference pages hold no examples; they are compared with the code elsewhere.
    pages = sorted(p for p in (REPO / "docs").rglob("*.md") if "reference" not in p.relative_to(REPO / "docs").parts)
    return [REPO / "README.md", *pages]


def split_commands(text: str) -> list[str]:
    """The block's commands as a reader types them: `\\` continuations joined, a heredoc kept with
    its command, comments and blank lines left out."""
    commands: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cmd = [line]
        while cmd[-1].endswith("\\") and i < len(lines):
            cmd.append(lines[i])
            i += 1
        here = HEREDOC.search(cmd[-1])
        if here:
            while i < len(lines):
                cmd.append(lines[i])
                i += 1
                if cmd[-1].strip() == here.group(1):
                    break
        commands.append("\n".join(cmd))
    return commands


def _parse_marker(block: Block, marker: str) -> None:
    if marker.startswith("not-run:"):
        block.not_run = marker[len("not-run:") :].strip()
        return
    for word in shlex.split(marker):
        key, _, value = word.partition("=")
        if key == "cwd":
            block.cwd = value
        elif key == "exit":
            block.exits = [int(v) for v in value.split(",")]
        elif key == "contains":
            block.contains.append(value)
        elif key == "needs":
            block.needs.append(value)
        else:
            raise ValueError(f"{block.where}: unknown docs-test key {key!r}")


def blocks(path: Path) -> list[Block]:
    found = []
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
            start = i
            j = i + 1
            while lines[j].strip() != "```":
                j += 1
            block = Block(path, start + 1, "\n".join(lines[start + 1 : j]))
            block.commands = split_commands(block.text)
            marker = MARKER.match(lines[start - 1].strip()) if start else None
            if marker:
                _parse_marker(block, marker.group(1))
            if not block.exits:
                block.exits = [0] * len(block.commands)
            found.append(block)
            i = j
        i += 1
    return found


def all_blocks() -> list[Block]:
    return [b for path in doc_files() for b in blocks(path)]


def script(block: Block, rc_file: Path) -> str:
    """One bash script running the block's commands in order in one shell (a `cd` carries on, as
    when a reader types them), writing each command's exit code to rc_file."""
    out = ["__rcs=()"]
    for command in block.commands:
        out += [command, '__rcs+=("$?")']
    out.append(f"printf '%s\\n' \"${{__rcs[@]}}\" > {shlex.quote(str(rc_file))}")
    return "\n".join(out) + "\n"
