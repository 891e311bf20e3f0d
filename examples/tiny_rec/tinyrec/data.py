"""Label lists, character encoding, image normalisation and the dataset."""

import os

import numpy as np
from PIL import Image

from . import DEFAULT_CHARACTERS
from .logger import get_logger


def get_characters(global_cfg):
    """Character list from Global.character_dict_path (one per line) or Global.character."""
    path = global_cfg.get("character_dict_path")
    if path:
        with open(path, "r", encoding="utf-8") as f:
            chars = [ln.rstrip("\r\n") for ln in f if ln.rstrip("\r\n")]
        return "".join(chars)
    return str(global_cfg.get("character") or DEFAULT_CHARACTERS)


class CTCLabelEncode:
    """Text -> int ids; id 0 is the CTC blank, characters start at 1."""

    def __init__(self, characters, max_text_length):
        self.characters = characters
        self.max_text_length = int(max_text_length)
        self.dict = {c: i + 1 for i, c in enumerate(characters)}

    @property
    def num_classes(self):
        return len(self.characters) + 1

    def __call__(self, text):
        ids = [self.dict[c] for c in text if c in self.dict]
        if not ids or len(ids) > self.max_text_length:
            return None
        padded = np.zeros([self.max_text_length], dtype="int32")
        padded[: len(ids)] = ids
        return padded, np.int64(len(ids))


def resize_norm_img(img, image_shape):
    """HWC uint8 RGB -> CHW float32 in [-1, 1], height resized, width padded."""
    c, h, w = image_shape
    pil = Image.fromarray(img)
    ratio = pil.width / float(max(pil.height, 1))
    new_w = min(w, max(1, int(np.ceil(h * ratio))))
    if (pil.width, pil.height) != (new_w, h):
        pil = pil.resize((new_w, h), Image.BILINEAR)
    arr = np.asarray(pil, dtype="float32")
    if arr.ndim == 2:
        arr = np.stack([arr] * 3, axis=-1)
    arr = arr[:, :, :c].transpose((2, 0, 1)) / 255.0
    arr = (arr - 0.5) / 0.5
    out = np.zeros((c, h, w), dtype="float32")
    out[:, :, :new_w] = arr
    return out


def read_image(path):
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def read_label_files(data_dir, label_file_list):
    samples = []
    for lf in label_file_list:
        with open(lf, "r", encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\r\n")
                if not line:
                    continue
                name, label = line.split("\t", 1)
                samples.append((os.path.join(data_dir, name), label))
    return samples


class SimpleDataSet:
    """Map-style dataset; images are decoded once and kept in memory (tiny data)."""

    def __init__(self, dataset_cfg, encoder, image_shape):
        log = get_logger()
        label_files = dataset_cfg["label_file_list"]
        if isinstance(label_files, str):
            label_files = [label_files]
        data_dir = dataset_cfg.get("data_dir", "")
        raw = read_label_files(data_dir, label_files)
        self.images, self.labels, self.lengths, self.texts = [], [], [], []
        skipped = 0
        for path, text in raw:
            enc = encoder(text)
            if enc is None:
                skipped += 1
                continue
            self.images.append(resize_norm_img(read_image(path), image_shape))
            self.labels.append(enc[0])
            self.lengths.append(enc[1])
            self.texts.append(text)
        if skipped:
            log.warning("skipped %d samples with unsupported labels", skipped)
        if not self.images:
            raise RuntimeError("no usable samples in %s" % label_files)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, idx):
        return self.images[idx], self.labels[idx], self.lengths[idx], np.int64(idx)
