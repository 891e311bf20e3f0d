"""Emitters: Spec in, files (path -> bytes) out. Pure and deterministic; only cli.py writes."""

from __future__ import annotations

import os
import shlex
from functools import lru_cache
from importlib import resources

import jinja2

from .configview import ABSENT, ConfigView
from .docs import doc_context
from .errors import Problem, SpecError
from .layouts import Layout, get_layout
from .lower import config_text
from .plan import AMP_FLAGS, LOG_NAME_ROLES, MATRIX_ROLES, MAX_MATRIX, check_bytes, check_view
from .prepare import prepare_context
from .spec import Spec

# Shell variable <- (key|value of) the line holding a role, per script family.
# The names follow upstream's scripts so the generated bash reads like theirs.
_COMMON_READS = [
    ("model_name", "value", "model_name"),
    ("python", "value", "python"),
    ("gpu_list", "value", "gpu_list"),
    ("epoch_key", "key", "train.epochs"),
    ("epoch_value", "value", "train.epochs"),
    ("save_model_key", "key", "train.save_dir"),
    ("train_batch_key", "key", "train.batch_size"),
    ("train_batch_table", "value", "train.batch_size"),
    ("pretrain_model_key", "key", "train.pretrained"),
    ("pretrain_model_value", "value", "train.pretrained"),
    ("train_model_name", "value", "train.model_file"),
    ("trainer_list", "value", "train.run"),
    ("norm_trainer", "value", "trainer.norm.train"),
    ("eval_py", "value", "eval.command"),
    ("save_infer_key", "key", "export.save_dir"),
    ("export_weight", "key", "export.weights"),
    ("norm_export", "value", "trainer.norm.export"),
    ("inference_py", "value", "inference.script"),
    ("use_gpu_key", "key", "inference.use_gpu"),
    ("use_gpu_list", "value", "inference.use_gpu"),
    ("batch_size_key", "key", "inference.batch_size"),
    ("batch_size_list", "value", "inference.batch_size"),
    ("infer_model_key", "key", "inference.model_dir"),
    ("image_dir_key", "key", "inference.data"),
    ("infer_img_dir", "value", "inference.data"),
    ("benchmark_key", "key", "inference.benchmark"),
    ("benchmark_value", "value", "inference.benchmark"),
]
READS = {
    "ocr": _COMMON_READS + [
        ("train_use_gpu_key", "key", "train.device"),
        ("train_use_gpu_value", "value", "train.device"),
        ("autocast_key", "key", "train.autocast"),
        ("autocast_list", "value", "train.autocast"),
        ("train_infer_img_dir", "value", "train.infer_img_dir"),
        ("train_param_key1", "key", "train.extra"),
        ("train_param_value1", "value", "train.extra"),
        ("pact_key", "key", "trainer.pact.train"),
        ("pact_trainer", "value", "trainer.pact.train"),
        ("fpgm_key", "key", "trainer.fpgm.train"),
        ("fpgm_trainer", "value", "trainer.fpgm.train"),
        ("distill_key", "key", "trainer.distill.train"),
        ("distill_trainer", "value", "trainer.distill.train"),
        ("trainer_key1", "key", "trainer.slot1.train"),
        ("trainer_value1", "value", "trainer.slot1.train"),
        ("trainer_key2", "key", "trainer.slot2.train"),
        ("trainer_value2", "value", "trainer.slot2.train"),
        ("eval_key1", "key", "eval.extra"),
        ("eval_value1", "value", "eval.extra"),
        ("pact_export", "value", "trainer.pact.export"),
        ("fpgm_export", "value", "trainer.fpgm.export"),
        ("distill_export", "value", "trainer.distill.export"),
        ("export_value1", "value", "trainer.slot1.export"),
        ("export_value2", "value", "trainer.slot2.export"),
        ("inference_dir", "value", "export.inference_dir"),
        ("infer_model_dir_list", "value", "whole_infer.models"),
        ("infer_export_list", "value", "whole_infer.exports"),
        ("infer_is_quant", "value", "whole_infer.quant"),
        ("use_mkldnn_key", "key", "inference.mkldnn"),
        ("use_mkldnn_list", "value", "inference.mkldnn"),
        ("cpu_threads_key", "key", "inference.threads"),
        ("cpu_threads_list", "value", "inference.threads"),
        ("use_trt_key", "key", "inference.tensorrt"),
        ("use_trt_list", "value", "inference.tensorrt"),
        ("precision_key", "key", "inference.precision"),
        ("precision_list", "value", "inference.precision"),
        ("save_log_key", "key", "inference.save_log"),
        ("infer_key1", "key", "inference.extra"),
        ("infer_value1", "value", "inference.extra"),
    ],
    "models": _COMMON_READS + [
        ("save_infer_dir", "value", "export.save_dir"),
        ("infer_model_dir", "value", "whole_infer.models"),
        ("infer_export", "value", "whole_infer.exports"),
    ],
}


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    root = resources.files("tipcgen.templates")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(root)),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        # bash's `${#array[@]}` would open a Jinja comment
        comment_start_string="<#--",
        comment_end_string="--#>",
    )
    env.filters["sh"] = shlex.quote
    return env


