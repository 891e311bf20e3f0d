"""The one interpreter of chain tables (dialects/steps.py): a `ChainTable` made a `Runner`
(plan/runner.py) whose `plan` adds its commands to the Plan and whose `bash` is what
templates/runner_table.sh.j2 prints after runner_lib, so the two cannot drift apart.
plan/registry.py registers one per chain whose Dialect carries a table."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Union

from tipcgen.dialects.steps import (
    POSITIVE,
    Case,
    ChainTable,
    Command,
    Config,
    Export,
    First,
    Item,
    Join,
    Key,
    Last,
    Lit,
    Loop,
    Param,
    PathFirst,
    Pick,
    Prefixed,
    Sed,
    Service,
    Skip,
    Sub,
    Unset,
    Val,
    When,
    Word,
)
from tipcgen.errors import UsageError
from tipcgen.plan.refusals import MAX_MATRIX
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.script.shellwords import ifs_split, sed_quoted, set_param
from tipcgen.spec.policy import WORD_BASH_RE, word_problem

if TYPE_CHECKING:
    from tipcgen.dialects.base import Dialect
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
    def STATUS_DIR(self) -> str:
        """Its log directory as the script's header names it (`<model_name>`, `<MODE>` for theirs)."""
        where = self.table.log_dir.format(root=".", model_name="<model_name>", mode="<MODE>")
        return where.removeprefix("./").rstrip("/")

    @property
    def ORACLE_LOG_DIRS(self) -> tuple:
        """Where the oracle looks for the logs the repo's script writes: the log directory's part
        before the model's name (`./log/{model_name}/{mode}` -> log)."""
        top = self.table.log_dir.split("{model_name}", 1)[0]
        return (top.removeprefix("{root}/").removeprefix("./").strip("/"),)

    @property
    def seds(self) -> bool:
        """Whether its commands hold a Sed word (the script then defines tipc_sed_value: edit_lib)."""
        return any(_seds(c.words) for c in _commands(self.table.commands))

    @property
    def TEMPLATE_VARS(self) -> dict:
        return {"table": self}

    @property
    def services(self) -> bool:
        """Whether its script needs runner_lib's `services` part: it starts background services, or
        runs quiet commands (run_step --quiet)."""
        return self.table.services or any(c.quiet for c in _commands(self.table.commands))

    # -- the Plan

    def plan(self, b: Builder) -> None:
        v = b.v
        value = v.value_to_colon if v.layout.dialect.values_to_colon else v.value
        b.log_dir = self.table.log_dir.format(root=b.root or ".", model_name=value("model_name"), mode=b.mode)
        # one file however the directory is spelt (PaddleSeg's ends in a `/`: its logs' names say `//`)
        b.status_log = f"{b.log_dir.rstrip('/')}/{v.layout.dialect.status_log}"
        for role, key in self.table.requires:
            if v.key(role) != key:
                raise UsageError(_not_mine(b.source, v.layout.dialect.script, role, key, v.key(role)))
        for role in self.table.remote:
            problem = _remote_problem(value(role), role in v.layout.dialect.command_roles)
            if problem:
                raise UsageError(f"{b.source}: {v.key(role)}:{value(role)}: {problem}: {_REMOTE}")
        if self.table.gpuid_env and (b.gpuid or self.table.gpuid_default):
            b.cvd = b.gpuid or self.table.gpuid_default  # upstream exports it before its steps
        _plan(b, value, self.table.commands, {})

    # -- the bash

    def log_path_expr(self, dialect: Optional[Dialect] = None) -> str:
        name = "${model_name%%:*}" if dialect is None or dialect.values_to_colon else "${model_name}"
        return self.table.log_dir.format(root="${PWD}", model_name=name, mode="${MODE}")

    def before_logs(self, dialect: Dialect) -> str:
        """What the generated script checks before it writes anything: the keys its table requires
        (another script's config lacks them) and the items of a loop that a Case would meet without
        a choice for them (the Plan refuses those configs: plan, _word)."""
        values, keys = _names(dialect, "value"), _names(dialect, "key")
        out = []
        for role, key in self.table.requires:
            _plain_words((key,), "a required key")
            message = _not_mine("${FILENAME}", dialect.script, role, key, f"${{{keys[role]}}}")
            out += [
                "# A config of another script (its keys differ) is refused, as the Plan does.",
                f"if [[ ${{{keys[role]}}} != {key} ]]; then",
                f'    echo "tipc: {message}" >&2',
                "    exit 2",
                "fi",
            ]
        if self.table.remote:
            out += _remote_bash(self.table.remote, dialect, values)
        if dialect.matrix_roles and not dialect.log_name_roles:  # runner_lib checks them with the log names
            lists = " ".join(f'"${values[role]}"' for role in dialect.matrix_roles)
            out += [
                "# Refuse lists too long to run, as the Plan does (plan/refusals.py: check_view).",
                f'tipc_check_matrix "$FILENAME" {MAX_MATRIX} {lists} || exit 2',
            ]
        read = {e.var for e in _walk(self.table.commands) if isinstance(e, When)}
        read |= {w.var for c in _commands(self.table.commands) for w in _items(c.words)}  # a Pick's word as a word
        for pick in (e for e in self.table.commands if isinstance(e, Pick)):
            out += _pick(pick, dialect, values, pick.var in read)
        loops = {loop.var: loop for loop in _loops(self.table.commands)}
        for inner in loops.values():
            for command, case in ((c, w) for c in _own(inner.commands) for w in c.words
                                  if isinstance(w, Case)):  # fmt: skip
                loop = loops[case.on]  # the loop whose item it picks by (the command's, or one around it)
                passed = [*(item for item, _role in case.choices), *_skipped(command, loop.var)]
                message = _undefined("${FILENAME}", case, f"${{{loop.var}}}")
                message = message.replace("`", "\\`").replace('"', '\\"')  # in a "..." string
                items = " | ".join(item or '""' for item in passed)
                out += [
                    f"# An {loop.var} with no case in the {case.var} table: upstream prints {case.otherwise!r}",
                    "# and exits 1 when it gets there; refused before anything runs, as the Plan refuses it.",
                    f'declare -a {loop.var}_items=() && tipc_split {loop.var}_items "|" "${values[loop.role]}"',
                    f'for {loop.var} in "${{{loop.var}_items[@]}}"; do',
                    f"    case ${{{loop.var}}} in",
                    f"    {items}) ;;",
                    "    *)",
                    f'        echo "tipc: {message}" >&2',
                    "        exit 2",
                    "        ;;",
                    "    esac",
                    "done",
                ]
        return "".join(f"{line}\n" for line in out)

    def bash(self, dialect: Dialect) -> str:
        """What the generated script runs after runner_lib: the same commands, in bash."""
        values, keys = _names(dialect, "value"), _names(dialect, "key")
        params = [w for c in _commands(self.table.commands) for w in c.words if isinstance(w, Param)]
        names = [f'{var}=""' for var in dict.fromkeys(p.bash_var() for p in params)]  # each once
        out = [" ".join(names[i : i + 5]) for i in range(0, len(names), 5)]
        if self.table.gpuid_env:
            if self.table.gpuid_default:
                default = self.table.gpuid_default
                if not re.fullmatch(r"[\w,]+", default):
                    raise AssertionError(f"a table's gpuid_default must be a device list: {default!r}")
                out += ["", f"# Upstream exports CUDA_VISIBLE_DEVICES=GPUID (default {default}) for every command.",
                        f'export CUDA_VISIBLE_DEVICES="${{GPUID:-{default}}}"']  # fmt: skip
            else:
                out += [
                    "",
                    "# GPUID, when given, is every step's CUDA_VISIBLE_DEVICES (upstream exports it first).",
                    "if [[ -n ${GPUID} ]]; then",
                    '    export CUDA_VISIBLE_DEVICES="$GPUID"',
                    "fi",
                ]
        firsts = {w.var: w for c in _commands(self.table.commands) for w in c.words if isinstance(w, First)}
        for var, first in firsts.items():
            out += ["", f"# The first item of {values[first.role]} (upstream's `{var}=${{list[0]}}` of its `|` list).",
                    f'declare -a {var}_items=() && tipc_split {var}_items "|" "${values[first.role]}"',
                    f"{var}=${{{var}_items[0]:-}}"]  # fmt: skip
        for var, last in _lasts(self.table.commands).items():
            out += ["", f"# The last part of {values[last.role]}'s path (upstream's `{var}=${{parts[-1]}}`).",
                    f'{var}="${{{values[last.role]}%/}}"', f'{var}="${{{var}##*/}}"']  # fmt: skip
        for var, pre in _prefixed(self.table.commands).items():
            words = " ".join(f"${{{values[pre.prefix]}}}${{{var}_words[{i}]:-}}" for i in range(pre.count))
            said = f"# The first {pre.count} words of {values[pre.role]}, each after {values[pre.prefix]} (awk)."
            out += ["", said,
                    f'declare -a {var}_words=() && read -r -a {var}_words <<<"${{{values[pre.role]}//|/ }}"',
                    f'{var}="{words}"']  # fmt: skip
        out += _entries(self.table.commands, values, keys, "", [0])
        return "\n".join(out) + "\n"


