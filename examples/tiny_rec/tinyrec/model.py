"""Tiny CRNN: 3 conv blocks -> BiLSTM -> per-timestep classifier, CTC loss."""

import paddle
import paddle.nn as nn
import paddle.nn.functional as F


def _block(cin, cout, pool):
    return nn.Sequential(
        nn.Conv2D(cin, cout, 3, padding=1, bias_attr=False),
        nn.BatchNorm2D(cout),
        nn.ReLU(),
        nn.MaxPool2D(pool, pool),
    )


class TinyCRNN(nn.Layer):
    """Input [B, 3, 32, W] -> output [B, W/4, num_classes].

    In training mode the raw logits are returned (for CTC); in eval mode a
    softmax is applied, which is what the exported inference model emits.
    """

    def __init__(self, num_classes, channels=(16, 32, 64), hidden_size=48):
        super().__init__()
        c1, c2, c3 = channels
        self.backbone = nn.Sequential(
            _block(3, c1, (2, 2)),
            _block(c1, c2, (2, 2)),
            _block(c2, c3, (2, 1)),
        )
        self.lstm = nn.LSTM(c3, hidden_size, direction="bidirect")
        self.fc = nn.Linear(hidden_size * 2, num_classes)

    def forward(self, x):
        feat = self.backbone(x)  # B, C, 4, T
        feat = paddle.mean(feat, axis=2)  # B, C, T
        feat = paddle.transpose(feat, [0, 2, 1])  # B, T, C
        feat, _ = self.lstm(feat)
        logits = self.fc(feat)
        if not self.training:
            return F.softmax(logits, axis=2)
        return logits


def build_model(arch_cfg, num_classes):
    return TinyCRNN(
        num_classes,
        channels=tuple(arch_cfg.get("channels", (16, 32, 64))),
        hidden_size=int(arch_cfg.get("hidden_size", 48)),
    )


def ctc_loss(logits, labels, label_lengths):
    """Mean per-sample CTC loss; logits [B, T, C] (unnormalised)."""
    b, t = logits.shape[0], logits.shape[1]
    log_probs = paddle.transpose(logits, [1, 0, 2])
    input_lengths = paddle.full([b], t, dtype="int64")
    loss = F.ctc_loss(
        log_probs, labels, input_lengths, label_lengths, blank=0, reduction="none"
    )
    return loss.mean()
