"""The starter spec's comments in Chinese and English.

One language per file, chosen like the generated docs (`--lang`, else the repo's tipcgen.yml,
else zh): the maintainers of these repos read Chinese first, and a file that says everything
twice is twice as long to read while editing it.
"""

from __future__ import annotations

_TEXTS: dict[str, dict[str, str]] = {
    "head": {
        "zh": (
            "{model} 的 TIPC 起步规格（{family} 系列），由 `tipcgen new` 生成。\n"
            "先改标有 TODO 的值，然后运行：\n"
            "  tipcgen validate <本文件>      # 检查\n"
            "  tipcgen plan <本文件>          # 打印每一步的命令\n"
            "  tipcgen run <本文件> -m lite_train_lite_infer --dry-run\n"
            "  tipcgen build                  # 在仓库根目录生成 test_tipc/"
        ),
        "en": (
            "Starter TIPC spec of {model} (family {family}), written by `tipcgen new`.\n"
            "Edit the values marked TODO, then run:\n"
            "  tipcgen validate <this file>   # check it\n"
            "  tipcgen plan <this file>       # print every step's command\n"
            "  tipcgen run <this file> -m lite_train_lite_infer --dry-run\n"
            "  tipcgen build                  # at the repo root: writes test_tipc/"
        ),
    },
    "note": {"zh": "注意：{note}", "en": "Note: {note}"},
    "docs": {
        "zh": "文档里的算法名等（可选；生成的 docs/ 使用）。",
        "en": "What the generated docs say about the model (optional).",
    },
    "prepare": {
        "zh": "每种模式要下载/解压的数据与预训练权重（prepare.sh 和 `tipcgen prepare` 使用）。",
        "en": "Data and weights each mode downloads and unpacks (prepare.sh and `tipcgen prepare`).",
    },
    "file": {
        "zh": "生成的配置文件：test_tipc/configs/<model>/train_infer_python.txt",
        "en": "The generated config: test_tipc/configs/<model>/train_infer_python.txt",
    },
    "topology": {
        "zh": "每次训练用的 GPU：0 为单卡，[0, 1] 为单机两卡；多机写 {ips: [...], gpus: [...]}",
        "en": "GPUs of each training run: 0 one GPU, [0, 1] two on one node; several nodes: {ips: [...], gpus: [...]}",
    },
    "keys": {
        "zh": "key 是仓库脚本的参数名（本系列的惯例），value/values 是取值；按需修改。",
        "en": "`key` is the flag the repo's script takes (this family's usual one), value/values its values.",
    },
    "config": {"zh": "模型配置：{path}（在仓库中找到）", "en": "Model config: {path} (found in the repo)"},
    "todo_config": {
        "zh": "TODO：仓库中没有找到该模型的 YAML 配置，请改成它的路径",
        "en": "TODO: no YAML config of this model was found in the repo; put its path here",
    },
    "found": {"zh": "入口 {path}（在仓库中找到）", "en": "Entry point {path} (found in the repo)"},
    "todo_entry": {
        "zh": "TODO：仓库中没有找到该入口脚本，下面是本系列的惯例写法",
        "en": "TODO: no such entry point in the repo; this is the family's usual one",
    },
    "whole_infer": {
        "zh": "whole_infer 模式：用已训练好的权重导出并推理（可选）。",
        "en": "whole_infer mode: export and infer from trained weights (optional).",
    },
}


def say(lang: str, key: str, **values: str) -> str:
    text = _TEXTS[key][lang]
    for name, value in values.items():
        text = text.replace("{" + name + "}", value)
    return text
