"""The Spec: tipcgen's typed IR of a model's TIPC suites.

Fields carry meaning (epochs per mode, trainers, inference matrix), never line
numbers: a line number exists only inside a layout table (layouts.py).

A spec file holds `defaults` (a partial suite) and `suites` (partial suites);
each suite is the deep merge of the two, validated as a full `Suite`.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from .modes import MODES
from .prepare_spec import PrepareStep

# A legacy value: what YAML gives us, rendered to config text by `text()`.
Scalar = Union[bool, int, float, str]

# Characters that upstream scripts would interpret when they `eval` a command.
SHELL_META = re.compile(r"[;&|<>`$\\\n\r\t]")
SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


def text(value: Optional[Scalar]) -> str:
    """Render a YAML scalar as legacy config text (None -> `null`)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, float):
        return repr(value)
    return str(value)


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; modes are {', '.join(MODES)}")


def _no_shell_meta(value: Optional[Scalar], what: str) -> Optional[Scalar]:
    if isinstance(value, str) and SHELL_META.search(value):
        bad = SHELL_META.search(value).group(0)
        raise ValueError(
            f"{what} contains {bad!r}; upstream scripts `eval` it, so shell metacharacters"
            " (; & | < > ` $ \\ and control characters) are not allowed"
        )
    return value


class Flag(Model):
    """One `key:value` line. `key: null` or `value: null` disable the flag."""

    key: Optional[str] = None
    value: Optional[Scalar] = None

    @field_validator("key", "value")
    @classmethod
    def _meta(cls, v):
        return _no_shell_meta(v, "value")

    def line(self) -> tuple[str, str]:
        return text(self.key), text(self.value)


class ListFlag(Model):
    """A `key:a|b|c` line: the script loops over the values."""

    key: Optional[str] = None
    values: list[Scalar] = Field(default_factory=list)

    @field_validator("values")
    @classmethod
    def _meta(cls, v):
        for item in v:
            _no_shell_meta(item, "list value")
            if isinstance(item, str) and "|" in item:
                raise ValueError("a list value may not contain `|`: it separates the values")
        return v

    def line(self) -> tuple[str, str]:
        return text(self.key), "|".join(text(v) for v in self.values)


class ModeFlag(Model):
    """A `key:lite_train_lite_infer=3|whole_train_whole_infer=50` line.

    `value` instead of `by_mode` keeps a plain value found where a table belongs (upstream
    configs have them; the scripts then drop the flag in every mode, and lint says so).
    """

    key: Optional[str] = None
    by_mode: dict[str, Scalar] = Field(default_factory=dict)
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
            if mode == "whole_infer":
                raise ValueError("whole_infer does not train; give epochs/batch sizes for the training modes")
            _no_shell_meta(value, "mode value")
            if isinstance(value, str) and ("|" in value or "=" in value):
                raise ValueError("a mode value may not contain `|` or `=`")
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
            try:
                ipaddress.IPv4Address(ip)
            except ValueError:
                raise ValueError(f"{ip!r} is not an IPv4 address") from None
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


TargetIn = Annotated[Target, BeforeValidator(_target_shorthand)]


class Trainer(Model):
    """A trainer slot: its name (the key on its line), train command and export command."""

    name: Optional[str] = None
    train: Optional[str] = None
    export_name: Optional[str] = None
    export: Optional[str] = None

    @field_validator("train", "export")
    @classmethod
    def _meta(cls, v):
        return _no_shell_meta(v, "command")


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
    run: list[str] = Field(default_factory=lambda: ["norm_train"])

    @field_validator("run")
    @classmethod
    def _run(cls, v):
        for name in v:
            if not SAFE_NAME.match(name):
                raise ValueError(f"trainer name {name!r} must be letters, digits, `._+-`")
        return v


class Eval(Model):
    command: Optional[str] = None
    extra: Optional[Flag] = None

    @field_validator("command")
    @classmethod
    def _meta(cls, v):
        return _no_shell_meta(v, "command")


class Export(Model):
    save_dir: Optional[Flag] = None
    weights: Optional[Flag] = None
    inference_dir: Optional[Scalar] = None
    model_url: Optional[Scalar] = None  # PaddleClas: pretrained_model_url


class InferModel(Model):
    """A released inference model tested in whole_infer mode."""

    model: Optional[Scalar] = None
    export: Optional[Scalar] = None
    quant: Optional[Scalar] = False


class Inference(Model):
    script: Optional[str] = None
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

    @field_validator("script")
    @classmethod
    def _meta(cls, v):
        return _no_shell_meta(v, "command")


class Trivia(Model):
    """Bytes of the legacy file that carry no meaning (or no typed meaning) but must round-trip.

    The importer fills these so that `import` then `build` reproduces a config byte for byte;
    `lint` reports the ones that are defects.
    """

    final_newline: bool = True
    headers: dict[str, str] = Field(default_factory=dict)  # section name -> exact header line
    # Script line index (empty lines not counted, as the scripts count) -> exact text, for lines
    # that no typed field reproduces (shifted keys, values the Spec rejects, odd separators).
    line_overrides: dict[int, str] = Field(default_factory=dict)
    core_lines: Optional[int] = None  # a truncated file: only the first N layout lines
    tail: Optional[list[str]] = None  # lines after the layout's core, verbatim (replaces sections)
    blank_lines: list[int] = Field(default_factory=list)  # physical line numbers (0-based) of empty lines
    bom: bool = False
    crlf: bool = False


