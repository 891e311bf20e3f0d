"""The Spec: tipcgen's typed IR of a model's TIPC suites.

Fields carry meaning (epochs per mode, trainers, inference matrix), never line
numbers: a line number exists only inside a layout table (layouts.py).

A spec file holds `defaults` (a partial suite) and `suites` (partial suites);
each suite is the deep merge of the two, validated as a full `Suite`.
"""

from __future__ import annotations

import ipaddress
import math
import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, Optional, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    create_model,
    field_validator,
    model_validator,
)

from tipcgen.dialects import NAMES as DIALECT_NAMES
from tipcgen.dialects.chains import CHAIN_LAYOUTS
from tipcgen.script.lines import second_word
from tipcgen.spec.bench_section import Bench, Convergence
from tipcgen.spec.chain_fields import chain_sections
from tipcgen.spec.modes import PREPARE_MODES, TRAIN_MODES
from tipcgen.spec.policy import (
    MAX_GPU_ID,
    ConfigFileName,
    ConfigFolder,
    ConfigKey,
    ConfigText,
    DocFileName,
    DocText,
    Interpreter,
    Name,
    RawFileName,
    Scalar,
    SectionKey,
    SectionName,
    SectionScalar,
    SuiteName,
    VerbatimLine,
    name_problem,
    policy,
    refuse_control,
    text,
)
from tipcgen.spec.prepare import PrepareStep
from tipcgen.spec.sections import BenchmarkParams, read_params

MAX_COUNT = 10_000_000  # epochs/iterations or samples per card in a mode table
MAX_LINE_INDEX = 9_999  # trivia: layout line indexes (layouts have ~50 lines; lower.py checks exactly)
MAX_PHYSICAL_LINE = 1 << 20  # trivia: physical line numbers (an imported config is at most 1 MiB)


# Layout names come from the dialect registry: registering a dialect is all a spec needs to name it.
if TYPE_CHECKING:
    LayoutName = str
    SuiteLayoutName = str
else:
    LayoutName = Literal[DIALECT_NAMES]
    # a suite may also be another chain's config (dialects/chains): its layout says which
    SuiteLayoutName = Literal[DIALECT_NAMES + tuple(CHAIN_LAYOUTS)]
# A device variant a spec's build writes a wrapper for (dialects/devices.py; gpu and cpu are the
# runner's own: no wrapper)
DeviceName = Literal["npu", "xpu"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def check_mode(mode: str) -> None:
    refuse_control(mode)
    if mode not in PREPARE_MODES:
        raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(PREPARE_MODES)}")


@policy
def _mode_name(mode: str) -> str:
    check_mode(mode)
    return mode


ModeName = Annotated[str, AfterValidator(_mode_name)]


@policy
def _rule_id(rule: str, info: ValidationInfo) -> str:
    refuse_control(rule)
    # The rule ids are lint's (a stage above this one): its caller passes them in the context.
    known = (info.context or {}).get("rule_ids")
    if known is not None and rule not in known:
        raise ValueError(f"unknown lint rule {rule!r}; rules are TIPC001..TIPC{len(known):03d}")
    return rule


RuleId = Annotated[str, AfterValidator(_rule_id)]


@policy
def _trainer_run(name: str) -> str:
    refuse_control(name)
    problem = name_problem(name)
    if problem:
        raise ValueError(
            f"trainer name {name!r} must be letters, digits, `._+-` ({problem}; ASCII, starting"
            " with a letter or digit, no `..`): it names log directories"
        )
    return name


TrainerRun = Annotated[str, AfterValidator(_trainer_run)]


