"""Train the tiny CRNN.

    python tools/train.py -c configs/tiny_rec.yml -o Global.epoch_num=3 ...
    python -m paddle.distributed.launch --nproc_per_node 2 tools/train.py -c ...
"""

import os
import sys
import time

__dir__ = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.abspath(os.path.join(__dir__, "..")))

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.distributed as dist  # noqa: E402
import yaml  # noqa: E402

from tinyrec.config import get_config  # noqa: E402
from tinyrec.data import CTCLabelEncode, SimpleDataSet, get_characters  # noqa: E402
from tinyrec.logger import get_logger  # noqa: E402
from tinyrec.model import build_model, ctc_loss  # noqa: E402
from tinyrec.program import (  # noqa: E402
    check_device,
    load_weights,
    param_checksum,
    resolve_weights,
    set_seed,
)


def build_optimizer(opt_cfg, parameters):
    lr = float((opt_cfg.get("lr") or {}).get("learning_rate", 0.005))
    clip = opt_cfg.get("clip_norm")
    grad_clip = paddle.nn.ClipGradByGlobalNorm(float(clip)) if clip else None
    name = opt_cfg.get("name", "Adam")
    if name != "Adam":
        get_logger().warning("optimizer %s not supported, using Adam", name)
    return paddle.optimizer.Adam(
        learning_rate=lr,
        beta1=float(opt_cfg.get("beta1", 0.9)),
        beta2=float(opt_cfg.get("beta2", 0.999)),
        parameters=parameters,
        grad_clip=grad_clip,
    )


def collate(dataset, indices):
    imgs = np.stack([dataset.images[i] for i in indices])
    labels = np.stack([dataset.labels[i] for i in indices])
    lengths = np.array([dataset.lengths[i] for i in indices], dtype="int64")
    return paddle.to_tensor(imgs), paddle.to_tensor(labels), paddle.to_tensor(lengths)


def global_sum(values, world):
    """All-reduce (sum) a few floats across ranks; identity for one process."""
    t = paddle.to_tensor(np.array(values, dtype="float64"))
    if world > 1:
        dist.all_reduce(t)
    return t.numpy().tolist()


