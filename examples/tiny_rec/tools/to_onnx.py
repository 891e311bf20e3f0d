"""The paddle2onnx command line, minus the options it no longer has.

    python3 tools/to_onnx.py --model_dir=./deploy/models/tiny_rec_infer/ \
        --model_filename=inference.json --params_filename=inference.pdiparams \
        --save_file=./deploy/models/tiny_rec_infer/inference.onnx --opset_version=11 \
        --enable_onnx_checker=True --enable_dev_version=False

PaddleClas's test_paddle2onnx.sh always appends `--enable_dev_version=False`, an option that
paddle2onnx dropped in 1.0; paddle2onnx >= 2.0 (the first to read Paddle 3's inference.json)
refuses it as unknown and exits 2. This drops that option and runs paddle2onnx's own CLI with
the rest, unchanged.
"""

import sys

OBSOLETE = ("--enable_dev_version",)


def main():
    sys.argv = [sys.argv[0]] + [
        arg for arg in sys.argv[1:] if arg.split("=", 1)[0] not in OBSOLETE
    ]
    from paddle2onnx.command import main as paddle2onnx_main

    return paddle2onnx_main()


if __name__ == "__main__":
    sys.exit(main())
