"""Post-training static quantization (PTQ) of a trained tiny_rec model, PaddleClas-style.

    python tools/quant_post_static.py -c configs/tiny_rec.yml \
        -o Global.pretrained_model=./output/tiny_rec/latest Global.save_inference_dir=./inference/tiny_rec

Loads the weights, inserts abs-max observers on every Conv2D and Linear (Paddle's own
paddle.quantization.PTQ), calibrates them on Global.quant_batch_nums batches of the Eval split,
converts the model to quantize/dequantize ops and saves it to
SAVE_DIR/quant_post_static_model/: inference.pdmodel + inference.pdiparams (+ inference.yml), the
directory test_ptq_inference_python.sh runs the predictor on.

The program is saved in the legacy format (inference.pdmodel), not as Paddle 3's PIR
inference.json: under PIR, Paddle 3.3's quantize_linear refuses a dynamic batch dimension.
"""

import os
import sys

# Before paddle is imported: the quantized program is traced and saved without PIR (see above).
os.environ["FLAGS_enable_pir_api"] = "0"

__dir__ = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(__dir__, "..")))

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import yaml  # noqa: E402
from paddle.quantization import PTQ, QuantConfig  # noqa: E402
from paddle.quantization.observers import AbsmaxObserver  # noqa: E402

from tinyrec.config import get_config  # noqa: E402
from tinyrec.data import CTCLabelEncode, SimpleDataSet, get_characters  # noqa: E402
from tinyrec.logger import get_logger  # noqa: E402
from tinyrec.model import build_model  # noqa: E402
from tinyrec.program import load_weights, resolve_weights  # noqa: E402

QUANT_DIR = "quant_post_static_model"


def main():
    cfg, _ = get_config(description="tiny_rec post-training quantization")
    g = cfg["Global"]
    log = get_logger()
    paddle.set_device("cpu")

    requested = g.get("checkpoints") or g.get("pretrained_model")
    prefix = resolve_weights(requested)
    if prefix is None:
        log.error(
            "weights not found: %r (expected DIR/latest with DIR/latest.pdparams); "
            "set Global.pretrained_model or Global.checkpoints",
            requested,
        )
        return 1
    if not g.get("save_inference_dir"):
        log.error("Global.save_inference_dir is not set")
        return 1
    save_dir = os.path.join(str(g["save_inference_dir"]), QUANT_DIR)
    batch_nums = int(g.get("quant_batch_nums", 4))

    chars = get_characters(g)
    arch = cfg.get("Architecture", {})
    image_shape = [int(v) for v in arch.get("image_shape", [3, 32, 100])]
    encoder = CTCLabelEncode(chars, g.get("max_text_length", 8))
    ds = SimpleDataSet(cfg["Eval"]["dataset"], encoder, image_shape)
    bs = int(cfg["Eval"].get("loader", {}).get("batch_size_per_card", 32))

    model = build_model(arch, encoder.num_classes)
    try:
        load_weights(model, prefix)
    except Exception as exc:  # a truncated or foreign file: say which, exit 1
        log.error("cannot load weights from %s: %s", prefix, exc)
        return 1
    model.eval()

    # Only Conv2D and Linear: the LSTM's inner cells never run as layers of their own, so their
    # observers would see no data.
    config = QuantConfig(activation=None, weight=None)
    config.add_type_config(
        [paddle.nn.Conv2D, paddle.nn.Linear],
        activation=AbsmaxObserver(quant_bits=8),
        weight=AbsmaxObserver(quant_bits=8),
    )
    ptq = PTQ(config)
    observed = ptq.quantize(model, inplace=False)
    batches = 0
    with paddle.no_grad():
        for start in range(0, len(ds), bs):
            if batches >= batch_nums:
                break
            x = paddle.to_tensor(np.stack(ds.images[start : start + bs]))
            observed(x)
            batches += 1
    quantized = ptq.convert(observed, inplace=False)

    spec = [paddle.static.InputSpec(shape=[None] + image_shape, dtype="float32", name="x")]
    os.makedirs(save_dir, exist_ok=True)
    path = os.path.join(save_dir, "inference")
    paddle.jit.save(paddle.jit.to_static(quantized, input_spec=spec, full_graph=True), path)
    with open(path + ".yml", "w", encoding="utf-8") as f:
        yaml.safe_dump(
            {
                "Global": {"model_name": "tiny_rec", "model_type": "rec", "quantized": "ptq_abs_max_int8"},
                "PreProcess": {"image_shape": image_shape},
                "PostProcess": {"name": "CTCLabelDecode", "character_dict": list(chars)},
            },
            f,
            sort_keys=False,
        )
    files = sorted(fn for fn in os.listdir(save_dir) if fn.startswith("inference."))
    log.info(
        "quantized %s on %d calibration batches of %d; saved to %s: %s", prefix, batches, bs, save_dir, ", ".join(files)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
