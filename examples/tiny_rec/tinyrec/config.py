"""Config loading and PaddleOCR-style ``-o Key.Sub=Value`` overrides."""

import argparse
import copy

import yaml

from .logger import get_logger


class ArgsParser(argparse.ArgumentParser):
    """``-c CONFIG -o K.S=V K2=V2 ...`` (``-o`` may be repeated or empty)."""

    def __init__(self, description=None):
        super().__init__(description=description)
        self.add_argument("-c", "--config", required=True, help="YAML config file")
        self.add_argument(
            "-o",
            "--opt",
            nargs="*",
            action="extend",
            default=[],
            help="overrides: Global.epoch_num=3 Train.loader.batch_size_per_card=16",
        )
        self.add_argument(
            "-p",
            "--profiler_options",
            default=None,
            help="accepted for PaddleOCR compatibility; ignored",
        )

    def parse_args(self, argv=None):
        args, unknown = super().parse_known_args(argv)
        log = get_logger()
        # Tokens after -o that argparse left over are still overrides
        # (e.g. a value that starts with '-').
        for tok in unknown:
            if "=" in tok and not tok.startswith("-"):
                args.opt.append(tok)
            else:
                log.warning("ignoring unknown argument: %r", tok)
        return args


def parse_value(text):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def parse_overrides(opts):
    """['A.b=1', 'C=x'] -> [('A.b', 1), ('C', 'x')]; bad tokens skipped."""
    log = get_logger()
    out = []
    for tok in opts or []:
        tok = tok.strip()
        if not tok:
            continue
        if "=" not in tok:
            log.warning("ignoring override without '=': %r", tok)
            continue
        key, val = tok.split("=", 1)
        key = key.strip()
        if not key:
            log.warning("ignoring override with empty key: %r", tok)
            continue
        out.append((key, parse_value(val)))
    return out


def apply_overrides(config, overrides):
    """Set known dotted keys; unknown keys are ignored with a warning."""
    log = get_logger()
    config = copy.deepcopy(config)
    for key, value in overrides:
        parts = key.split(".")
        node = config
        ok = True
        for p in parts[:-1]:
            if isinstance(node, dict) and isinstance(node.get(p), dict):
                node = node[p]
            else:
                ok = False
                break
        if ok and isinstance(node, dict) and parts[-1] in node:
            node[parts[-1]] = value
        else:
            log.warning("unknown config key %s=%r ignored", key, value)
    return config


def load_config(path):
    with open(path, "r", encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    if not isinstance(cfg, dict):
        raise ValueError("config %s is not a mapping" % path)
    return cfg


def get_config(argv=None, description=None):
    parser = ArgsParser(description=description)
    args = parser.parse_args(argv)
    cfg = load_config(args.config)
    cfg = apply_overrides(cfg, parse_overrides(args.opt))
    return cfg, args