# Why a table's `remote` value is refused (after `<config>: <line>: <problem>: `).
_REMOTE = (
    "its value goes into the device's shell line (`adb shell '...'`), where only ASCII letters, digits and "
    "`._+/=,:@%-` pass as data"
)


def _remote_problem(value: str, command: bool) -> Optional[str]:
    """Why a `remote` role's value cannot reach a device's shell line as data (None: it can): each item
    of its `|` list (each word of a command role's value) one word by the spec's rule."""
    items = re.split(r"[ |]+", value.strip(" |")) if command else value.split("|")
    return next((p for p in (word_problem(item, command) for item in items) if p), None)


def _remote_bash(roles: tuple, dialect: Dialect, values: dict) -> list:
    """The generated script's refusal of a `remote` role's value (as _remote_problem)."""
    out = [
        "# These values reach the device's shell line: each item (of a `|` list; a word of a command, which",
        "# may be an option) must be one word of the spec's characters, as the Plan refuses by the same rule.",
        f"tipc_word_re='{WORD_BASH_RE}'",
        "declare -a tipc_items=()",
    ]
    said = _REMOTE.replace("`", "\\`")  # in a "..." string
    quoted = "'${tipc_item}'"
    for role in roles:
        var = values[role]
        command = role in dialect.command_roles
        split = f'read -r -a tipc_items <<<"${{{var}//|/ }}"' if command else f'tipc_split tipc_items "|" "${var}"'
        option = "" if command else " || $tipc_item == -*"
        out += [
            split,
            'for tipc_item in "${tipc_items[@]}"; do',
            f"    if [[ ! $tipc_item =~ $tipc_word_re{option} ]]; then",
            f'        echo "tipc: ${{FILENAME}}: {var} holds {quoted}: {said}" >&2',
            "        exit 2",
            "    fi",
            "done",
        ]
    return out


