"""A chain's steps as data (issue 33's "chains as tables"): a chain script that runs a fixed list of
commands is a `ChainTable` beside its line table, in its dialects/chains/ module; one interpreter,
plan/runners/table.py, turns it into the Plan and into the generated bash.

A command is words: `Lit` (text as it stands), `Val` (a role's value), `Key` (a role's key),
`Item` (a loop's item, or the word its `Branch` gives it), `Join` (several words without a blank
between: `${use_gpu_key}=${use_gpu}`), `Param` (upstream's func_set_params of a role's key and a
value: `key=value`, or a blank when either is null; the value a role's, or several words joined,
`<dir>/<file>`) and `Case` (the value of the role a case table picks by a loop's item). A `Loop`
runs its commands (and loops: nested) once per item of a role's `|` list; its `Branch` picks a word
by the item, or skips the item; a `When` runs its commands (and loops) only for some items or words;
its `parts` name the item's key and value (`cpu:device_type=0`). A command's log name may name a
loop's, a branch's or a part's variable. A `Service` is a server started in the background, its
clients run against it, then stopped by the script's own process handling (a serving chain's server).
A command may run from the directory a role names (`cwd=Val(role)`: upstream's `cd ${dir}`), be `quiet`
(no status line) and split at `|` (`pipe_splits`); `First` is the first item of a role's `|` list,
`Last` the last part of a role's `/` path; a Loop may `cut` its item for a log's name and be a
Service's clients;
`Unset` unsets environment variables in the script; `ChainTable.requires` refuses another script's
configs (the serving chains use them).
A `Pick` gives a word by a role's value (PaddleOCR's det/rec/system branches on the model's name),
for the Whens after it; a `Param`'s key may be the script's own (a `Lit`). A Pick may test for a whole
number above 0 (`positive`: upstream's `test ${v} -gt 0`) and give any other value a `default` word;
`Config` is the config file's path as the script was given it (a C++ binary's own config).
A Branch's item may be a `*w*` word (an item containing w: upstream's `[[ ${model} =~ "slim" ]]`), a
Loop may pair several lists with its own (`paired=((role, var), ...)`), a log's name may name a role's
value (`{lite.runtime_device}`), and `PathFirst` puts the script's working directory first on a search
path (upstream's `export LD_LIBRARY_PATH=${PWD}:$LD_LIBRARY_PATH`: Paddle-Lite's on-device scripts);
`Export` exports CUDA_VISIBLE_DEVICES for the commands after it (an `Unset` of it ends that).
A Join may hold a `Sed` (a value escaped for a sed replacement) and a `Prefixed` (a command's first
words, each after a directory: a device's command line); a `quiet` command needs no Service; a
table's `remote` roles are refused unless each item is one word (Paddle-Lite's device shell line).
"""

from __future__ import annotations

import re
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


# The whole-tree oracle's category for a generated script refusing a MODE (exit 2, nothing run).
MODE_REFUSED = "mode refused: {mode}"


def refuses_modes_but(mode: str, defaulted: bool = False) -> str:
    """A Deviation's category for a script taking `mode` alone (`defaulted`: also no MODE, which
    then means `mode`), as the whole-tree oracle names a refusal (MODE_REFUSED)."""
    others = f"{mode}$|None$" if defaulted else f"{mode}$"
    return "^" + re.escape(MODE_REFUSED.format(mode="")) + f"(?!{others})"


@dataclass(frozen=True)
class Lit:
    text: str


@dataclass(frozen=True)
class Val:
    role: str


@dataclass(frozen=True)
class Key:
    role: str  # a role's key (upstream's func_parser_key of its line)


@dataclass(frozen=True)
class Item:
    var: str  # a loop's variable (Loop.var): its item; or a Branch's variable: the word it gives the item


@dataclass(frozen=True)
class Join:
    """Words joined without a blank into one (upstream's `${use_gpu_key}=${use_gpu}`)."""

    parts: tuple  # of Lit, Val, Key, Item


@dataclass(frozen=True)
class Param:
    # the role whose key is set, or a key of the script's own (`Lit("--model_dir")`: upstream's
    # `func_set_params "--model_dir" "${det_infer_model_dir_value}"`; then name `var` and `value`)
    key: Union[str, Lit]
    var: str = ""  # the bash variable holding it (default: set_<last part of the role>)
    # the role whose value is set (default: `key`'s own), or words (Lit, Val, Key, Item) joined
    # without a blank into one value (`(Val("p2o.save_dir"), Lit("/"), Val("model_name"))`)
    value: Union[str, tuple] = ""

    def value_role(self) -> str:
        """The role whose value is set, when `value` is no words."""
        role = self.value or self.key
        if not isinstance(role, str):
            raise AssertionError(f"a Param of a literal key names the role of its value: {self.key!r}")
        return role

    def bash_var(self) -> str:
        if isinstance(self.key, Lit):
            if not self.var or not self.value:
                raise AssertionError(f"a Param of a literal key names its var and value: {self.key.text!r}")
            return self.var
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


