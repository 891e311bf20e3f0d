"""Chains as tables: a chain whose script runs a fixed list of commands (no matrix loop, no
service, no edit) is a `ChainTable`, and this one interpreter turns it into both the Plan
(`plan`) and the generated bash (`bash`, printed by templates/runner_table.sh.j2 after
runner_lib). A new chain of that shape is a table entry, not a runner and a template.

A command is words: `Lit` (text as it stands), `Val` (a role's value) and `Param` (upstream's
func_set_params of a role's key and a role's value: `key=value`, or a blank when either is null).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Union

from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.script.shellwords import set_param

if TYPE_CHECKING:
    from tipcgen.dialects.base import Dialect
    from tipcgen.lower.configview import ConfigView
    from tipcgen.plan.builder import Builder, OcrScript


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
    note: str = ""  # what the generated script's comment says of it


@dataclass(frozen=True)
class ChainTable:
    """A chain script as data; a registered `Runner` (plan/runner.py) like a runner module."""

    script: str  # whose script it follows, for the generated comment
    mode: str  # its one mode (the script reads its config argument only)
    log_dir: str  # {root} (the repo root: `$(pwd)`, else `.`), {model_name}, {mode}
    status_format: str
    commands: tuple  # of Command
    deviations: tuple = ()  # its own; COMMON_DEVIATIONS come first

    TEMPLATE = "runner_table.sh.j2"
    GPU_ENTRIES_BY_LENGTH = False  # no gpu_list in these chains
    CLASSIC: Optional[OcrScript] = None

    @property
    def STATUS_FORMAT(self) -> str:
        return self.status_format

    @property
    def MODES(self) -> tuple:
        return (self.mode,)

    @property
    def DEVIATIONS(self) -> tuple[Deviation, ...]:
        return (*COMMON_DEVIATIONS, *self.deviations)

    @property
    def TEMPLATE_VARS(self) -> dict:
        return {"table": self}

    # -- the Plan

    def plan(self, b: Builder) -> None:
        v = b.v
        value = v.value_to_colon if v.layout.dialect.values_to_colon else v.value
        b.log_dir = self.log_dir.format(root=b.root or ".", model_name=value("model_name"), mode=b.mode)
        # one file however the directory is spelt (PaddleSeg's ends in a `/`: its logs' names say `//`)
        b.status_log = f"{b.log_dir.rstrip('/')}/{v.layout.dialect.status_log}"
        for c in self.commands:
            if c.unless_null is not None and value(c.unless_null) == "null":
                continue
            cmd = " ".join(_word(v, value, w) for w in c.words)
            log = f"{b.log_dir}/{c.log}"
            b.add(c.kind, cmd, log, shown=c.shown.format(cmd=cmd, log=log), status_path=log, cwd=c.cwd)

    # -- the bash

    def log_path_expr(self) -> str:
        return self.log_dir.format(root="${PWD}", model_name="${model_name%%:*}", mode="${MODE}")

    def bash(self, dialect: Dialect) -> str:
        """What the generated script runs after runner_lib: the same commands, in bash."""
        values = {role: var for var, kind, role in dialect.reads if kind == "value"}
        keys = {role: var for var, kind, role in dialect.reads if kind == "key"}
        params = [w for c in self.commands for w in c.words if isinstance(w, Param)]
        names = [f'{p.bash_var()}=""' for p in params]
        out = [" ".join(names[i : i + 5]) for i in range(0, len(names), 5)]
        for n, c in enumerate(self.commands, 1):
            note = c.note.splitlines() or [c.kind]
            out += ["", f"# {n}. {note[0]}", *(f"# {line}" for line in note[1:])]
            indent = ""
            lines = [f'{c.log_var}="${{LOG_PATH}}/{c.log}"'] if c.unless_null else []
            for p in (w for w in c.words if isinstance(w, Param)):
                value = values[p.value or p.key]
                lines.append(f'tipc_set_param {p.bash_var()} "${keys[p.key]}" "${value}"')
            if not c.unless_null:
                lines.append(f'{c.log_var}="${{LOG_PATH}}/{c.log}"')
            words = " ".join(_bash_word(values, w) for w in c.words)
            lines.append(f'cmd="{words}"')
            shown = c.shown.format(cmd="${cmd}", log=f"${{{c.log_var}}}")
            cwd = f" --cwd {c.cwd}" if c.cwd else ""
            tail = f'--status-path "${c.log_var}" "$cmd" "${c.log_var}"'
            run = f'run_step --kind {c.kind}{cwd} --shown "{shown}"'
            if c.unless_null:
                out.append(f"if [[ ${values[c.unless_null]} != null ]]; then")
                indent = "    "
            lines += [f"{run} {tail}"] if len(indent + run + tail) < 120 else [f"{run} \\", f"    {tail}"]
            out += [indent + line for line in lines]
            if c.unless_null:
                out.append("fi")
        return "\n".join(out) + "\n"


def _word(v: ConfigView, value, w: Word) -> str:
    if isinstance(w, Lit):
        return w.text
    if isinstance(w, Val):
        return value(w.role)
    return set_param(v.key(w.key), value(w.value or w.key))


def _bash_word(values: dict, w: Word) -> str:
    if isinstance(w, Lit):
        if any(c in w.text for c in '"$`\\'):
            raise AssertionError(f"a table's literal word must be plain text: {w.text!r}")
        return w.text
    if isinstance(w, Val):
        return f"${{{values[w.role]}}}"
    return f"${{{w.bash_var()}}}"
