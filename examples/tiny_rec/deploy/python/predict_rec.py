"""PaddleClas-style entry of the tiny_rec predictor, run from deploy/:

    cd deploy && python3 python/predict_rec.py -c configs/inference_rec.yaml \
        -o Global.inference_model_dir=./models/tiny_rec_infer -o Global.use_onnx=True

`-c` names a config whose `Global` keys are mapped to tools/infer/predict_rec.py's flags (the
same predictor, pre- and post-processing, output and AutoLog report); `-o Global.key=value`
overrides one key (repeatable; `-c=FILE` works too, as PaddleClas's test_paddle2onnx.sh passes it).
"""

import importlib.util
import os
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "../.."))
sys.path.insert(0, ROOT)

from tinyrec.config import ArgsParser, apply_overrides, load_config, parse_overrides  # noqa: E402
from tinyrec.logger import get_logger  # noqa: E402

# Global key -> the predictor's flag
FLAGS = {
    "infer_imgs": "--image_dir",
    "inference_model_dir": "--rec_model_dir",
    "batch_size": "--rec_batch_num",
    "use_gpu": "--use_gpu",
    "enable_mkldnn": "--enable_mkldnn",
    "cpu_num_threads": "--cpu_threads",
    "ir_optim": "--ir_optim",
    "enable_benchmark": "--benchmark",
    "use_onnx": "--use_onnx",
    "precision": "--precision",
}


def load_predictor():
    """tools/infer/predict_rec.py as a module (tools/ is not a package)."""
    path = os.path.join(ROOT, "tools", "infer", "predict_rec.py")
    spec = importlib.util.spec_from_file_location("tiny_rec_predict_rec", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    args = ArgsParser(description="tiny_rec inference (PaddleClas deploy style)").parse_args(argv)
    config = apply_overrides(load_config(args.config), parse_overrides(args.opt))
    glob = config.get("Global") or {}
    unknown = sorted(set(glob) - set(FLAGS))
    if unknown:
        get_logger().warning("Global keys not used by this predictor: %s", ", ".join(unknown))
    flags = ["%s=%s" % (FLAGS[key], glob[key]) for key in FLAGS if glob.get(key) is not None]
    return load_predictor().main(flags)


if __name__ == "__main__":
    sys.exit(main())