def _prefixed(entries: tuple) -> dict:
    """var -> Prefixed, for every Prefixed among the commands' words (in Joins too), each once."""
    out: dict = {}
    for c in _commands(entries):
        for w in c.words:
            for part in w.parts if isinstance(w, Join) else (w,):
                if isinstance(part, Prefixed):
                    out[part.var] = part
    return out


def _names(dialect: Dialect, kind: str) -> dict:
    """role -> the bash variable holding its `kind` (key or value), named as upstream's."""
    return {role: var for var, k, role in dialect.reads if k == kind}


def _plan(b: Builder, value, entries: tuple, env: dict) -> None:
    """Add `entries` (Command, Loop, When, Skip, Service) to the Plan; `env`: each enclosing loop's
    variable -> item (and each branch's variable -> the word it gave that item, each paired variable
    -> its item, each part's -> that part)."""
    for c in entries:
        if isinstance(c, (Export, Unset, PathFirst)):
            _plan_env(b, c)
            continue
        if isinstance(c, Pick):
            got = value(c.role)
            word = c.word(got)
            if word is None:
                raise UsageError(f"{b.source}: {c.role} `{got}` {c.refusal}: refusing this config")
            env[c.var] = word  # for the Whens after it
            continue
        if isinstance(c, Skip):
            if all(Skip.matches(env[var], word) == equal for var, word, equal in c.tests):
                return  # upstream's `continue`: the rest of this item's body
            continue
        if isinstance(c, When):
            if env[c.var] in c.items:
                _plan(b, value, c.commands, env)
            continue
        if isinstance(c, Loop):
            _plan_loop(b, value, c, env)
        elif isinstance(c, Service):
            _plan_service(b, value, c, env)
        else:
            _add(b, value, env, c)


def _plan_env(b: Builder, c) -> None:
    """The script's environment: CUDA_VISIBLE_DEVICES is the steps' (an Export of it, an Unset of it);
    any other variable (Unset's, PathFirst's) is left out of the Plan."""
    if isinstance(c, Export):
        if c.name != "CUDA_VISIBLE_DEVICES":
            raise AssertionError(f"a table exports CUDA_VISIBLE_DEVICES only, not {c.name}")
        b.cvd = c.value
    elif isinstance(c, Unset) and "CUDA_VISIBLE_DEVICES" in c.names:
        b.cvd = None


