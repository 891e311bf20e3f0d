"""Run an exported tiny_rec model with paddle.inference (PaddleOCR-compatible CLI).

    python tools/infer/predict_rec.py --use_gpu=False --enable_mkldnn=False \
        --cpu_threads=2 --rec_model_dir=./inference/tiny_rec --rec_batch_num=6 \
        --image_dir=./inference/rec_inference --benchmark=True --precision=fp32

Prints ``Predicts of <path>:('<text>', <score>)`` per image and, with
--benchmark=True, an AutoLog-style report of measured timings.

``--use_onnx=True`` runs the model converted by paddle2onnx with onnxruntime instead
(CPU only): ``--rec_model_dir`` is then the .onnx file or a directory holding
``inference.onnx``; pre- and post-processing are the same, and paddle is not imported.
"""

import argparse
import os
import platform
import sys
import time

__dir__ = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(__dir__, "../..")))

import numpy as np  # noqa: E402
import yaml  # noqa: E402

from tinyrec import DEFAULT_CHARACTERS  # noqa: E402
from tinyrec.data import read_image, resize_norm_img  # noqa: E402
from tinyrec.logger import get_logger  # noqa: E402
from tinyrec.postprocess import CTCLabelDecode  # noqa: E402

IMG_EXTS = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".gif", ".webp"}

logger = get_logger()


def str2bool(v):
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("true", "t", "yes", "y", "1"):
        return True
    if s in ("false", "f", "no", "n", "0", "none", ""):
        return False
    raise argparse.ArgumentTypeError("expected a boolean, got %r" % v)


def build_parser():
    p = argparse.ArgumentParser(description="tiny_rec inference")
    p.add_argument("--use_gpu", type=str2bool, default=False)
    p.add_argument("--use_xpu", type=str2bool, default=False)
    p.add_argument("--use_npu", type=str2bool, default=False)
    p.add_argument("--gpu_mem", type=int, default=500)
    p.add_argument("--gpu_id", type=int, default=0)
    p.add_argument("--ir_optim", type=str2bool, default=True)
    p.add_argument("--use_tensorrt", type=str2bool, default=False)
    p.add_argument("--min_subgraph_size", type=int, default=15)
    p.add_argument("--precision", type=str, default="fp32")
    p.add_argument("--enable_mkldnn", type=str2bool, default=False)
    p.add_argument("--cpu_threads", type=int, default=10)
    p.add_argument("--image_dir", type=str, required=True)
    p.add_argument("--rec_model_dir", type=str, required=True)
    p.add_argument("--rec_algorithm", type=str, default="CRNN")
    p.add_argument("--rec_image_shape", type=str, default=None)
    p.add_argument("--rec_batch_num", type=int, default=6)
    p.add_argument("--rec_char_dict_path", type=str, default=None)
    p.add_argument("--use_space_char", type=str2bool, default=False)
    p.add_argument("--max_text_length", type=int, default=25)
    p.add_argument("--benchmark", type=str2bool, default=False)
    p.add_argument("--warmup", type=str2bool, default=True)
    p.add_argument("--save_log_path", type=str, default=None)
    p.add_argument("--show_log", type=str2bool, default=True)
    p.add_argument("--use_onnx", type=str2bool, default=False)
    return p


def image_list(path):
    if os.path.isfile(path):
        return [path]
    if not os.path.isdir(path):
        return []
    out = []
    for fn in sorted(os.listdir(path)):
        full = os.path.join(path, fn)
        if os.path.isfile(full) and os.path.splitext(fn)[1].lower() in IMG_EXTS:
            out.append(full)
    return out


def find_model_files(model_dir):
    params = os.path.join(model_dir, "inference.pdiparams")
    for name in ("inference.json", "inference.pdmodel"):
        model = os.path.join(model_dir, name)
        if os.path.isfile(model) and os.path.isfile(params):
            return model, params
    return None, None


def find_onnx_file(model_path):
    """The .onnx file --rec_model_dir names (PaddleOCR passes the file, PaddleClas the directory
    holding inference.onnx), or None."""
    if os.path.isdir(model_path):
        model_path = os.path.join(model_path, "inference.onnx")
    return model_path if os.path.isfile(model_path) and model_path.endswith(".onnx") else None


def load_model_meta(model_dir, args):
    chars, shape = DEFAULT_CHARACTERS, [3, 32, 100]
    meta_path = os.path.join(model_dir, "inference.yml")
    if os.path.isfile(meta_path):
        with open(meta_path, "r", encoding="utf-8") as f:
            meta = yaml.safe_load(f) or {}
        chars = "".join(meta.get("PostProcess", {}).get("character_dict") or chars)
        shape = list(meta.get("PreProcess", {}).get("image_shape") or shape)
    if args.rec_char_dict_path:
        with open(args.rec_char_dict_path, "r", encoding="utf-8") as f:
            chars = "".join(ln.rstrip("\r\n") for ln in f if ln.rstrip("\r\n"))
    if args.rec_image_shape:
        try:
            req = [int(v) for v in args.rec_image_shape.replace('"', "").split(",")]
        except ValueError:
            req = None
        if req != shape:
            logger.warning("--rec_image_shape=%s ignored; the model expects %s",
                           args.rec_image_shape, ",".join(map(str, shape)))
    return chars, shape


