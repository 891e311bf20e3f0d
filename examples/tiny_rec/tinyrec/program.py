"""Shared plumbing for the tools: device check, seeding, checkpoints."""

import os
import random
import sys

import numpy as np
import paddle

from .logger import get_logger


def check_device(use_gpu):
    """Fail clearly when a GPU is requested from a CPU-only paddle build."""
    log = get_logger()
    if use_gpu and not paddle.is_compiled_with_cuda():
        log.error(
            "Config use_gpu cannot be set as true while you are using "
            "paddlepaddle cpu version; set Global.use_gpu=False"
        )
        sys.exit(1)
    paddle.set_device("gpu" if use_gpu else "cpu")


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    paddle.seed(seed)


def resolve_weights(path):
    """'dir/latest', 'dir/latest.pdparams' or 'dir' -> 'dir/latest' prefix, or None."""
    if not path:
        return None
    path = str(path)
    if path.endswith(".pdparams"):
        path = path[: -len(".pdparams")]
    if os.path.isfile(path + ".pdparams"):
        return path
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "latest.pdparams")):
        return os.path.join(path, "latest")
    return None


def load_weights(model, prefix):
    state = paddle.load(prefix + ".pdparams")
    missing = model.set_state_dict(state)
    return missing


def param_checksum(model):
    """Sum over trainable parameters of sum(|p|), in float64."""
    total = 0.0
    for p in model.parameters():
        if p.stop_gradient:
            continue
        total += float(np.abs(p.numpy().astype(np.float64)).sum())
    return total