@dataclass(frozen=True)
class First:
    """The first item of a role's `|` list, in the bash variable `var` (upstream's `IFS='|';
    list=(${value}); x=${list[0]}`: PaddleSeg's serving scripts take their interpreter so)."""

    role: str
    var: str


@dataclass(frozen=True)
class Sub:
    """A role's value with literal parts replaced, each pair's first occurrence in turn (upstream's
    `x=${value/old/new}`), in the bash variable `var`: `${model_name/PP-/PP}`."""

    var: str  # the bash variable it is computed into (upstream's)
    role: str
    pairs: tuple  # of (old, new): plain words (a `/` in them is escaped in bash)


@dataclass(frozen=True)
class Last:
    """The last part of a role's `/`-separated value, in the bash variable `var` (upstream's
    `IFS="/"; parts=(${value}); x=${parts[-1]}`: a trailing `/` ends no part, so
    `./deploy/model_serving/` gives `model_serving`). PaddleOCR's serving scripts name a web
    service's model config so; it may stand in a Param's value words."""

    role: str
    var: str


@dataclass(frozen=True)
class Config:
    """The config file as the script was given it (upstream's `${FILENAME}`: a C++ binary reads its own
    `key value` config, passed to it as a word)."""


@dataclass(frozen=True)
class Sed:
    """A value (Val) or an item (Item) as the literal replacement of a `sed s/.../.../` inside a
    single-quoted word (backslash, `/`, `&`, a newline and `'` escaped: sed reads it as data), in the
    bash variable `var` (upstream escapes its work path's slashes); it stands in a Join."""

    word: Union[Val, Item]
    var: str


@dataclass(frozen=True)
class Prefixed:
    """The first `count` words of a role's value (split at blanks and `|`), each after another role's
    value, joined by blanks, in the bash variable `var` (upstream's `echo ${cmd} | awk '{print path $1"
    "path $2" "path $3}' path=${dir}`: a missing word gives the prefix alone)."""

    role: str
    prefix: str  # the role whose value goes before each word
    count: int
    var: str


Word = Union[Lit, Val, Key, Item, Join, Param, Case, First, Sub, Last, Config, Sed, Prefixed]


@dataclass(frozen=True)
class Command:
    kind: str  # the step's kind (export, infer, ...)
    words: tuple  # of Word
    # its log's file name in the log directory; `{var}`: a loop's or a branch's variable (Item); "": none
    # (its output goes to the terminal, as upstream's edits' does)
    log: str
    log_var: str  # the bash variable naming that log
    shown: str = "{cmd} > {log} 2>&1"  # the status line's command
    # run from this directory (the status line says how, in `shown`); a Val: the directory a role's
    # value names (upstream's `cd ${serving_dir_value}`), relative to the repo root
    cwd: Optional[Union[str, Val]] = None
    unless_null: Optional[str] = None  # a role, or a Loop's variable: left out when its value is `null`
    # ... or empty too: upstream tests it unquoted (`[ ${x} != "null" ]`), a test an empty value fails
    null_or_empty: bool = False
    names_log: bool = True  # its status line names its log (a status_check given a 5th argument)
    note: str = ""  # what the generated script's comment says of it
    # no status line, and its failure fails nothing: what upstream runs without a status_check (a
    # serving chain's conversion and edits); only in a table with a Service (runner_lib's --quiet)
    quiet: bool = False
    # upstream evals it unquoted while IFS is `|` (`IFS='|'; eval $cmd`): a `|` in its text
    # separates words as a blank does (its status line keeps the `|`)
    pipe_splits: bool = False