def rss_mb():
    try:
        with open("/proc/self/status", "r") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def os_version():
    try:
        info = {}
        with open("/etc/os-release", "r") as f:
            for line in f:
                if "=" in line:
                    k, v = line.rstrip("\n").split("=", 1)
                    info[k] = v.strip('"')
        if info.get("NAME"):
            return ("%s %s" % (info["NAME"], info.get("VERSION_ID", ""))).strip()
    except OSError:
        pass
    return platform.platform()


class TextRecognizer:
    def __init__(self, args, inference):
        model_dir = args.rec_model_dir
        if args.use_onnx and not os.path.isdir(model_dir):
            model_dir = os.path.dirname(model_dir) or "."  # inference.yml lies beside the .onnx
        self.chars, self.image_shape = load_model_meta(model_dir, args)
        self.decode = CTCLabelDecode(self.chars)
        self.batch_num = max(1, args.rec_batch_num)
        if args.use_onnx:
            self._init_onnx(args, inference)
        else:
            self._init_paddle(args, inference)

    def _init_onnx(self, args, ort):
        options = ort.SessionOptions()
        options.intra_op_num_threads = args.cpu_threads
        options.log_severity_level = 3  # errors only: the log holds the predictions
        self.session = ort.InferenceSession(
            find_onnx_file(args.rec_model_dir), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self.input_name = self.session.get_inputs()[0].name
        self.conf_status = {
            "runtime_device": "cpu",
            "inference_engine": "onnxruntime",
            "onnxruntime_version": ort.__version__,
            "enable_tensorrt": False,
            "enable_mkldnn": False,
            "cpu_math_library_num_threads": args.cpu_threads,
        }

    def _init_paddle(self, args, inference):
        model_file, params_file = find_model_files(args.rec_model_dir)

        config = inference.Config(model_file, params_file)
        if args.use_gpu:
            config.enable_use_gpu(args.gpu_mem, args.gpu_id)
        else:
            config.disable_gpu()
            config.set_cpu_math_library_num_threads(args.cpu_threads)
            if args.enable_mkldnn:
                config.set_mkldnn_cache_capacity(10)
                config.enable_mkldnn()
            else:
                config.disable_mkldnn()
        if model_file.endswith(".json"):
            # PIR programs: without this, enable_memory_optim() makes
            # create_predictor fail ("Not find predictor_id 0 and pass_name
            # memory_optimize_pass") on paddle 3.x.
            config.enable_new_ir(True)
            config.enable_new_executor(True)
        config.switch_ir_optim(args.ir_optim)
        config.enable_memory_optim()
        config.disable_glog_info()
        config.switch_use_feed_fetch_ops(False)
        self.config = config
        self.conf_status = {
            "runtime_device": "gpu" if args.use_gpu else "cpu",
            "ir_optim": config.ir_optim(),
            "enable_memory_optim": True,
            "enable_tensorrt": config.tensorrt_engine_enabled(),
            "enable_mkldnn": config.mkldnn_enabled(),
            "cpu_math_library_num_threads": config.cpu_math_library_num_threads(),
        }
        self.predictor = inference.create_predictor(config)
        self.input = self.predictor.get_input_handle(self.predictor.get_input_names()[0])
        self.output = self.predictor.get_output_handle(self.predictor.get_output_names()[0])

    def run_batch(self, images):
        """images: list of HWC uint8 arrays -> (results, (pre_s, infer_s, post_s))."""
        t0 = time.perf_counter()
        batch = np.stack([resize_norm_img(im, self.image_shape) for im in images])
        t1 = time.perf_counter()
        if hasattr(self, "session"):
            probs = self.session.run(None, {self.input_name: batch})[0]
        else:
            self.input.reshape(list(batch.shape))
            self.input.copy_from_cpu(batch)
            self.predictor.run()
            probs = self.output.copy_to_cpu()
        t2 = time.perf_counter()
        res = self.decode(probs)
        t3 = time.perf_counter()
        return res, (t1 - t0, t2 - t1, t3 - t2)


def report(args, rec, paddle_mod, n_images, n_batches, times, total_s):
    """The AutoLog block; `paddle_mod` is None for an onnxruntime run (paddle not imported)."""
    if paddle_mod is None:
        version, commit = "None", "None"
    else:
        import paddle.version as pv

        version, commit = paddle_mod.__version__, getattr(pv, "commit", "None")
    div = max(n_batches, 1)
    pre, inf, post = (1000.0 * t / div for t in times)
    lines = [
        "---------------------- Env info ----------------------",
        " OS_version: %s" % os_version(),
        " CUDA_version: None",
        " CUDNN_version: None",
        " drivier_version: None",
        "---------------------- Paddle info ----------------------",
        " paddle_version: %s" % version,
        " paddle_commit: %s" % commit,
        " log_api_version: 1.0",
        "----------------------- Conf info -----------------------",
    ]
    lines += [" %s: %s" % (k, v) for k, v in rec.conf_status.items()]
    lines += [
        "----------------------- Model info ----------------------",
        " model_name: rec",
        " precision: %s" % args.precision,
        "----------------------- Data info -----------------------",
        " batch_size: %d" % args.rec_batch_num,
        " input_shape: dynamic",
        " data_num: %d" % n_images,
        "----------------------- Perf info -----------------------",
        " cpu_rss(MB): %s, gpu_rss(MB): None, gpu_util: None%%" % round(rss_mb(), 3),
        " total time spent(s): %s" % round(total_s, 4),
        " preprocess_time(ms): %s, inference_time(ms): %s, postprocess_time(ms): %s"
        % (round(pre, 4), round(inf, 4), round(post, 4)),
    ]
    for ln in lines:
        logger.info(ln)


def main(argv=None):
    args, unknown = build_parser().parse_known_args(argv)
    for tok in unknown:
        logger.warning("ignoring unknown argument %s", tok)
    if args.save_log_path:
        log_file = args.save_log_path
        if not log_file.endswith(".log"):
            log_file = os.path.join(log_file, "predict_rec.log")
        get_logger(log_file=log_file)

    if args.use_onnx:
        return run_onnx(args)
    import paddle
    from paddle import inference

    if args.use_gpu and not paddle.is_compiled_with_cuda():
        logger.error("--use_gpu=True but this paddlepaddle build has no CUDA support; "
                     "use --use_gpu=False")
        return 1
    if args.use_xpu or args.use_npu:
        logger.error("--use_xpu/--use_npu are not supported by this example")
        return 1
    if args.use_tensorrt and not args.use_gpu:
        logger.warning("--use_tensorrt=True ignored on CPU")
    if args.precision not in ("fp32", "fp16", "int8"):
        logger.error("unsupported --precision=%s", args.precision)
        return 1
    if args.precision != "fp32":
        logger.warning("--precision=%s: running the fp32 program (no quantised model)", args.precision)

    model_file, _ = find_model_files(args.rec_model_dir)
    if model_file is None:
        logger.error("no inference model in %r: expected inference.json (or inference.pdmodel) "
                     "and inference.pdiparams; run tools/export_model.py first", args.rec_model_dir)
        return 1
    files = image_list(args.image_dir)
    if not files:
        logger.error("no images found at %r", args.image_dir)
        return 1

    return predict(args, files, TextRecognizer(args, inference), paddle)


def predict(args, files, rec, paddle_mod):
    """Recognise `files` in batches, print each result and (with --benchmark) the AutoLog block."""
    bs = rec.batch_num

    if args.benchmark and args.warmup:
        rng = np.random.RandomState(0)
        c, h, w = rec.image_shape
        dummy = rng.randint(0, 256, size=(h, w, 3)).astype("uint8")
        for _ in range(2):
            rec.run_batch([dummy] * bs)

    results = []
    times = [0.0, 0.0, 0.0]
    n_batches = 0
    for start in range(0, len(files), bs):
        chunk = files[start:start + bs]
        t0 = time.perf_counter()
        imgs = [read_image(p) for p in chunk]
        read_s = time.perf_counter() - t0
        res, (pre_s, inf_s, post_s) = rec.run_batch(imgs)
        times[0] += read_s + pre_s
        times[1] += inf_s
        times[2] += post_s
        n_batches += 1
        results.extend(zip(chunk, res))

    for path, (text, score) in results:
        logger.info("Predicts of %s:%s", path, (text, score))
    if args.benchmark:
        report(args, rec, paddle_mod, len(files), n_batches, times, sum(times))
    return 0


def run_onnx(args):
    """--use_onnx=True: the paddle2onnx model with onnxruntime on the CPU."""
    if args.use_gpu:
        logger.error("--use_onnx=True runs on the CPU only; use --use_gpu=False")
        return 1
    if args.precision != "fp32":
        logger.warning("--precision=%s: running the fp32 ONNX model as converted", args.precision)
    try:
        import onnxruntime
    except ImportError:
        logger.error("--use_onnx=True needs onnxruntime: pip install onnxruntime")
        return 1
    if find_onnx_file(args.rec_model_dir) is None:
        logger.error("no ONNX model at %r: expected a .onnx file or a directory holding inference.onnx; "
                     "convert the inference model with paddle2onnx first", args.rec_model_dir)
        return 1
    files = image_list(args.image_dir)
    if not files:
        logger.error("no images found at %r", args.image_dir)
        return 1
    try:
        rec = TextRecognizer(args, onnxruntime)
    except Exception as exc:  # onnxruntime raises its own error types for a model it cannot load
        logger.error("onnxruntime cannot load %s: %s", find_onnx_file(args.rec_model_dir), exc)
        return 1
    return predict(args, files, rec, None)


if __name__ == "__main__":
    sys.exit(main())
