"""A chain's steps as data (issue 33's "chains as tables"): a chain script that runs a fixed list of
commands is a `ChainTable` beside its line table, in its dialects/chains/ module; one interpreter,
plan/runners/table.py, turns it into the Plan and into the generated bash.

A command is words: `Lit` (text as it stands), `Val` (a role's value) and `Param` (upstream's
func_set_params of a role's key and a role's value: `key=value`, or a blank when either is null).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union


@dataclass(frozen=True)
class Deviation:
    """A deliberate difference between a runner and its repo's own script (docs/runners.md's table lists
    them all, with the number of corpus configs each touches).

    `categories` are regular expressions over the upstream oracle's difference categories
    (tests/helpers/upstream.py) that this deviation explains: a run of the oracle whose every
    difference matches a deviation of its runner counts as faithful."""

    name: str
    what: str  # what we do
    why: str  # why we differ
    categories: tuple = ()


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Val:
    role: str


@dataclass(frozen=True)
class Param:
    key: str  # the role whose key is set
    var: str = ""  # the bash variable holding it (default: set_<last part of the role>)
    value: str = ""  # the role whose value is set (default: `key`'s own)

    def bash_var(self) -> str:
        return self.var or f"set_{self.key.rsplit('.', 1)[-1]}"


Word = Union[Lit, Val, Param]


@dataclass(frozen=True)
class Command:
    kind: str  # the step's kind (export, infer, ...)
    words: tuple  # of Word
    log: str  # its log's file name in the log directory
    log_var: str  # the bash variable naming that log
    shown: str = "{cmd} > {log} 2>&1"  # the status line's command
    cwd: Optional[str] = None  # run from this directory (the status line says how, in `shown`)
    unless_null: Optional[str] = None  # a role: this command is left out when its value is `null`
    names_log: bool = True  # its status line names its log (a status_check given a 5th argument)
    note: str = ""  # what the generated script's comment says of it


@dataclass(frozen=True)
class ChainTable:
    """A chain script as data: its one mode, where it logs, its status line, its commands."""

    mode: str  # its one mode (the script reads its config argument only)
    log_dir: str  # {root} (the repo root: `$(pwd)`, else `.`), {model_name}, {mode}
    status_format: str
    commands: tuple  # of Command
    deviations: tuple = ()  # its own (Deviation); every runner's common ones come first