def _count(value: Any, what: str) -> Any:
    """A positive whole number (epochs, batch size, threads)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_COUNT:
        raise ValueError(f"{what} must be a whole number from 1 to {MAX_COUNT}, got {value!r}")
    return value


class Flag(Model):
    """One `key:value` line. `key: null` or `value: null` disable the flag."""

    key: Optional[ConfigKey] = None
    value: Optional[Scalar] = None

    def line(self) -> tuple[str, str]:
        return text(self.key), text(self.value)


class ListFlag(Model):
    """A `key:a|b|c` line: the script loops over the values."""

    key: Optional[ConfigKey] = None
    values: list[Scalar] = Field(default_factory=list)

    def line(self) -> tuple[str, str]:
        return text(self.key), "|".join(text(v) for v in self.values)


class ModeFlag(Model):
    """A `key:lite_train_lite_infer=3|whole_train_whole_infer=50` line.

    `value` instead of `by_mode` keeps a plain value found where a table belongs (upstream
    configs have them; the scripts then drop the flag in every mode, and lint says so).
    """

    key: Optional[ConfigKey] = None
    by_mode: dict[str, Scalar] = Field(default_factory=dict)  # keys: checked by _modes
    value: Optional[Scalar] = None

    @model_validator(mode="after")
    def _one_form(self):
        if self.value is not None and self.by_mode:
            raise ValueError("give `by_mode` or `value`, not both")
        return self

    @field_validator("by_mode")
    @classmethod
    def _modes(cls, v):
        for mode, value in v.items():
            check_mode(mode)
            if mode not in TRAIN_MODES:
                raise ValueError("whole_infer does not train; give epochs/batch sizes for the training modes")
            _count(value, f"the {mode} value")
        return v

    def line(self) -> tuple[str, str]:
        if self.value is not None:
            return text(self.key), text(self.value)
        return text(self.key), "|".join(f"{m}={text(v)}" for m, v in self.by_mode.items())


def _target_shorthand(v: Any) -> Any:
    """Accept `cpu`, a GPU id, a list of ids, or the mapping form."""
    if isinstance(v, str) and v.strip().lower() in ("cpu", "-1"):
        return {}
    if isinstance(v, bool):
        raise ValueError("a topology entry is `cpu`, a GPU id, a list of GPU ids or {ips, gpus}")
    if isinstance(v, int):
        return {"gpus": [v]}
    if isinstance(v, list):
        return {"gpus": v}
    if isinstance(v, dict) and "gpu" in v and "gpus" not in v:
        v = dict(v)
        v["gpus"] = [v.pop("gpu")]
    return v


def _placeholder_model_name(file: str) -> str:
    stem = re.sub(r"[^A-Za-z0-9._+-]", "_", file.rsplit(".", 1)[0]).lstrip("._+-")
    return stem or "model"


# What import gives a required field whose line it keeps verbatim (trivia.line_overrides): the
# override is the line's source, and validation refuses any other value there (an edit of the
# field that the override would silently shadow).
IMPORT_SENTINELS = {
    "model_name": _placeholder_model_name,  # of the config's file name
    "topology": lambda file: "-1",  # the gpu_list the topology renders: cpu
    "python": lambda file: "python",
}


# An address upstream's fleet configs leave for the user to fill in (`xx.xx.xx.xx,yy.yy.yy.yy`):
# typed so that the topology stays editable; lint reports it (TIPC020) and fleet/doctor refuse it.
_PLACEHOLDER_IP = re.compile(r"^([a-z]{1,3})\.\1\.\1\.\1$")


def is_placeholder_ip(ip: str) -> bool:
    return bool(_PLACEHOLDER_IP.match(ip))


class Target(Model):
    """One gpu_list entry: where one training run happens.

    `{}` (written `cpu`) is CPU; `gpus` alone is one node; `ips` + `gpus` is a
    multi-node run where every node uses the same GPU ids. `cpus: N` runs N CPU processes
    per node through paddle.distributed.launch (tipcgen's extension, written `cpuxN` in the
    config: upstream scripts do not know it, and lint says so).
    """

    ips: list[str] = Field(default_factory=list)
    gpus: list[int] = Field(default_factory=list)
    cpus: Optional[int] = Field(default=None, ge=1, le=99)

    @field_validator("ips")
    @classmethod
    def _ips(cls, v):
        seen = set()
        for ip in v:
            refuse_control(ip)
            try:
                ipaddress.IPv4Address(ip)
            except ValueError:
                if not is_placeholder_ip(ip):
                    raise ValueError(f"{ip!r} is not an IPv4 address (nor a placeholder like xx.xx.xx.xx)") from None
            if ip in seen:
                raise ValueError(f"IP {ip} is listed twice")
            seen.add(ip)
        return v

    @field_validator("gpus")
    @classmethod
    def _gpus(cls, v):
        if len(set(v)) != len(v):
            dup = sorted({g for g in v if v.count(g) > 1})
            raise ValueError(f"GPU id {dup[0]} is listed twice")
        if any(g < 0 for g in v):
            raise ValueError("GPU ids are >= 0 (write `cpu` for a CPU run)")
        if any(g > MAX_GPU_ID for g in v):
            raise ValueError(f"GPU id {max(v)} is not a device ordinal (0 to {MAX_GPU_ID})")
        return v

    @model_validator(mode="after")
    def _shape(self):
        if self.ips and len(self.ips) < 2:
            raise ValueError("a multi-node entry needs at least two ips; drop `ips` for one node")
        if self.ips and not self.gpus and self.cpus is None:
            raise ValueError("a multi-node entry needs `gpus` (the GPU ids used on every node) or `cpus`")
        if self.gpus and self.cpus is not None:
            raise ValueError("an entry runs on `gpus` or on `cpus`, not both")
        return self

    def entry(self) -> str:
        """The gpu_list entry text."""
        if self.cpus is not None:
            return f"{','.join(self.ips)};cpux{self.cpus}" if self.ips else f"cpux{self.cpus}"
        if not self.gpus:
            return "-1"
        gpus = ",".join(str(g) for g in self.gpus)
        return f"{','.join(self.ips)};{gpus}" if self.ips else gpus

    @property
    def nodes(self) -> int:
        return max(1, len(self.ips))


class _OneGpu(Model):
    """The `{gpu: N}` form of a topology entry (schema only: validation turns it into gpus)."""

    ips: list[str] = Field(default_factory=list)
    gpu: Annotated[int, Field(ge=0, le=MAX_GPU_ID)]


# What a topology entry may be written as, for the JSON Schema editors read (see _target_shorthand).
_TargetInput = Union[
    Annotated[str, Field(pattern=r"^\s*([cC][pP][uU]|-1)\s*$")],
    Annotated[int, Field(ge=0, le=MAX_GPU_ID)],
    list[Annotated[int, Field(ge=0, le=MAX_GPU_ID)]],
    _OneGpu,
    Target,
]
TargetIn = Annotated[Target, BeforeValidator(_target_shorthand, json_schema_input_type=_TargetInput)]


class Trainer(Model):
    """A trainer slot: its name (the key on its line), train command and export command."""

    name: Optional[ConfigKey] = None
    train: Optional[ConfigText] = None
    export_name: Optional[ConfigKey] = None
    export: Optional[ConfigText] = None


# Slot -> (default trainer key, default export key), in line order.
TRAINER_SLOTS = {
    "norm": ("norm_train", "norm_export"),
    "pact": ("pact_train", "quant_export"),
    "fpgm": ("fpgm_train", "fpgm_export"),
    "distill": ("distill_train", "distill_export"),
    "slot1": (None, "export1"),
    "slot2": (None, "export2"),
}


class Trainers(Model):
    norm: Trainer = Trainer()
    pact: Trainer = Trainer()
    fpgm: Trainer = Trainer()
    distill: Trainer = Trainer()
    slot1: Trainer = Trainer()
    slot2: Trainer = Trainer()

    def slot(self, name: str) -> tuple[str, str, str, str]:
        """(trainer key, train command, export key, export command) as config text."""
        t: Trainer = getattr(self, name)
        dkey, dexport = TRAINER_SLOTS[name]
        return (
            text(t.name if t.name is not None else dkey),
            text(t.train),
            text(t.export_name if t.export_name is not None else dexport),
            text(t.export),
        )


class Train(Model):
    device: Optional[ListFlag] = None
    autocast: Optional[ListFlag] = None
    epochs: Optional[ModeFlag] = None
    save_dir: Optional[Flag] = None
    batch_size: Optional[ModeFlag] = None
    pretrained: Optional[Flag] = None
    model_file: Optional[Scalar] = "latest"
    infer_img_dir: Optional[Scalar] = None
    data: Optional[Flag] = None
    extra: Optional[Flag] = None
    run: list[TrainerRun] = Field(default_factory=lambda: ["norm_train"])


class Eval(Model):
    command: Optional[ConfigText] = None
    extra: Optional[Flag] = None


class Export(Model):
    save_dir: Optional[Flag] = None
    weights: Optional[Flag] = None
    inference_dir: Optional[Scalar] = None
    model_url: Optional[Scalar] = None  # PaddleClas: pretrained_model_url
    # PaddleDetection: `kl_quant_export`, the command klquant_whole_infer's `kl_quant` model is made by.
    kl_quant: Optional[ConfigText] = None


class InferModel(Model):
    """A released inference model tested in whole_infer mode."""

    model: Optional[Scalar] = None
    export: Optional[Scalar] = None
    quant: Optional[Scalar] = False


class Inference(Model):
    script: Optional[ConfigText] = None
    use_gpu: Optional[ListFlag] = None
    mkldnn: Optional[ListFlag] = None
    threads: Optional[ListFlag] = None
    batch_size: Optional[ListFlag] = None
    tensorrt: Optional[ListFlag] = None
    precision: Optional[ListFlag] = None
    model_dir: Optional[Flag] = None
    data: Optional[Flag] = None
    save_log: Optional[Flag] = None
    benchmark: Optional[Flag] = None
    extra: Optional[Flag] = None
    extra2: Optional[Flag] = None  # PaddleSeg's second extra flag

    @field_validator("threads", "batch_size")
    @classmethod
    def _counts(cls, v):
        # Legacy values are free text; a number given here must be a usable count.
        for item in v.values if v is not None else ():
            if isinstance(item, (int, float)):
                _count(item, "a number of threads or a batch size")
        return v


class Trivia(Model):
    """Bytes of the legacy file that carry no meaning (or no typed meaning) but must round-trip.

    The importer fills these so that `import` then `build` reproduces a config byte for byte;
    `lint` reports the ones that are defects.
    """

    final_newline: bool = True
    headers: dict[SectionName, VerbatimLine] = Field(default_factory=dict)  # section name -> exact header line
    # Script line index (empty lines not counted, as the scripts count) -> exact text, for lines
    # that no typed field reproduces (shifted keys, values the Spec rejects, odd separators).
    line_overrides: dict[int, VerbatimLine] = Field(default_factory=dict)
    core_lines: Optional[int] = None  # a truncated file: only the first N layout lines
    tail: Optional[list[VerbatimLine]] = None  # lines after the layout's core, verbatim (replaces sections)
    # Lines between the layout's core and the first `===name===` section (PaddleClas's `null:null`).
    pre_sections: list[VerbatimLine] = Field(default_factory=list)
    # section -> the keys this suite's config writes, in order, where that is not every key of
    # its (merged) section in the section's order
    section_keys: dict[SectionName, list[SectionKey]] = Field(default_factory=dict)
    blank_lines: list[int] = Field(default_factory=list)  # physical line numbers (0-based) of empty lines
    bom: bool = False
    crlf: bool = False

    @field_validator("line_overrides")
    @classmethod
    def _indexes(cls, v):
        for index in v:
            if not 0 <= index <= MAX_LINE_INDEX:
                raise ValueError(f"line index {index} is not a layout line (0 to {MAX_LINE_INDEX})")
        return v

    @field_validator("core_lines")
    @classmethod
    def _core(cls, v):
        if v is not None and not 0 <= v <= MAX_LINE_INDEX:
            raise ValueError(f"core_lines {v} is not a number of layout lines (0 to {MAX_LINE_INDEX})")
        return v

    @field_validator("blank_lines")
    @classmethod
    def _blanks(cls, v):
        for n in v:
            if not 0 <= n < MAX_PHYSICAL_LINE:
                raise ValueError(f"blank line {n} is not a line number (0 to {MAX_PHYSICAL_LINE - 1})")
        if len(set(v)) != len(v):
            raise ValueError(f"blank line {sorted(n for n in v if v.count(n) > 1)[0]} is listed twice")
        return v


MAX_SECONDS = 10_000_000  # a step limit (about 115 days)
# Whole seconds (the generated bash counts in seconds), 1 to MAX_SECONDS.
Seconds = Annotated[int, Field(strict=True, ge=1, le=MAX_SECONDS)]


def _seconds_or_table(v: Any) -> Any:
    """Whole seconds or a `{mode: seconds}` table, checked here so a bad value gets one message
    (not one per form the union below allows)."""
    if v is None:
        return v
    for mode, value in v.items() if isinstance(v, dict) else [(None, v)]:
        if mode is not None:
            check_mode(mode)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SECONDS:
            where = f"the {mode} value" if mode is not None else "a limit"
            raise ValueError(
                f"{where} must be whole seconds from 1 to {MAX_SECONDS} (or a table {{mode: seconds}}), not {value!r}"
            )
    return v


@policy
def _factor(value: float) -> float:
    if not math.isfinite(value) or not 1 <= value <= 1000:
        raise ValueError(f"multinode_factor must be a number from 1 to 1000, not {value!r}")
    return value


Factor = Annotated[float, AfterValidator(_factor)]
PerMode = Annotated[Union[Seconds, dict[ModeName, Seconds], None], BeforeValidator(_seconds_or_table)]


class Limits(Model):
    """How long steps may run (tipcgen's extension; no config line holds it): seconds by step
    kind, each a number for every mode or a table `{mode: seconds}`. A kind or mode left out
    keeps tipcgen's default; TIPC_STEP_TIMEOUT / TIPC_STALL_TIMEOUT override at run time."""

    train: PerMode = None
    eval: PerMode = None
    export: PerMode = None
    infer: PerMode = None
    # A train step launched on several nodes (`--ips` of 2+) may take this many times longer.
    multinode_factor: Optional[Factor] = None
    # Stop a train step whose logs (its log, log/workerlog.*) have not grown for this long.
    stall: PerMode = None

    @field_validator("train", "stall")
    @classmethod
    def _training_modes(cls, v):
        if isinstance(v, dict) and "whole_infer" in v:
            raise ValueError("whole_infer does not train; give train/stall limits for the training modes")
        return v

    def seconds(self, kind: str, mode: str) -> Optional[int]:
        """The limit the spec gives a `kind` step (train, eval, export, infer, stall) in `mode`."""
        value = getattr(self, kind, None)
        return value.get(mode) if isinstance(value, dict) else value


class _Suite(Model):
    """One legacy config file (e.g. the normal or the fleet suite of a model), or a config of
    another chain (its `layout` a chain layout, its fields in that chain's section: `p2o`, ...)."""

    file: ConfigFileName
    doc: Optional[DocFileName] = None
    layout: Optional[SuiteLayoutName] = None
    model_name: Name
    python: Interpreter = "python3.7"
    # the GPUs/nodes of a train suite (required there: check/spec.py); other chains have none
    topology: Optional[list[TargetIn]] = Field(default=None, min_length=1)
    # other chains: the released inference model's tarball their prepare fetches (one value per
    # model, shared by its paddle2onnx, C++ and serving configs)
    infer_model_url: Optional[Scalar] = None
    train: Train = Train()
    trainers: Trainers = Trainers()
    eval: Eval = Eval()
    export: Export = Export()
    whole_infer: list[InferModel] = Field(default_factory=list)
    inference: Inference = Inference()
    # Trailing `===name===` sections (benchmark parameters): name -> {key: value}. A suite says
    # `name: null` to drop a section its `defaults` give (dropped here, after the merge).
    sections: dict[SectionName, Optional[dict[SectionKey, Optional[SectionScalar]]]] = Field(default_factory=dict)
    trivia: Trivia = Trivia()
    # Lint rules (ids like TIPC011) whose error this suite keeps on purpose, e.g. an imported
    # upstream config that must stay byte-identical. Without it such a defect fails validation.
    allow: list[RuleId] = Field(default_factory=list)
    limits: Limits = Limits()  # step time limits and the stall watchdog (tipcgen's extension)
    preset: Optional[Name] = None  # the entry of the spec's `presets` merged under this suite
    # What prepare does for this config in a mode, instead of the spec's `prepare` for it
    # (upstream's prepare.sh also picks steps by the config's file name, e.g. pact_infer).
    prepare: dict[ModeName, list[PrepareStep]] = Field(default_factory=dict)

    @field_validator("sections", mode="before")
    @classmethod
    def _no_sections(cls, v):
        return {} if v is None else v  # `sections: null`: none of the defaults' sections

    @field_validator("sections")
    @classmethod
    def _drop_nulled(cls, v):
        return {name: params for name, params in v.items() if params is not None}

    @property
    def gpu_list(self) -> str:
        return "|".join(t.entry() for t in self.topology or ())

    def benchmark(self, section: str = "train_benchmark_params") -> Optional[BenchmarkParams]:
        """The typed view of a trailing benchmark section (None: the suite has no such section)."""
        params = self.sections.get(section)
        return None if params is None else read_params(params)[0]

    @property
    def inference_devices(self) -> list[str]:
        """Devices the inference matrix runs on (cpu, gpu), from its use_gpu values."""
        values = [text(v) for v in (self.inference.use_gpu.values if self.inference.use_gpu else [])]
        spelled = (("cpu", ("False", "cpu")), ("gpu", ("True", "gpu")))
        return [device for device, names in spelled if any(v in names for v in values)]

    @property
    def is_fleet(self) -> bool:
        return any(t.nodes > 1 for t in self.topology or ())

    def doc_name(self, suite_name: str) -> str:
        """docs/ file of this suite: `doc`, else named after the suite key like upstream's
        (normal -> test_train_inference_python.md, fleet -> test_train_fleet_inference_python.md)."""
        if self.doc:
            return self.doc
        if suite_name == "normal":
            return "test_train_inference_python.md"
        return f"test_train_{suite_name}_inference_python.md"


# The chain sections (`p2o:`, `cpp:`, `serving:`, ...) come from the chain layouts' line tables
# (spec/chain_fields.py); mypy sees the static fields only.
if TYPE_CHECKING:
    Suite = _Suite
else:
    Suite = create_model(
        "Suite",
        __base__=_Suite,
        __module__=__name__,
        **chain_sections(Model, Flag, ListFlag, tuple(_Suite.model_fields)),
    )
    Suite.__doc__ = _Suite.__doc__


def is_chain_layout(layout: Any) -> bool:
    """A layout name of another chain (a suite of it is not run by test_train_inference_python.sh)."""
    return isinstance(layout, str) and layout in CHAIN_LAYOUTS


class DocsMeta(Model):
    """What the generated docs say beyond what the suites imply."""

    algorithm: Optional[DocText] = None  # only reaches the docs' tables
    # Devices the inference table claims: what the suites' use_gpu lists test (derived; when
    # given, it must agree with them).
    inference_devices: Optional[list[Literal["cpu", "gpu"]]] = None


class RawConfig(Model):
    """A config of a kind the Spec does not model field by field (serving, cpp, lite, ptq...):
    kept verbatim so it round-trips, and written beside the suites' configs."""

    lines: list[VerbatimLine]
    final_newline: bool = True
    # Run by the repo's own script of its chain, which the build leaves alone: the config fits a
    # chain table of another family only (no table of its own family reads its lines), whose
    # script would run it otherwise than the repo's does.
    own_script: bool = False
    # What the generated prepare.sh does for this config in a mode (its chain's: `cpp_infer`,
    # `serving_infer`, ...): the steps the repo's prepare.sh takes for it, as a suite's `prepare`.
    prepare: dict[ModeName, list[PrepareStep]] = Field(default_factory=dict)

    def text(self) -> str:
        body = "\n".join(self.lines)
        return body + "\n" if self.final_newline else body

    def model_name(self, words: bool = False) -> str:
        """The value prepare.sh dispatches on: its second non-empty line's text after the first
        colon (tipc_value), as every layout's `model_name` line; `words`: that line's second word
        (tipc_word), as a C++ config gives it in its dialect's prepare_word_modes."""
        lines = [line for line in self.lines if line != ""]
        if len(lines) < 2:
            return ""
        if words:
            return second_word(lines[1])
        return lines[1].split(":", 1)[1] if ":" in lines[1] else ""

    def prepared_names(self, word_modes: tuple = ()) -> list[str]:
        """The names the generated prepare.sh dispatches this config on, in each mode it prepares
        it in (read by words in `word_modes`)."""
        return list(dict.fromkeys(self.model_name(mode in word_modes) for mode in self.prepare))


def prepare_word_modes(layout: Optional[str]) -> tuple:
    """The modes a layout's prepare.sh reads model_name by words in (Dialect.prepare_word_modes)."""
    from tipcgen.dialects import LAYOUTS

    found = LAYOUTS.get(layout) if isinstance(layout, str) else None
    return found.dialect.prepare_word_modes if found is not None else ()


class SpecFile(Model):
    """The top level of a spec file; `defaults` and `suites` are merged, then validated as Suites."""

    tipcgen: Literal[1] = 1
    model: Name
    layout: LayoutName
    # Which of the layout's runners the generated script follows (default: the dialect's first;
    # e.g. paddleocr: `ocr`, the seed-era script, or `ocr_head`, today's).
    runner: Optional[Name] = None
    # The folder of the spec's configs, relative to the repo root (default test_tipc/configs/<model>):
    # a repo's nested (configs/rotate/fcosr/) or other (--configs) folders keep their paths.
    configs: Optional[ConfigFolder] = None
    docs: DocsMeta = DocsMeta()
    prepare: dict[str, list[PrepareStep]] = Field(default_factory=dict)  # keys: checked by _prepare_modes
    # Keys are checked when each merged suite is validated (unknown keys are errors there).
    defaults: dict[str, Any] = Field(default_factory=dict)
    # Named partial suites between `defaults` and a suite that says `preset: NAME` (e.g. what
    # the amp configs of several models share).
    presets: dict[Name, Optional[dict[str, Any]]] = Field(default_factory=dict)
    suites: dict[SuiteName, dict[str, Any]] = Field(default_factory=dict)
    other_configs: dict[RawFileName, RawConfig] = Field(default_factory=dict)
    # `tipcgen bench`: the benchmark matrix and the convergence check (spec/bench.py); declared
    # after `suites`, so a validator can check the suite `bench` names.
    bench: Optional[Bench] = None
    convergence: Optional[Convergence] = None
    # The device variants `build` writes beside the runner (test_train_inference_python_npu.sh,
    # _xpu.sh: dialects/devices.py), each named as upstream's.
    devices: tuple[DeviceName, ...] = ()

    @field_validator("devices")
    @classmethod
    def _layout_devices(cls, devices, info):
        from tipcgen.dialects.devices import LOOKUP

        layout = info.data.get("layout")
        if len(set(devices)) != len(devices):
            raise ValueError("a device is named twice")
        for device in devices:
            if layout is not None and (layout, device) not in LOOKUP:
                have = sorted(lay for lay, dev in LOOKUP if dev == device)
                raise ValueError(f"layout {layout} has no {device} variant; the layouts with one: {', '.join(have)}")
        return devices

    @field_validator("prepare")
    @classmethod
    def _prepare_modes(cls, v):
        for mode in v:
            check_mode(mode)
        return v

    # A field validator (not the model's), so that the error is located at the `runner:` line;
    # `layout` is declared first, so it is in info.data when it is valid.
    @field_validator("runner")
    @classmethod
    def _known_runner(cls, runner, info):
        from tipcgen.dialects import get_layout

        layout = info.data.get("layout")
        if runner is None or layout is None:
            return runner
        runners = get_layout(layout).dialect.runners
        if runner not in runners:
            raise ValueError(f"runner {runner!r} is not one of layout {layout}'s runners: " + ", ".join(runners))
        return runner

    @field_validator("other_configs")
    @classmethod
    def _prepared_names(cls, configs, info):
        # prepare.sh dispatches on the name in a `case`: a config it prepares must give a plain
        # name, read as the generated prepare.sh reads it in each mode (`layout` is declared first)
        words = prepare_word_modes(info.data.get("layout"))
        for file, raw in configs.items():
            for name in raw.prepared_names(words):
                why = name_problem(name)
                if why:
                    raise ValueError(f"{file}: its model_name {name!r}, which prepare.sh dispatches on: {why}")
        return configs

    @model_validator(mode="after")
    def _has_configs(self):
        if not self.suites and not self.other_configs:
            raise ValueError("a spec needs at least one suite")
        return self

    @field_validator("bench")
    @classmethod
    def _bench_suite(cls, bench, info):
        suites = info.data.get("suites") or {}
        if bench is not None and bench.suite is not None and bench.suite not in suites:
            raise ValueError(f"bench names suite {bench.suite!r}; the suites are {', '.join(suites) or 'none'}")
        return bench

    @field_validator("convergence")
    @classmethod
    def _convergence_runs(cls, convergence, info):
        if convergence is not None and "bench" in info.data and info.data["bench"] is None:
            raise ValueError(
                "`convergence` runs like `bench` (its suite, device, first run mode): add a `bench` section"
            )
        return convergence


class Spec(Model):
    """A validated spec: the file's top level plus its merged suites."""

    source: str  # the spec's path (given by the caller, not by the spec)
    model: Name
    layout: str
    docs: DocsMeta
    prepare: dict[ModeName, list[PrepareStep]]
    runner: Optional[Name] = None
    suites: dict[SuiteName, Suite]
    other_configs: dict[RawFileName, RawConfig] = Field(default_factory=dict)
    bench: Optional[Bench] = None
    convergence: Optional[Convergence] = None
    configs: Optional[ConfigFolder] = None  # SpecFile.configs
    devices: tuple[DeviceName, ...] = ()  # SpecFile.devices

    @property
    def config_dir(self) -> str:
        """Where the spec's configs are, relative to the repo (or build output) root."""
        return self.configs or f"test_tipc/configs/{self.model}"

    def config_path(self, file: str) -> str:
        return f"{self.config_dir}/{file}"

    def suite_layout(self, name: str) -> str:
        return self.suites[name].layout or self.layout

    @property
    def train_suites(self) -> dict[str, Suite]:
        """The suites test_train_inference_python.sh runs (not another chain's configs)."""
        return {n: s for n, s in self.suites.items() if not is_chain_layout(s.layout)}

    @property
    def chain_suites(self) -> dict[str, Suite]:
        """The other chains' suites (paddle2onnx, C++, serving...): each run by its chain's script."""
        return {n: s for n, s in self.suites.items() if is_chain_layout(s.layout)}

    def prepare_for(self, suite_name: str, mode: str) -> list:
        """What prepare does for a suite's config in a mode: the suite's own steps, else the spec's."""
        own = self.suites[suite_name].prepare
        return list(own[mode] if mode in own else self.prepare.get(mode, []))

    def suite_of_file(self, file: str) -> Optional[str]:
        return next((name for name, s in self.suites.items() if s.file == file), None)

    def model_names(self) -> list[str]:
        """The model names prepare.sh dispatches on: the suites', then those of the verbatim configs
        it prepares (a serving config's own name, e.g. PaddleDetection's `..._KL`)."""
        seen: list[str] = []
        for s in self.suites.values():
            if s.model_name not in seen:
                seen.append(s.model_name)
        for raw in self.other_configs.values():
            seen += [n for n in raw.prepared_names(prepare_word_modes(self.layout)) if n not in seen]
        return seen