def _plan_service(b: Builder, value, c: Service, env: dict) -> None:
    """A Service's start, its clients (a Loop of them too), then its stop (see _plan)."""
    _add(b, value, env, c.start, service="start", warmup=c.warmup)
    for client in c.clients:
        if isinstance(client, Loop):
            _plan_loop(b, value, client, env)
        else:
            _add(b, value, env, client)
    # stopped by our own process handling: a step with no command (the script's tipc_service_end)
    b.add("stop", "", None, service="stop", quiet=True)


def _plan_loop(b: Builder, value, c: Loop, env: dict) -> None:
    """A Loop's entries once per item of its role's list (see _plan)."""
    pairs = [(var, ifs_split(value(role), "|")) for role, var in c.pairs()]
    for n, item in enumerate(ifs_split(value(c.role), "|")):
        word = c.branch.word(item) if c.branch is not None else None
        if c.branch is not None and word is None:
            continue  # upstream prints the branch's `otherwise` and goes on
        more = {c.branch.var: word} if c.branch is not None and word is not None else {}
        for var, items in pairs:
            more[var] = items[n] if n < len(items) else ""
        if c.index:  # upstream's Count
            more[c.index] = str(n)
        if c.parts:  # func_parser_key / func_parser_value of the item
            more.update({c.parts[0]: item.split(":", 1)[0], c.parts[1]: item.split(":", 1)[-1]})
        if c.cut:  # upstream's `${item%word*}`
            more[c.cut[0]] = item[: item.rfind(c.cut[1])] if c.cut[1] in item else item
        _plan(b, value, c.commands, {**env, c.var: item, **more})


def _add(b: Builder, value, env: dict, c: Command, **service) -> None:
    """Add one command to the Plan (unless its guard leaves it out); `service`: Builder.add's."""
    if c.unless_null is not None:
        got = env[c.unless_null] if c.unless_null in env else value(c.unless_null)
        if got == "null" or (c.null_or_empty and got == ""):
            return
    cmd = " ".join(_word(b, value, env, w) for w in c.words)
    # a log's `{var}`: a loop's (or branch's, part's) variable, or a role whose bash variable is its name
    name = _LOG_VAR.sub(lambda m: env[m.group(1)] if m.group(1) in env else value(m.group(1)), c.log)
    log = f"{b.log_dir}/{name}" if c.log else None
    shown = c.shown.format(cmd=cmd, log=log or "")
    cwd = os.path.normpath(value(c.cwd.role) or ".") if isinstance(c.cwd, Val) else c.cwd  # as `cd` leaves it
    argv = cmd.replace("|", " ") if c.pipe_splits else cmd
    b.add(c.kind, argv, log, shown=shown, status_path=log if c.names_log else None, cwd=cwd, quiet=c.quiet,
          **service)  # fmt: skip


# A loop's or a branch's variable in a command's log name (Command.log), or a role (`{lite.runtime_device}`).
_LOG_VAR = re.compile(r"\{(\w+(?:\.\w+)*)\}")


def _loops(entries: tuple):
    """Every Loop of `entries`, outer ones first (nested ones after the loop they are in)."""
    for e in entries:
        if isinstance(e, Loop):
            yield e
        if isinstance(e, (Loop, When)):
            yield from _loops(e.commands)


def _commands(entries: tuple) -> list:
    """Every Command of `entries`, in the table's order (the loops', Whens' and services' own inside
    them)."""
    return [c for e in entries for c in (_commands(e.commands) if isinstance(e, (Loop, When)) else _own((e,)))]


def _own(entries: tuple) -> list:
    """The Commands of `entries` outside any loop of theirs: a Service's start and clients, a When's
    own."""
    out: list = []
    for e in entries:
        if isinstance(e, Service):
            out += [e.start, *(c for client in e.clients for c in _commands((client,)))]
        elif isinstance(e, When):
            out += _own(e.commands)
        elif isinstance(e, Command):
            out.append(e)
    return out