def main():
    cfg, _ = get_config(description="tiny_rec trainer")
    g = cfg["Global"]
    check_device(bool(g.get("use_gpu", False)))

    world = dist.get_world_size()
    if world > 1:
        dist.init_parallel_env()
    rank = dist.get_rank()

    save_dir = str(g.get("save_model_dir") or "./output/tiny_rec")
    log = get_logger(log_file=os.path.join(save_dir, "train.log") if rank == 0 else None)
    if rank == 0:
        os.makedirs(save_dir, exist_ok=True)
        with open(os.path.join(save_dir, "config.yml"), "w", encoding="utf-8") as f:
            yaml.safe_dump(cfg, f, sort_keys=False)
    log.info("paddle %s, world_size=%d, rank=%d, device=%s",
             paddle.__version__, world, rank, paddle.get_device())

    seed = int(g.get("seed", 2024))
    set_seed(seed)

    arch = cfg.get("Architecture", {})
    image_shape = list(arch.get("image_shape", [3, 32, 100]))
    encoder = CTCLabelEncode(get_characters(g), g.get("max_text_length", 8))
    train_ds = SimpleDataSet(cfg["Train"]["dataset"], encoder, image_shape)
    loader_cfg = cfg["Train"].get("loader", {})
    batch_size = int(loader_cfg.get("batch_size_per_card", 16))
    sampler = paddle.io.DistributedBatchSampler(
        train_ds,
        batch_size=batch_size,
        num_replicas=world,
        rank=rank,
        shuffle=bool(loader_cfg.get("shuffle", True)),
        drop_last=bool(loader_cfg.get("drop_last", False)),
    )

    net = build_model(arch, encoder.num_classes)
    optimizer = build_optimizer(cfg.get("Optimizer", {}), net.parameters())

    start_epoch = 1
    ckpt = resolve_weights(g.get("checkpoints"))
    if g.get("checkpoints") and ckpt is None:
        log.error("checkpoint %s not found", g.get("checkpoints"))
        sys.exit(1)
    if ckpt:
        load_weights(net, ckpt)
        if os.path.isfile(ckpt + ".pdopt"):
            optimizer.set_state_dict(paddle.load(ckpt + ".pdopt"))
        if os.path.isfile(ckpt + ".states"):
            start_epoch = int(paddle.load(ckpt + ".states").get("epoch", 0)) + 1
        log.info("resumed from %s, starting at epoch %d", ckpt, start_epoch)
    elif g.get("pretrained_model"):
        pre = resolve_weights(g.get("pretrained_model"))
        if pre is None:
            log.error("pretrained model %s not found", g.get("pretrained_model"))
            sys.exit(1)
        load_weights(net, pre)
        log.info("loaded pretrained weights from %s", pre)

    model = paddle.DataParallel(net) if world > 1 else net
    if g.get("to_static"):
        # Dynamic-to-static training (TIPC's dy2static chain): the same layer run as a static
        # program; its losses must match the dygraph run's.
        model = paddle.jit.to_static(model)
        log.info("to_static: training through paddle.jit.to_static")
    model.train()

    epoch_num = int(g.get("epoch_num", 3))
    print_step = max(1, int(g.get("print_batch_step", 5)))
    log.info("train samples: %d, per-card batch: %d, global batch: %d, steps/epoch: %d",
             len(train_ds), batch_size, batch_size * world, len(sampler))

    first_loss = None
    last_loss = None
    global_step = 0
    for epoch in range(start_epoch, epoch_num + 1):
        # Same permutation on every rank; DistributedBatchSampler seeds with its epoch.
        sampler.set_epoch(seed * 1000 + epoch)
        loss_sum, n_local = 0.0, 0
        t_epoch = time.time()
        t_win, reader_win, n_win, steps_win = time.time(), 0.0, 0, 0
        for indices in sampler:
            t0 = time.time()
            imgs, labels, lengths = collate(train_ds, indices)
            reader_win += time.time() - t0
            logits = model(imgs)
            loss = ctc_loss(logits, labels, lengths)
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            lv = float(loss)
            loss_sum += lv * len(indices)
            n_local += len(indices)
            n_win += len(indices)
            steps_win += 1
            global_step += 1
            if global_step % print_step == 0:
                dt = time.time() - t_win
                log.info(
                    "epoch: [%d/%d], global_step: %d, lr: %.6f, loss: %.6f, "
                    "avg_reader_cost: %.5f s, avg_batch_cost: %.5f s, avg_samples: %.1f, "
                    "ips: %.5f samples/s",
                    epoch, epoch_num, global_step, optimizer.get_lr(), lv,
                    reader_win / steps_win, dt / steps_win, n_win / steps_win,
                    n_win / max(dt, 1e-9),
                )
                t_win, reader_win, n_win, steps_win = time.time(), 0.0, 0, 0
        tot_loss, tot_n = global_sum([loss_sum, n_local], world)
        epoch_time = time.time() - t_epoch
        mean_loss = tot_loss / max(tot_n, 1)
        log.info("epoch: %d/%d, loss: %.4f, samples/s: %.1f, time: %.3f s",
                 epoch, epoch_num, mean_loss, tot_n / max(epoch_time, 1e-9), epoch_time)
        if first_loss is None:
            first_loss = mean_loss
        last_loss = mean_loss

        if rank == 0 and (epoch % int(g.get("save_epoch_step", 1)) == 0 or epoch == epoch_num):
            prefix = os.path.join(save_dir, "latest")
            paddle.save(net.state_dict(), prefix + ".pdparams")
            paddle.save(optimizer.state_dict(), prefix + ".pdopt")
            paddle.save({"epoch": epoch, "loss": mean_loss}, prefix + ".states")

    if first_loss is None:
        log.warning("nothing to train: start epoch %d > epoch_num %d", start_epoch, epoch_num)
    else:
        log.info("final loss: %.4f first epoch loss: %.4f", last_loss, first_loss)
    log.info("param checksum: rank=%d world=%d value=%.10f", rank, world, param_checksum(net))
    if rank == 0:
        log.info("saved model to %s", os.path.join(save_dir, "latest"))


if __name__ == "__main__":
    main()
