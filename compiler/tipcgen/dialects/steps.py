"""A chain's steps as data (issue 33's "chains as tables"): a chain script that runs a fixed list of
commands is a `ChainTable` beside its line table, in its dialects/chains/ module; one interpreter,
plan/runners/table.py, turns it into the Plan and into the generated bash.

A command is words: `Lit` (text as it stands), `Val` (a role's value), `Param` (upstream's
func_set_params of a role's key and a value: `key=value`, or a blank when either is null; the value
a role's, or several words joined, `<dir>/<file>`) and `Case` (the value of the role a case table
picks by a loop's item). A `Loop` runs its commands once per item of a role's `|` list.
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
    # the role whose value is set (default: `key`'s own), or words (Lit, Val) joined without a blank
    # into one value (`(Val("p2o.save_dir"), Lit("/"), Val("model_name"))`)
    value: Union[str, tuple] = ""

    def bash_var(self) -> str:
        return self.var or f"set_{self.key.rsplit('.', 1)[-1]}"


@dataclass(frozen=True)
class Case:
    """The value of the role `choices` pairs with a loop's item (upstream's `case ${on} in item)
    var=${role} ;; ... *) echo OTHERWISE; exit 1 ;; esac`). An item it has no case for is refused
    before anything runs, by the Plan and by the generated script alike (upstream runs the items
    before it, then prints `otherwise` and exits 1: name that a Deviation of the table)."""

    on: str  # the loop's variable (Loop.var)
    var: str  # the bash variable the case sets
    choices: tuple  # of (item, role)
    otherwise: str  # what upstream prints for any other item

    def role(self, item: str) -> Optional[str]:
        return dict(self.choices).get(item)


Word = Union[Lit, Val, Param, Case]


@dataclass(frozen=True)
class Command:
    kind: str  # the step's kind (export, infer, ...)
    words: tuple  # of Word
    log: str  # its log's file name in the log directory
    log_var: str  # the bash variable naming that log
    shown: str = "{cmd} > {log} 2>&1"  # the status line's command
    cwd: Optional[str] = None  # run from this directory (the status line says how, in `shown`)
    unless_null: Optional[str] = None  # a role, or a Loop's variable: left out when its value is `null`
    # ... or empty too: upstream tests it unquoted (`[ ${x} != "null" ]`), a test an empty value fails
    null_or_empty: bool = False
    names_log: bool = True  # its status line names its log (a status_check given a 5th argument)
    note: str = ""  # what the generated script's comment says of it


@dataclass(frozen=True)
class Loop:
    """Commands run once per item of a role's `|`-separated list (upstream's `IFS="|"; for var in
    ${list}`: an empty list runs nothing), the item in the bash variable `var`."""

    role: str
    var: str  # named as upstream's loop variable; Case and Command.unless_null may name it
    commands: tuple  # of Command
    note: str = ""  # what the generated script's comment says of it


@dataclass(frozen=True)
class ChainTable:
    """A chain script as data: its one mode, where it logs, its status line, its commands."""

    mode: str  # its one mode (the script reads its config argument only)
    log_dir: str  # {root} (the repo root: `$(pwd)`, else `.`), {model_name}, {mode}
    status_format: str
    commands: tuple  # of Command, Loop
    deviations: tuple = ()  # its own (Deviation); every runner's common ones come first