@dataclass(frozen=True)
class Branch:
    """Upstream's `if [ ${item} = A ] || [ ${item} = B ]; then ... elif ...; else echo OTHERWISE; fi`
    around a loop's body, the branches alike but for a word (`cpu`, `gpu` in a log's name): the word
    each item gives, in the bash variable `var` (Item, a log's `{var}`). An item of no branch runs
    nothing of the body: upstream prints `otherwise` and goes on to the next item (unlike a Case's
    item without a choice, which upstream exits on)."""

    var: str  # the bash variable holding the word (upstream has none: each branch spells it out)
    choices: tuple  # of (items, word): the items (a tuple) that give the word
    otherwise: str  # what upstream prints for any other item
    # the word any other item gives (upstream's `else` runs the body too: `if [ ${x} = "null" ]; then
    # ...cpu...; else ...gpu...; fi`); None: such an item is skipped, after `otherwise`
    default: Optional[str] = None

    def word(self, item: str) -> Optional[str]:
        # an item `*w*`: any item containing w (Skip.matches)
        return next((word for items, word in self.choices if any(Skip.matches(item, i) for i in items)), self.default)


@dataclass(frozen=True)
class When:
    """Commands (and loops) run only when a loop's item, or the word its Branch gave it, is one of
    `items` (upstream's `if [ ${device} = "cpu" ]; then ... fi` with no `else`: any other runs none
    of them, silently). Beside a Branch, one When per word gives each word a body of its own."""

    var: str  # a loop's variable (Loop.var), a Branch's (Branch.var) or a Pick's (Pick.var)
    items: tuple  # the items (or words) that run the commands
    commands: tuple  # of Command, Loop, When
    note: str = ""  # what the generated script's comment says of it


@dataclass(frozen=True)
class Pick:
    """A word picked by a role's value, the first choice that fits it (upstream's `if [ ${model_name}
    = A ] || [ ${model_name} = B ]; then ... elif [[ ${model_name} =~ "det" ]]; then ... fi` around
    commands alike but for a word or two): a choice (names, parts, word) fits a value that is one of
    `names` or contains one of `parts`; the word is in the bash variable `var`, for the Whens after it.
    A value no choice fits is refused before anything runs, by the Plan and the generated script
    alike (name what upstream does then a Deviation of the table). It stands among a table's own
    commands, before the Whens that read it (not in a loop)."""

    role: str
    var: str
    choices: tuple  # of (names, parts, word): names and parts are tuples of plain words
    refusal: str  # why such a value is refused (after `<config>: <role> `<value>` `)
    # the word a whole number above 0 gives, tried before the choices (upstream's `if test ${v} -gt 0`:
    # true for such a number only, an error and false for any other text)
    positive: Optional[str] = None
    # the word any other value gives (upstream's `else`); None: such a value is refused
    default: Optional[str] = None

    def word(self, value: str) -> Optional[str]:
        if self.positive is not None and re.fullmatch(POSITIVE, value):
            return self.positive
        got = (w for names, parts, w in self.choices if value in names or any(p in value for p in parts))
        return next(got, self.default)


# A whole number above 0 as `test N -gt 0` takes it (a sign, leading zeros; an ERE bash's `=~` reads too).
POSITIVE = r"[+]?0*[1-9][0-9]*"


@dataclass(frozen=True)
class Skip:
    """The rest of a loop's body skipped for its item when every test holds (upstream's
    `if [ ${a} = "x" ] && [ ${b} != "y" ]; then continue; fi`): a test is (var, word, equal), `var`
    a loop's, a branch's or a paired variable, holding when its value is (equal) or is not the word;
    a word `*w*` holds when the value contains `w` (upstream's `[[ ${a} =~ "w" ]]`, a quoted pattern:
    a substring). It stands in a loop's own commands (not in a When's)."""

    tests: tuple  # of (var, word, equal)

    @staticmethod
    def part(word: str) -> Optional[str]:
        """The `w` of a `*w*` word (a substring test); None for a plain word."""
        return word[1:-1] if len(word) > 2 and word[0] == word[-1] == "*" else None

    @staticmethod
    def matches(value: str, word: str) -> bool:
        """Whether a variable's value is the word (`*w*`: contains w)."""
        part = Skip.part(word)
        return value == word if part is None else part in value


@dataclass(frozen=True)
class Loop:
    """Commands (and loops, run inside it) once per item of a role's `|`-separated list (upstream's
    `IFS="|"; for var in ${list}`: an empty list runs nothing), the item in the bash variable `var`;
    a `branch` picks a word by the item, or skips it."""

    role: str
    var: str  # named as upstream's loop variable; Case, Item, When and Command.unless_null may name it
    commands: tuple  # of Command, Loop, When, Skip, Service
    note: str = ""  # what the generated script's comment says of it
    branch: Optional[Branch] = None
    # (role, var): the item of another role's `|` list at the same position, in `var` ("" past its
    # end): upstream's `flags=(${list}); ... ${flags[Count]}` beside its loop; or several such pairs
    # (`((role, var), (role, var))`)
    paired: Optional[tuple] = None
    # (key variable, value variable): the item's key and value as upstream's func_parser_key and
    # func_parser_value of it (`${opt%%:*}`, `${opt#*:}`: an item without a colon is both), for
    # Item and a log's `{var}`
    parts: tuple = ()
    # a variable holding the item's position, from 0 (upstream's `Count`, counted up after each
    # item), for Item and a log's `{var}`
    index: str = ""
    # (var, word): the item cut before the last `word` in it (upstream's `${item%word*}`: the
    # item whole when it has none), for a log's `{var}` (`pipeline_http_client.py` -> `pipeline_http`)
    cut: tuple = ()

    def pairs(self) -> tuple:
        """Its paired lists as ((role, var), ...) (one pair or several)."""
        if self.paired is None:
            return ()
        return self.paired if isinstance(self.paired[0], tuple) else (self.paired,)


