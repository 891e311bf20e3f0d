"""The one interpreter of chain tables (dialects/steps.py): a `ChainTable` made a `Runner`
(plan/runner.py) whose `plan` adds its commands to the Plan and whose `bash` is what
templates/runner_table.sh.j2 prints after runner_lib, so the two cannot drift apart.
plan/registry.py registers one per chain whose Dialect carries a table."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from tipcgen.dialects.steps import ChainTable, Lit, Param, Val, Word
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.script.shellwords import set_param

if TYPE_CHECKING:
    from tipcgen.dialects.base import Dialect
    from tipcgen.lower.configview import ConfigView
    from tipcgen.plan.builder import Builder, OcrScript


@dataclass(frozen=True)
class TableRunner:
    table: ChainTable

    TEMPLATE = "runner_table.sh.j2"
    GPU_ENTRIES_BY_LENGTH = False  # no gpu_list in these chains
    CLASSIC: Optional[OcrScript] = None

    @property
    def STATUS_FORMAT(self) -> str:
        return self.table.status_format

    @property
    def MODES(self) -> tuple:
        return (self.table.mode,)

    @property
    def DEVIATIONS(self) -> tuple[Deviation, ...]:
        return (*COMMON_DEVIATIONS, *self.table.deviations)

    @property
    def ORACLE_LOG_DIRS(self) -> tuple:
        """Where the oracle looks for the logs the repo's script writes: the log directory's part
        before the model's name (`./log/{model_name}/{mode}` -> log)."""
        top = self.table.log_dir.split("{model_name}", 1)[0]
        return (top.removeprefix("{root}/").removeprefix("./").strip("/"),)

    @property
    def TEMPLATE_VARS(self) -> dict:
        return {"table": self}

    # -- the Plan

    def plan(self, b: Builder) -> None:
        v = b.v
        value = v.value_to_colon if v.layout.dialect.values_to_colon else v.value
        b.log_dir = self.table.log_dir.format(root=b.root or ".", model_name=value("model_name"), mode=b.mode)
        # one file however the directory is spelt (PaddleSeg's ends in a `/`: its logs' names say `//`)
        b.status_log = f"{b.log_dir.rstrip('/')}/{v.layout.dialect.status_log}"
        for c in self.table.commands:
            if c.unless_null is not None and value(c.unless_null) == "null":
                continue
            cmd = " ".join(_word(v, value, w) for w in c.words)
            log = f"{b.log_dir}/{c.log}"
            shown = c.shown.format(cmd=cmd, log=log)
            b.add(c.kind, cmd, log, shown=shown, status_path=log if c.names_log else None, cwd=c.cwd)

    # -- the bash

    def log_path_expr(self) -> str:
        return self.table.log_dir.format(root="${PWD}", model_name="${model_name%%:*}", mode="${MODE}")

    def bash(self, dialect: Dialect) -> str:
        """What the generated script runs after runner_lib: the same commands, in bash."""
        values = {role: var for var, kind, role in dialect.reads if kind == "value"}
        keys = {role: var for var, kind, role in dialect.reads if kind == "key"}
        params = [w for c in self.table.commands for w in c.words if isinstance(w, Param)]
        names = [f'{p.bash_var()}=""' for p in params]
        out = [" ".join(names[i : i + 5]) for i in range(0, len(names), 5)]
        for n, c in enumerate(self.table.commands, 1):
            note = c.note.splitlines() or [c.kind]
            out += ["", f"# {n}. {note[0]}", *(f"# {line}" for line in note[1:])]
            indent = ""
            # a guarded command names its log first, an unguarded one after its parameters (the
            # order the hand-written paddle2onnx template had: its bytes stay as they were)
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
            tail = f'--status-path "${c.log_var}" "$cmd" "${c.log_var}"' if c.names_log else f'"$cmd" "${c.log_var}"'
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
