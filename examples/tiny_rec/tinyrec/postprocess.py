"""Greedy CTC decoding and the recognition metric (pure numpy)."""

import numpy as np


class CTCLabelDecode:
    def __init__(self, characters):
        self.characters = ["<blank>"] + list(characters)

    def __call__(self, probs):
        """probs [B, T, C] -> [(text, score), ...]; score = mean max-prob of kept steps."""
        idx = probs.argmax(axis=2)
        prob = probs.max(axis=2)
        out = []
        for b in range(idx.shape[0]):
            seq, conf = idx[b], prob[b]
            keep = np.ones(len(seq), dtype=bool)
            keep[1:] = seq[1:] != seq[:-1]
            keep &= seq != 0
            text = "".join(self.characters[i] for i in seq[keep])
            score = float(conf[keep].mean()) if keep.any() else 0.0
            out.append((text, score))
        return out


def edit_distance(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    return prev[-1]


class RecMetric:
    def __init__(self):
        self.correct = 0
        self.total = 0
        self.norm_dist = 0.0

    def update(self, preds, gts):
        for (pred, _), gt in zip(preds, gts):
            self.total += 1
            self.correct += int(pred == gt)
            self.norm_dist += edit_distance(pred, gt) / max(len(pred), len(gt), 1)

    def get(self):
        eps = 1e-5
        return {
            "acc": self.correct / (self.total + eps),
            "norm_edit_dis": 1.0 - self.norm_dist / (self.total + eps),
        }