@dataclass(frozen=True)
class Service:
    """A server started in the background (upstream's `eval "${cmd} > ${log} 2>&1 &"`, then `sleep`):
    `start` runs in a process group of its own and gets up to `warmup` seconds (its status: whether it
    is still up then, or ended well); then its `clients` run against it; then it is stopped, by the
    script's own process handling (SIGTERM to its process group, SIGKILL after TIPC_KILL_GRACE),
    never by a search of the machine's processes. It is stopped too when a client fails, the script is
    interrupted or ends. Name upstream's way of stopping it and its pauses a Deviation of the table."""

    start: Command  # its kind `serve`: the oracle names a background start's status so
    clients: tuple  # of Command, or a Loop of Commands (upstream's `for pipeline in ...` of clients)
    warmup: int  # seconds (upstream's sleep after starting it; TIPC_SERVE_WARMUP overrides in bash)
    note: str = ""  # what the generated script's comment says of its stop


@dataclass(frozen=True)
class Unset:
    """Environment variables the generated script unsets for the commands after it (upstream's
    `unset https_proxy` before its servers). A Plan's steps carry no environment but
    CUDA_VISIBLE_DEVICES: the Plan leaves it out, as PaddleClas's serving runners do."""

    names: tuple  # of plain variable names


@dataclass(frozen=True)
class Export:
    """An environment variable the generated script exports for the commands after it (upstream's
    `export CUDA_VISIBLE_DEVICES=0` before a GPU run); the Plan's steps carry CUDA_VISIBLE_DEVICES
    (an `Unset` of it clears it there too), and no other variable: name that one only."""

    name: str  # a plain variable name
    value: str  # a plain word


@dataclass(frozen=True)
class PathFirst:
    """The script's working directory put first on a search path variable for the commands after it
    (upstream's `export LD_LIBRARY_PATH=${PWD}:$LD_LIBRARY_PATH`: a demo beside its library). A Plan's
    steps carry no environment but CUDA_VISIBLE_DEVICES: the Plan leaves it out, as an Unset."""

    name: str  # a plain variable name


@dataclass(frozen=True)
class ChainTable:
    """A chain script as data: its one mode, where it logs, its status line, its commands."""

    mode: str  # its one mode (the script reads its config argument only)
    log_dir: str  # {root} (the repo root: `$(pwd)`, else `.`), {model_name}, {mode}
    status_format: str
    commands: tuple  # of Command, Loop, When, Skip, Service, Pick
    deviations: tuple = ()  # its own (Deviation); every runner's common ones come first
    # its GPUID argument, when given, is every step's CUDA_VISIBLE_DEVICES (upstream's
    # `export CUDA_VISIBLE_DEVICES=${GPUID}` before its steps)
    gpuid_env: bool = False
    # with gpuid_env: CUDA_VISIBLE_DEVICES when no GPUID is given ("": none exported; upstream's
    # serving scripts export `${GPUID:-0}`)
    gpuid_default: str = ""
    # (role, key): the keys its configs' lines have, which another script's configs of the same
    # first section lack (PaddleSeg's Python and C++ serving configs): a config without them is
    # refused before anything runs, by the Plan and the script (name it a Deviation of the table)
    requires: tuple = ()
    # roles whose values reach a device's shell line (`adb shell '...'`): each item of their `|` list
    # (each word of a command role's) must be one word by the spec's rule (spec/policy.py
    # word_problem), else the config is refused before anything runs, by the Plan and the script
    remote: tuple = ()

    @property
    def services(self) -> bool:
        """Whether it starts a background service (the script then stops it on every exit)."""
        return _has_service(self.commands)


def _has_service(entries: tuple) -> bool:
    return any(isinstance(e, Service) or (isinstance(e, (Loop, When)) and _has_service(e.commands)) for e in entries)