def _entries(entries: tuple, values: dict, keys: dict, pad: str, count: list) -> list:
    """The bash of `entries` (Command, Loop, When, Skip, Service), each line after `pad`; `count`:
    commands so far."""
    out: list = []
    for e in entries:
        if isinstance(e, When):
            out += _when(e, values, keys, pad, count)
            continue
        if isinstance(e, Skip):
            out += _skip(e, pad)
            continue
        if isinstance(e, (Export, PathFirst, Unset)):
            out += _env_bash(e, pad)
            continue
        if isinstance(e, Pick):  # before_logs set its word (or refused the config)
            continue
        if isinstance(e, Service):
            out += _service(e, values, keys, pad, count)
            continue
        if not isinstance(e, Loop):
            count[0] += 1
            out += _command(e, count[0], values, keys, pad)
            continue
        note = e.note.splitlines() or [f"Each {e.var}."]
        out += ["", *(f"{pad}# {line}" for line in note)]
        out += _loop_head(e, values, pad)
        if e.branch is not None:
            out += _branch(e, pad + "    ")
        if e.parts:  # upstream's func_parser_key and func_parser_value of the item
            out.append(f"{pad}    {e.parts[0]}=${{{e.var}%%:*}} {e.parts[1]}=${{{e.var}#*:}}")
        if e.cut:  # upstream's `${item%word*}`
            _plain_words((e.cut[1],), "a loop's cut word")
            out.append(f"{pad}    {e.cut[0]}=${{{e.var}%{e.cut[1]}*}}")
        out += _entries(e.commands, values, keys, pad + "    ", count)
        out.append(f"{pad}done")
    return out


def _env_bash(e, pad: str) -> list:
    """The bash of an Export, a PathFirst or an Unset (the script's environment)."""
    if isinstance(e, Export):
        _plain_words((e.name, e.value), "an Export's name and value")
        return ["", f"{pad}# Upstream exports it for the commands after this.", f"{pad}export {e.name}={e.value}"]
    if isinstance(e, PathFirst):
        _plain_words((e.name,), "a PathFirst's name")
        return ["", f"{pad}# Upstream puts its working directory first on {e.name} for the commands after this.",
                f'{pad}export {e.name}="${{PWD}}${{{e.name}:+:${{{e.name}}}}}"']  # fmt: skip
    _plain_words(e.names, "an Unset's names")
    return ["", f"{pad}# Upstream unsets them for the commands after this.", f"{pad}unset {' '.join(e.names)}"]


def _loop_head(e: Loop, values: dict, pad: str) -> list:
    """The bash of a Loop's `for` line: its items split at `|` (and the paired list's beside them,
    the position in its index variable)."""
    out = [f'{pad}declare -a {e.var}_items=() && tipc_split {e.var}_items "|" "${values[e.role]}"']
    if e.paired is None and not e.index:
        return [*out, f'{pad}for {e.var} in "${{{e.var}_items[@]}}"; do']
    # by position, the paired lists' items beside it, the position itself
    for role, var in e.pairs():
        out.append(f'{pad}declare -a {var}_items=() && tipc_split {var}_items "|" "${values[role]}"')
    out.append(f'{pad}for {e.var}_n in "${{!{e.var}_items[@]}}"; do')
    out.append(f"{pad}    {e.var}=${{{e.var}_items[{e.var}_n]}}")
    for _role, var in e.pairs():
        out.append(f"{pad}    {var}=${{{var}_items[{e.var}_n]:-}}")
    if e.index:
        out.append(f"{pad}    {e.index}=${{{e.var}_n}}")
    return out


def _plain_words(words, what: str) -> None:
    """A table's words the script prints into `[[ ]]` tests and `case` patterns: plain words only
    (a table is ours, not a config's; this guards our own tables)."""
    for word in words:
        if not re.fullmatch(r"[\w.+-]+", word):
            raise AssertionError(f"{what} must be plain words: {word!r}")


def _when(when: When, values: dict, keys: dict, pad: str, count: list) -> list:
    """The bash of a When: its entries inside `if [[ ${var} == item || ... ]]; then ... fi`."""
    _plain_words(when.items, "a When's items")
    test = " || ".join(f"${{{when.var}}} == {item}" for item in when.items)
    note = [f"{pad}# {line}" for line in when.note.splitlines()]
    body = _entries(when.commands, values, keys, pad + "    ", count)
    return ["", *note, f"{pad}if [[ {test} ]]; then", *body, f"{pad}fi"]


def _skip(skip: Skip, pad: str) -> list:
    """The bash of a Skip: `continue` when every test holds."""
    # a `*w*` word (contains w) is a glob pattern in `[[ ]]`: its w a plain word too
    _plain_words([Skip.part(word) or word for _var, word, _equal in skip.tests], "a Skip's words")
    test = " && ".join(f"${{{var}}} {'==' if equal else '!='} {word}" for var, word, equal in skip.tests)
    return [f"{pad}if [[ {test} ]]; then", f"{pad}    continue", f"{pad}fi"]