def render(template: str, **ctx) -> str:
    return _env().get_template(template).render(**ctx)


def spec_label(path: str) -> str:
    """The spec's path as the generated headers name it: stable across machines."""
    rel = os.path.relpath(path) if os.path.isabs(path) else path
    return os.path.basename(path) if rel.startswith("..") else rel.replace(os.sep, "/")


def banner(spec: Spec) -> str:
    return (f"Generated by tipcgen from {spec_label(spec.source)}. Do not edit: change the spec "
            "and run `tipcgen build`.")


def runner_script(layout: Layout, banner_text: str) -> tuple[str, str]:
    """(test_train_inference_python.sh, common_func.sh) for a layout."""
    fam = layout.dialect.family
    reads = [(var, kind, role) for var, kind, role in READS[fam] if layout.index(role) is not None]
    absent = [(var, ABSENT.get(role, "")) for var, kind, role in READS[fam] if layout.index(role) is None]
    value_var = {role: var for var, kind, role in READS[fam] if kind == "value"}
    ctx = dict(banner=banner_text, layout=layout, ocr=fam == "ocr", amp_flags=AMP_FLAGS,
               reads=[(var, kind, layout.index(role)) for var, kind, role in reads], absent=absent,
               log_names=[(role, value_var[role]) for role in LOG_NAME_ROLES[fam]],
               matrix_vars=[value_var[role] for role in MATRIX_ROLES[fam]], max_matrix=MAX_MATRIX)
    return render("test_train_inference_python.sh.j2", **ctx), render("common_func.sh.j2", **ctx)


def config_files(spec: Spec) -> dict[str, str]:
    """The spec's legacy config files (suites and verbatim other configs), keyed by relative path."""
    files: dict[str, str] = {}
    for name, suite in spec.suites.items():
        files[f"test_tipc/configs/{spec.model}/{suite.file}"] = config_text(suite, get_layout(spec.suite_layout(name)))
    for file, raw in spec.other_configs.items():
        path = f"test_tipc/configs/{spec.model}/{file}"
        if path in files:
            raise SpecError([Problem(spec.source, None, None, f"other_configs.{file}",
                                     "a suite already writes this config file")])
        files[path] = raw.text()
    return files


def check_suites(spec: Spec, files: dict[str, str]) -> None:
    """Refuse a suite whose config the generated runner would refuse (plan.check_bytes and
    check_view: logs outside test_tipc/output/, control bytes, a step matrix too large), at
    build time rather than at run time."""
    layout = get_layout(spec.layout)  # the layout the generated bash reads every config with
    for name, suite in spec.suites.items():
        text = files[f"test_tipc/configs/{spec.model}/{suite.file}"]
        label = f"{spec.source} [suite {name}: {suite.file}]"
        check_bytes(text, label)
        check_view(ConfigView.parse(text, layout), label)


def build_files(spec: Spec, lang: str = "zh") -> dict[str, bytes]:
    """Every file of the spec's test_tipc/ tree, keyed by relative path."""
    layout = get_layout(spec.layout)
    files = config_files(spec)
    check_suites(spec, files)
    docs_owner: dict[str, str] = {}
    for name, suite in spec.suites.items():
        doc = suite.doc_name(name)
        if doc in docs_owner:
            raise SpecError([Problem(spec.source, None, None, f"suites.{name}.doc",
                                     f"suites {docs_owner[doc]!r} and {name!r} would both write docs/{doc}",
                                     "give one of them its own `doc:` file name")])
        docs_owner[doc] = name
    text_banner = banner(spec)
    script, common = runner_script(layout, text_banner)
    files["test_tipc/test_train_inference_python.sh"] = script
    files["test_tipc/common_func.sh"] = common
    files["test_tipc/prepare.sh"] = render("prepare.sh.j2", **prepare_context(spec, layout, text_banner))
    for name, suite in spec.suites.items():
        ctx = doc_context(spec, name, layout, lang, text_banner, spec_label(spec.source))
        files[f"test_tipc/docs/{suite.doc_name(name)}"] = render("doc.md.j2", **ctx)
    return {path: content.encode("utf-8") for path, content in sorted(files.items())}
