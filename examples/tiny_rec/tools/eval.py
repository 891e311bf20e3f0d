"""Evaluate a trained checkpoint on the Eval split.

    python tools/eval.py -c configs/tiny_rec.yml -o Global.pretrained_model=./output/tiny_rec/latest
(Global.checkpoints is accepted as well.)
"""

import os
import sys
import time

__dir__ = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(__dir__, "..")))

import numpy as np  # noqa: E402
import paddle  # noqa: E402

from tinyrec.config import get_config  # noqa: E402
from tinyrec.data import CTCLabelEncode, SimpleDataSet, get_characters  # noqa: E402
from tinyrec.logger import get_logger  # noqa: E402
from tinyrec.model import build_model  # noqa: E402
from tinyrec.postprocess import CTCLabelDecode, RecMetric  # noqa: E402
from tinyrec.program import check_device, load_weights, resolve_weights  # noqa: E402


def main():
    cfg, _ = get_config(description="tiny_rec evaluation")
    g = cfg["Global"]
    log = get_logger()
    check_device(bool(g.get("use_gpu", False)))

    requested = g.get("checkpoints") or g.get("pretrained_model")
    prefix = resolve_weights(requested)
    if prefix is None:
        log.error("no weights found: set Global.pretrained_model or Global.checkpoints "
                  "to DIR/latest (got %r)", requested)
        return 1

    chars = get_characters(g)
    arch = cfg.get("Architecture", {})
    image_shape = list(arch.get("image_shape", [3, 32, 100]))
    encoder = CTCLabelEncode(chars, g.get("max_text_length", 8))
    ds = SimpleDataSet(cfg["Eval"]["dataset"], encoder, image_shape)
    bs = int(cfg["Eval"].get("loader", {}).get("batch_size_per_card", 32))

    model = build_model(arch, encoder.num_classes)
    load_weights(model, prefix)
    model.eval()
    log.info("loaded weights from %s", prefix)

    decode = CTCLabelDecode(chars)
    metric = RecMetric()
    t0 = time.time()
    with paddle.no_grad():
        for start in range(0, len(ds), bs):
            idx = list(range(start, min(start + bs, len(ds))))
            x = paddle.to_tensor(np.stack([ds.images[i] for i in idx]))
            preds = decode(model(x).numpy())
            metric.update(preds, [ds.texts[i] for i in idx])
    elapsed = time.time() - t0
    res = metric.get()
    log.info("metric eval ***************")
    log.info("acc: %.6f, norm_edit_dis: %.6f, fps: %.2f, samples: %d",
             res["acc"], res["norm_edit_dis"], len(ds) / max(elapsed, 1e-9), len(ds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