def _walk(entries: tuple):
    """Every entry of `entries`, and of the loops and Whens in them."""
    for e in entries:
        yield e
        if isinstance(e, (Loop, When)):
            yield from _walk(e.commands)


def _pick(pick: Pick, dialect: Dialect, values: dict, read: bool) -> list:
    """The bash of a Pick (before anything runs): its word by the role's value, the first choice that
    fits (a `case`'s patterns, in order), or the config refused (exit 2) as the Plan refuses it;
    `read`: whether a When reads its word (else it only refuses: no variable is set)."""
    got = f"${{{values[pick.role]}}}"
    if dialect.values_to_colon and values[pick.role] == "model_name":  # kept whole: cut where read
        got = "${model_name%%:*}"
    said = f"{pick.var}: by {pick.role}, the first that fits" if read else f"{pick.role}: refused unless it fits"
    if pick.positive is not None:  # upstream's numeric test
        said = f"{pick.var}: {pick.positive} for a {pick.role} above 0 (upstream's `test -gt 0`), else what fits"
    out = [f"# {said} (upstream's if/elif on it).", f"case {got} in"]
    for names, parts, word in pick.choices:
        _plain_words((*names, *parts, word), "a Pick's names, parts and words")
        pattern = " | ".join((*names, *(f"*{part}*" for part in parts)))
        out.append(f"{pattern}) {pick.var}={word} ;;" if read else f"{pattern}) ;;")
    if any(c in pick.refusal for c in '"$`\\'):
        raise AssertionError(f"a Pick's refusal must be plain text: {pick.refusal!r}")
    message = f"${{FILENAME}}: {pick.role} \\`{got}\\` {pick.refusal}: refusing this config"  # in "..."
    if pick.default is not None:
        _plain_words((pick.default,), "a Pick's default")
        out.append(f"*) {pick.var}={pick.default} ;;" if read else "*) ;;")
        out.append("esac")
    else:
        out += ["*)", f'    echo "tipc: {message}" >&2', "    exit 2", "    ;;", "esac"]
    if pick.positive is None:
        return out
    _plain_words((pick.positive,), "a Pick's positive word")
    if not pick.choices and pick.default is not None:  # the default alone
        out = [out[0], f"{pick.var}={pick.default}"]
    # upstream's `test ${v} -gt 0`: a whole number above 0 gives its word, before the choices
    return [out[0], f"if [[ {got} =~ ^{POSITIVE}$ ]]; then", f"    {pick.var}={pick.positive}", "else",
            *(f"    {line}" for line in out[1:]), "fi"]  # fmt: skip


def _branch(loop: Loop, pad: str) -> list:
    """The bash of a loop's Branch: the word its item gives, or upstream's echo and the next item."""
    branch = loop.branch
    assert branch is not None
    for items, word in (*branch.choices, ((), branch.default or "")):
        # an item `*w*` (contains w) is a `case` glob pattern: its w a plain word too
        _plain_words((*(Skip.part(i) or i for i in items), *((word,) if word else ())), "a branch's items and words")
    if any(c in branch.otherwise for c in '"$`\\'):
        raise AssertionError(f"a branch's otherwise must be plain text: {branch.otherwise!r}")
    out = [f"case ${{{loop.var}}} in"]
    out += [f"{' | '.join(items)}) {branch.var}={word} ;;" for items, word in branch.choices]
    if branch.default is not None:
        return [pad + line for line in (*out, f"*) {branch.var}={branch.default} ;;", "esac")]
    out += ["*)", f'    echo "{branch.otherwise}"', "    continue", "    ;;", "esac"]
    return [pad + line for line in out]


def _service(s: Service, values: dict, keys: dict, pad: str, count: list) -> list:
    """The bash of a Service: started in the background, its clients, then stopped (runner_lib's
    tipc_serve and tipc_service_end: its process group, never a search of the machine's processes)."""
    count[0] += 1
    out = _command(s.start, count[0], values, keys, pad, background=s.warmup)
    for client in s.clients:
        if isinstance(client, Loop):
            out += _entries((client,), values, keys, pad, count)
            continue
        count[0] += 1
        out += _command(client, count[0], values, keys, pad)
    note = s.note.splitlines() or ["The service stopped: what is left of its process group."]
    return [*out, "", *(f"{pad}# {line}" for line in note), f"{pad}tipc_service_end"]