class Suite(Model):
    """One legacy config file (e.g. the normal or the fleet suite of a model)."""

    file: str
    doc: Optional[str] = None
    layout: Optional[Literal["paddleocr", "paddleclas", "paddleseg", "paddlevideo", "models"]] = None
    model_name: str
    python: str = "python3.7"
    topology: list[TargetIn] = Field(min_length=1)
    train: Train = Train()
    trainers: Trainers = Trainers()
    eval: Eval = Eval()
    export: Export = Export()
    whole_infer: list[InferModel] = Field(default_factory=list)
    inference: Inference = Inference()
    sections: dict[str, dict[str, Optional[Scalar]]] = Field(default_factory=dict)
    trivia: Trivia = Trivia()
    # Lint rules (ids like TIPC011) whose error this suite keeps on purpose, e.g. an imported
    # upstream config that must stay byte-identical. Without it such a defect fails validation.
    allow: list[str] = Field(default_factory=list)

    @field_validator("allow")
    @classmethod
    def _rules(cls, v):
        from .lint import RULES

        for rule in v:
            if rule not in RULES:
                raise ValueError(f"unknown lint rule {rule!r}; rules are TIPC001..TIPC{len(RULES):03d}")
        return v

    @field_validator("model_name")
    @classmethod
    def _name(cls, v):
        if not v:
            raise ValueError("model_name is empty")
        if not SAFE_NAME.match(v):
            raise ValueError(
                f"model_name {v!r} must be letters, digits and `._+-` (it names directories and is"
                " interpolated into shell commands)"
            )
        return v

    @field_validator("python")
    @classmethod
    def _python(cls, v):
        if not v.strip():
            raise ValueError("python is empty")
        return _no_shell_meta(v, "python")

    @field_validator("file")
    @classmethod
    def _file(cls, v):
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9._+-]*\.txt$", v):
            raise ValueError(f"file {v!r} must be a plain `*.txt` file name (no directories)")
        return v

    @property
    def gpu_list(self) -> str:
        return "|".join(t.entry() for t in self.topology)

    @property
    def is_fleet(self) -> bool:
        return any(t.nodes > 1 for t in self.topology)

    def doc_name(self, suite_name: str) -> str:
        """docs/ file of this suite: `doc`, else named after the suite key like upstream's
        (normal -> test_train_inference_python.md, fleet -> test_train_fleet_inference_python.md)."""
        if self.doc:
            return self.doc
        if suite_name == "normal":
            return "test_train_inference_python.md"
        return f"test_train_{suite_name}_inference_python.md"


class DocsMeta(Model):
    """What the generated docs say beyond what the suites imply."""

    algorithm: Optional[str] = None
    # Devices the inference table claims; default: what the suite's use_gpu list tests.
    inference_devices: Optional[list[Literal["cpu", "gpu"]]] = None


class RawConfig(Model):
    """A config of a kind the Spec does not model field by field (serving, cpp, lite, ptq...):
    kept verbatim so it round-trips, and written beside the suites' configs."""

    lines: list[str]
    final_newline: bool = True

    @field_validator("lines")
    @classmethod
    def _no_newlines(cls, v):
        if any("\n" in line for line in v):
            raise ValueError("a line may not contain a newline")
        return v

    def text(self) -> str:
        body = "\n".join(self.lines)
        return body + "\n" if self.final_newline else body


class SpecFile(Model):
    """The top level of a spec file; `defaults` and `suites` are merged, then validated as Suites."""

    tipcgen: Literal[1] = 1
    model: str
    layout: Literal["paddleocr", "paddleclas", "paddleseg", "paddlevideo", "models"]
    docs: DocsMeta = DocsMeta()
    prepare: dict[str, list[PrepareStep]] = Field(default_factory=dict)
    defaults: dict[str, Any] = Field(default_factory=dict)
    suites: dict[str, dict[str, Any]] = Field(default_factory=dict)
    other_configs: dict[str, "RawConfig"] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _has_configs(self):
        if not self.suites and not self.other_configs:
            raise ValueError("a spec needs at least one suite")
        return self

    @field_validator("model")
    @classmethod
    def _model(cls, v):
        if not SAFE_NAME.match(v or ""):
            raise ValueError(f"model {v!r} must be letters, digits and `._+-` (it names a directory)")
        return v

    @field_validator("prepare")
    @classmethod
    def _prepare_modes(cls, v):
        for mode in v:
            check_mode(mode)
        return v


class Spec(Model):
    """A validated spec: the file's top level plus its merged suites."""

    source: str
    model: str
    layout: str
    docs: DocsMeta
    prepare: dict[str, list[PrepareStep]]
    suites: dict[str, Suite]
    other_configs: dict[str, RawConfig] = Field(default_factory=dict)

    def suite_layout(self, name: str) -> str:
        return self.suites[name].layout or self.layout

    def model_names(self) -> list[str]:
        seen: list[str] = []
        for s in self.suites.values():
            if s.model_name not in seen:
                seen.append(s.model_name)
        return seen
