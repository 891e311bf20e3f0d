"""Export a trained checkpoint to a Paddle inference model.

    python tools/export_model.py -c configs/tiny_rec.yml \
        -o Global.checkpoints=./output/tiny_rec/latest Global.save_inference_dir=./inference/tiny_rec

Writes SAVE_DIR/inference.json + SAVE_DIR/inference.pdiparams (Paddle 3 / PIR;
older Paddle writes inference.pdmodel instead) and SAVE_DIR/inference.yml, which
records the character list and input shape for tools/infer/predict_rec.py.
"""

import os
import sys

__dir__ = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(__dir__, "..")))

import paddle  # noqa: E402
import yaml  # noqa: E402

from tinyrec.config import get_config  # noqa: E402
from tinyrec.data import get_characters  # noqa: E402
from tinyrec.logger import get_logger  # noqa: E402
from tinyrec.model import build_model  # noqa: E402
from tinyrec.program import load_weights, resolve_weights  # noqa: E402


def main():
    cfg, _ = get_config(description="tiny_rec export")
    g = cfg["Global"]
    log = get_logger()
    paddle.set_device("cpu")  # exporting never needs an accelerator

    requested = g.get("checkpoints") or g.get("pretrained_model")
    prefix = resolve_weights(requested)
    if prefix is None:
        log.error("checkpoint not found: %r (expected DIR/latest with DIR/latest.pdparams); "
                  "set Global.checkpoints or Global.pretrained_model", requested)
        return 1
    save_dir = g.get("save_inference_dir")
    if not save_dir:
        log.error("Global.save_inference_dir is not set")
        return 1
    save_dir = str(save_dir)

    chars = get_characters(g)
    arch = cfg.get("Architecture", {})
    image_shape = [int(v) for v in arch.get("image_shape", [3, 32, 100])]
    model = build_model(arch, len(chars) + 1)
    load_weights(model, prefix)
    model.eval()

    spec = [paddle.static.InputSpec(shape=[None] + image_shape, dtype="float32", name="x")]
    static_model = paddle.jit.to_static(model, input_spec=spec, full_graph=True)
    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, "inference")
    paddle.jit.save(static_model, path)
    with open(path + ".yml", "w", encoding="utf-8") as f:
        yaml.safe_dump(
            {
                "Global": {"model_name": "tiny_rec", "model_type": "rec"},
                "PreProcess": {"image_shape": image_shape},
                "PostProcess": {"name": "CTCLabelDecode", "character_dict": list(chars)},
            },
            f,
            sort_keys=False,
        )
    files = sorted(fn for fn in os.listdir(save_dir) if fn.startswith("inference."))
    log.info("inference model from %s saved to %s: %s", prefix, save_dir, ", ".join(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