def _skipped(c: Command, var: str) -> tuple:
    """The items of loop variable `var` for which command `c` is left out."""
    if c.unless_null != var:
        return ()
    return ("null", "") if c.null_or_empty else ("null",)


def _not_mine(source: str, script: str, role: str, key: str, got: str) -> str:
    """Why a config is refused: its line of `role` has the key `got`, not `key` (another script's)."""
    return (
        f"{source}: its {role} line has the key '{got}', not '{key}': a config of another script than "
        f"{script}, refusing it"
    )


def _undefined(source: str, case: Case, item: str) -> str:
    """Why a config is refused: an item `case` has no choice for (the Plan's and the bash's words)."""
    items = ", ".join(i for i, _role in case.choices)
    return (
        f"{source}: {case.on} `{item}` is none of {items} (upstream's script prints "
        f'"{case.otherwise}" and exits 1 there): refusing this config'
    )


def _command(c: Command, n: int, values: dict, keys: dict, pad: str, background: Optional[int] = None) -> list:
    """The bash of one command, each line after `pad`; `background`: a service's warm-up (seconds)."""
    note = c.note.splitlines() or [c.kind]
    out = ["", *(pad + line for line in (f"# {n}. {note[0]}", *(f"# {line}" for line in note[1:])))]
    indent = ""
    # a guarded command names its log first, an unguarded one after its parameters (the
    # order the hand-written paddle2onnx template had: its bytes stay as they were)
    log = _LOG_VAR.sub(lambda m: f"${{{values[m.group(1)] if '.' in m.group(1) else m.group(1)}}}", c.log)
    lines = [f'{c.log_var}="${{LOG_PATH}}/{log}"'] if c.unless_null and c.log else []
    for sub in _subs(c.words):  # upstream's `x=${value/old/new}`, each in turn
        lines.append(f'{sub.var}="${values[sub.role]}"')
        for old, new in sub.pairs:
            if not re.fullmatch(r"[\w./+-]*", old + new) or not old:
                raise AssertionError(f"a Sub's words must be plain words: {old!r}, {new!r}")
            lines.append(f'{sub.var}="${{{sub.var}/{old.replace("/", chr(92) + "/")}/{new}}}"')
    for sed in _seds(c.words):  # a value escaped for a sed replacement
        lines.append(f'{sed.var}="" && tipc_sed_value {sed.var} "{_bash_word(values, keys, sed.word)}"')
    for case in (w for w in c.words if isinstance(w, Case)):
        lines.append(f"case ${{{case.on}}} in")
        lines += [f"{item}) {case.var}=${{{values[role]}}} ;;" for item, role in case.choices]
        lines.append("esac")
    for p in (w for w in c.words if isinstance(w, Param)):
        key = _bash_word(values, keys, p.key) if isinstance(p.key, Lit) else f"${keys[p.key]}"
        lines.append(f'tipc_set_param {p.bash_var()} "{key}" "{_bash_value(values, keys, p)}"')
    if not c.unless_null and c.log:
        lines.append(f'{c.log_var}="${{LOG_PATH}}/{log}"')
    words = " ".join(_bash_word(values, keys, w) for w in c.words)
    lines.append(f'cmd="{words}"')
    log_word = f"${{{c.log_var}}}" if c.log else ""
    shown = c.shown.format(cmd="${cmd}", log=log_word)
    cwd = f' --cwd "${values[c.cwd.role]}"' if isinstance(c.cwd, Val) else f" --cwd {c.cwd}" if c.cwd else ""
    log_arg = f'"${c.log_var}"' if c.log else '""'
    run_cmd = '"${cmd//|/ }"' if c.pipe_splits else '"$cmd"'
    names_log = c.names_log and not c.quiet
    tail = f"--status-path {log_arg} {run_cmd} {log_arg}" if names_log else f"{run_cmd} {log_arg}"
    started = f" --background {background}" if background is not None else ""
    quiet = " --quiet" if c.quiet else ""  # runner_lib's service part has it
    run = f'run_step --kind {c.kind}{started}{quiet}{cwd} --shown "{shown}"'
    if c.unless_null:
        guard = values.get(c.unless_null, c.unless_null)
        test = f"-n ${{{guard}}} && ${{{guard}}} != null" if c.null_or_empty else f"${guard} != null"
        out.append(f"{pad}if [[ {test} ]]; then")
        indent = "    "
    lines += [f"{run} {tail}"] if len(pad + indent + run + tail) < 120 else [f"{run} \\", f"    {tail}"]
    out += [pad + indent + line for line in lines]
    if c.unless_null:
        out.append(f"{pad}fi")
    return out


