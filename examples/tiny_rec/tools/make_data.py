"""Generate a deterministic synthetic text-line dataset.

    python tools/make_data.py --out . [--train 200] [--eval 40] [--infer 8] [--seed 0]
    python tools/make_data.py --out /tmp/d --tar /tmp/pkgs   # also pack tarballs

Layout written under --out:
    train_data/tiny_rec/train/*.png, train_data/tiny_rec/train_list.txt
    train_data/tiny_rec/eval/*.png,  train_data/tiny_rec/eval_list.txt
    inference/rec_inference/*.png    (+ inference/rec_inference_labels.txt)
With --tar OUTDIR: OUTDIR/tiny_rec_data.tar (members tiny_rec/...) and
OUTDIR/rec_inference.tar (members rec_inference/...), packed reproducibly.
"""

import argparse
import io
import os
import sys
import tarfile

import numpy as np
from PIL import Image, ImageDraw, ImageFont

CHARSET = "0123456789abcdefghijklmnopqrstuvwxyz"
IMG_H, IMG_W = 32, 100
SPLIT_SALT = {"train": 1, "eval": 2, "infer": 3}


def _font():
    # Pillow >= 10.1: load_default() may return a FreeType font; we want the
    # classic built-in bitmap font, which renders identically everywhere.
    if hasattr(ImageFont, "load_default_imagefont"):
        return ImageFont.load_default_imagefont()
    return ImageFont.load_default()


def render(text, rng, font):
    """Return an RGB uint8 array of shape (32, 100, 3) showing ``text``."""
    bg = int(rng.randint(170, 256))
    fg = int(rng.randint(0, 90))
    left, top, right, bottom = font.getbbox(text)
    tw, th = right - left, bottom - top
    pad_x, pad_y = int(rng.randint(1, 4)), int(rng.randint(1, 3))
    small = Image.new("L", (tw + 2 * pad_x, th + 2 * pad_y), color=bg)
    ImageDraw.Draw(small).text((pad_x - left, pad_y - top), text, fill=fg, font=font)
    scale = IMG_H / float(small.height)
    new_w = min(IMG_W, max(1, int(round(small.width * scale))))
    small = small.resize((new_w, IMG_H), Image.BILINEAR)
    canvas = Image.new("L", (IMG_W, IMG_H), color=bg)
    x0 = int(rng.randint(0, IMG_W - new_w + 1)) if new_w < IMG_W else 0
    x0 = min(x0, 6)
    canvas.paste(small, (x0, 0))
    arr = np.asarray(canvas, dtype=np.float32)
    arr = arr + rng.normal(0.0, 6.0, size=arr.shape)
    arr = np.clip(np.round(arr), 0, 255).astype(np.uint8)
    return np.stack([arr, arr, arr], axis=-1)


def random_text(rng):
    n = int(rng.randint(3, 7))  # 3..6 characters
    return "".join(CHARSET[int(i)] for i in rng.randint(0, len(CHARSET), size=n))


def save_png(arr, path):
    # Fixed parameters and no metadata chunks -> byte-identical output per seed.
    Image.fromarray(arr, "RGB").save(path, format="PNG", optimize=False, compress_level=6)


def make_split(out_img_dir, rel_prefix, count, seed, split, font):
    os.makedirs(out_img_dir, exist_ok=True)
    rng = np.random.RandomState((seed * 7919 + SPLIT_SALT[split]) % (2**32))
    lines = []
    for i in range(count):
        text = random_text(rng)
        name = "%s_%05d.png" % (split, i)
        save_png(render(text, rng, font), os.path.join(out_img_dir, name))
        lines.append("%s%s\t%s" % (rel_prefix, name, text))
    return lines


def write_lines(path, lines):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(ln + "\n" for ln in lines))


def _add_tree(tar, root, arcroot):
    """Add root as arcroot/ with sorted members and normalised metadata."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        arc_dir = arcroot if rel == "." else arcroot + "/" + rel.replace(os.sep, "/")
        entries.append((arc_dir, None))
        for fn in sorted(filenames):
            entries.append((arc_dir + "/" + fn, os.path.join(dirpath, fn)))
    for arcname, src in sorted(entries, key=lambda e: e[0]):
        info = tarfile.TarInfo(arcname)
        info.mtime = 0
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        if src is None:
            info.type = tarfile.DIRTYPE
            info.mode = 0o755
            tar.addfile(info)
        else:
            with open(src, "rb") as f:
                data = f.read()
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))


def pack(out, tar_dir):
    os.makedirs(tar_dir, exist_ok=True)
    jobs = [
        (os.path.join(out, "train_data", "tiny_rec"), "tiny_rec", "tiny_rec_data.tar"),
        (os.path.join(out, "inference", "rec_inference"), "rec_inference", "rec_inference.tar"),
    ]
    written = []
    for src, arcroot, name in jobs:
        path = os.path.join(tar_dir, name)
        with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
            _add_tree(tar, src, arcroot)
        written.append(path)
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="root dir (gets train_data/ and inference/)")
    ap.add_argument("--train", type=int, default=200, help="number of training images")
    ap.add_argument("--eval", type=int, default=40, help="number of eval images")
    ap.add_argument("--infer", type=int, default=8, help="number of inference images")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tar", metavar="OUTDIR", default=None,
                    help="also write tiny_rec_data.tar and rec_inference.tar into OUTDIR")
    args = ap.parse_args(argv)
    if min(args.train, args.eval, args.infer) < 1:
        ap.error("--train/--eval/--infer must be >= 1")

    font = _font()
    data_root = os.path.join(args.out, "train_data", "tiny_rec")
    for split, count in (("train", args.train), ("eval", args.eval)):
        lines = make_split(os.path.join(data_root, split), split + "/", count, args.seed, split, font)
        write_lines(os.path.join(data_root, split + "_list.txt"), lines)
    infer_dir = os.path.join(args.out, "inference", "rec_inference")
    lines = make_split(infer_dir, "", args.infer, args.seed, "infer", font)
    write_lines(os.path.join(args.out, "inference", "rec_inference_labels.txt"), lines)
    print("wrote %d train, %d eval, %d inference images under %s"
          % (args.train, args.eval, args.infer, os.path.abspath(args.out)))
    if args.tar:
        for p in pack(args.out, args.tar):
            print("packed %s" % p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