def _items(words) -> list:
    """The Items among a command's words (in Joins too)."""
    return [i for w in words for i in (_items(w.parts) if isinstance(w, Join) else [w] if isinstance(w, Item) else [])]


def _seds(words) -> list:
    """The Seds among a command's words (in Joins too), each once."""
    out: list = []
    for w in words:
        for sed in w.parts if isinstance(w, Join) else (w,):
            if isinstance(sed, Sed) and sed not in out:
                out.append(sed)
    return out


def _subs(words) -> list:
    """The Subs among a command's words (in Joins too), each once."""
    out: list = []
    for w in words:
        for sub in _subs(w.parts) if isinstance(w, Join) else [w] if isinstance(w, Sub) else []:
            if sub not in out:
                out.append(sub)
    return out


def _word(b: Builder, value, env: dict, w: Word) -> str:
    if isinstance(w, (Lit, Config)):  # a Config: the config's name as the script was given it
        return w.text if isinstance(w, Lit) else b.config
    if isinstance(w, Val):
        return value(w.role)
    if isinstance(w, Key):
        return b.v.key(w.role)
    if isinstance(w, Item):
        return env[w.var]
    if isinstance(w, Join):
        return "".join(_word(b, value, env, part) for part in w.parts)
    if isinstance(w, (First, Last, Sed, Prefixed, Sub)):
        return _derived_word(b, value, env, w)
    if isinstance(w, Case):
        role = w.role(env[w.on])
        if role is None:
            raise UsageError(_undefined(b.source, w, env[w.on]))
        return value(role)
    key = w.key.text if isinstance(w.key, Lit) else b.v.key(w.key)
    if isinstance(w.value, tuple):
        return set_param(key, "".join(_word(b, value, env, part) for part in w.value))
    return set_param(key, value(w.value_role()))


def _derived_word(b: Builder, value, env: dict, w: Union[First, Last, Sed, Prefixed, Sub]) -> str:
    """A word computed from a role's value or another word (see _word)."""
    if isinstance(w, (First, Last)):  # the first item of a role's `|` list, the last part of its `/` path
        parts = ifs_split(value(w.role), "|" if isinstance(w, First) else "/") or [""]
        return parts[0] if isinstance(w, First) else parts[-1]
    if isinstance(w, Sed):
        return sed_quoted(_word(b, value, env, w.word))
    if isinstance(w, Prefixed):  # upstream's awk of `echo ${cmd}` (IFS=|: a `|` splits as a blank)
        got = [word for word in re.split(r"[ \t\n|]+", value(w.role)) if word] + [""] * w.count
        return " ".join(value(w.prefix) + word for word in got[: w.count])
    got = value(w.role)
    for old, new in w.pairs:
        got = got.replace(old, new, 1)
    return got


def _bash_value(values: dict, keys: dict, p: Param) -> str:
    if isinstance(p.value, tuple):
        return "".join(_bash_word(values, keys, w) for w in p.value)
    return f"${values[p.value_role()]}"


def _bash_word(values: dict, keys: dict, w: Word) -> str:
    if isinstance(w, Lit):
        if any(c in w.text for c in "$`\\"):
            raise AssertionError(f"a table's literal word must be plain text: {w.text!r}")
        return w.text.replace('"', '\\"')  # in the script's "..." string (a sed expression's quotes)
    if isinstance(w, Val):
        return f"${{{values[w.role]}}}"
    if isinstance(w, Key):
        return f"${{{keys[w.role]}}}"
    if isinstance(w, Item):
        return f"${{{w.var}}}"
    if isinstance(w, Join):
        return "".join(_bash_word(values, keys, part) for part in w.parts)
    if isinstance(w, (Case, First, Sub, Last, Sed, Prefixed)):
        return f"${{{w.var}}}"
    if isinstance(w, Config):
        return "${FILENAME}"
    return f"${{{w.bash_var()}}}"


def _lasts(entries: tuple) -> dict:
    """var -> Last, for every Last among the commands' words and their Params' value words, each once."""
    out: dict = {}
    for c in _commands(entries):
        for w in c.words:
            for part in w.value if isinstance(w, Param) and isinstance(w.value, tuple) else (w,):
                if isinstance(part, Last):
                    out[part.var] = part
    return out
