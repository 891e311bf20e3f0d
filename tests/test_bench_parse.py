"""Fast tier: the bench parsers, the throughput record and the convergence verdict, on
hand-written log text in the shapes PaddleOCR, PaddleClas and the tiny_rec trainer print."""

from __future__ import annotations

import pytest

from tipcgen.bench.converge import judge
from tipcgen.bench.execute import Outcome
from tipcgen.bench.parse import parse_train_log, progress
from tipcgen.bench.records import make_record, throughput
from tipcgen.spec.bench_section import Convergence

OCR_LOG = """\
[2022/06/02 22:53:35] ppocr INFO: epoch: [1/2], global_step: 1, lr: 0.001000, loss: 12.500000, avg_reader_cost: 0.01000 s, avg_batch_cost: 0.50000 s, avg_samples: 16.0, ips: 32.00000 samples/s, eta: 0:00:10, max_mem_reserved: 1200 MB, max_mem_allocated: 900 MB
[2022/06/02 22:53:36] ppocr INFO: epoch: [1/2], global_step: 2, lr: 0.001000, loss: 10.000000, avg_reader_cost: 0.01000 s, avg_batch_cost: 0.20000 s, avg_samples: 16.0, ips: 80.00000 samples/s, eta: 0:00:09, max_mem_reserved: 1300 MB, max_mem_allocated: 950 MB
[2022/06/02 22:53:36] ppocr INFO: epoch: [2/2], global_step: 3, lr: 0.001000, loss: 8.000000, avg_reader_cost: 0.01000 s, avg_batch_cost: 0.25000 s, avg_samples: 16.0, ips: 64.00000 samples/s, eta: 0:00:05, max_mem_reserved: 1250 MB, max_mem_allocated: 940 MB
[2022/06/02 22:53:37] ppocr INFO: epoch: [2/2], global_step: 4, lr: 0.001000, loss: 6.000000, avg_reader_cost: 0.01000 s, avg_batch_cost: 0.20000 s, avg_samples: 16.0, ips: 80.00000 samples/s, eta: 0:00:00, max_mem_reserved: 1.5 GB, max_mem_allocated: 960 MB
[2022/06/02 22:53:38] ppocr INFO: cur metric, acc: 0.4500, norm_edit_dis: 0.8, fps: 120.5
[2022/06/02 22:53:38] ppocr INFO: best metric, acc: 0.4500, is_float16: False
"""

CLAS_LOG = """\
[2022/05/24 08:09:47] ppcls INFO: [Train][Epoch 1/2][Iter: 0/50]lr(LinearWarmup): 0.00010000, top1: 0.00000, top5: 0.00000, CELoss: 7.01000, loss: 7.01000, batch_cost: 0.97528s, reader_cost: 0.84488, ips: 8.20282 samples/s, eta: 0:01:36
[2022/05/24 08:09:48] ppcls INFO: [Train][Epoch 1/2][Iter: 10/50]lr(LinearWarmup): 0.00020000, top1: 0.00000, top5: 0.01000, CELoss: 6.90000, loss: 6.90000, batch_cost: 0.10000s, reader_cost: 0.00100, ips: 80.00000 samples/s, eta: 0:00:09
"""

TINY_LOG = """\
[2026/11/22 08:59:51] ppocr INFO: paddle 3.3.1, world_size=2, rank=0, device=cpu
[2026/11/22 08:59:51] ppocr INFO: epoch: [1/3], global_step: 1, lr: 0.005000, loss: 73.9, avg_reader_cost: 0.00100 s, avg_batch_cost: 0.20000 s, avg_samples: 16.0, ips: 80.00000 samples/s
[2026/11/22 08:59:51] ppocr INFO: epoch: 1/3, loss: 35.2247, samples/s: 150.0, time: 1.300 s
[2026/11/22 08:59:52] ppocr INFO: epoch: [2/3], global_step: 2, lr: 0.005000, loss: 18.0, avg_reader_cost: 0.00100 s, avg_batch_cost: 0.10000 s, avg_samples: 16.0, ips: 160.00000 samples/s
[2026/11/22 08:59:52] ppocr INFO: epoch: 2/3, loss: 18.1028, samples/s: 310.0, time: 0.600 s
[2026/11/22 08:59:53] ppocr INFO: epoch: [3/3], global_step: 3, lr: 0.005000, loss: 17.0, avg_reader_cost: 0.00100 s, avg_batch_cost: 0.12500 s, avg_samples: 16.0, ips: 128.00000 samples/s
[2026/11/22 08:59:53] ppocr INFO: epoch: 3/3, loss: 17.7248, samples/s: 250.0, time: 0.700 s
[2026/11/22 08:59:53] ppocr INFO: final loss: 17.7248 first epoch loss: 35.2247
"""

AUTOLOG_TAIL = """\
[2022/06/02 22:53:35] ppocr INFO: ---------------------- Env info ----------------------
[2022/06/02 22:53:35] ppocr INFO:  OS_version: Ubuntu 16.04
[2022/06/02 22:53:35] ppocr INFO: ----------------------- Perf info -----------------------
[2022/06/02 22:53:35] ppocr INFO:  cpu_rss(MB): 288.957, gpu_rss(MB): 1500.5, gpu_util: 12%
"""


def test_paddleocr_ips_lines_give_steps_losses_costs_and_memory():
    log = parse_train_log(OCR_LOG + AUTOLOG_TAIL)
    assert [r.ips for r in log.ips] == [32.0, 80.0, 64.0, 80.0]
    assert [r.step for r in log.ips] == [1, 2, 3, 4]
    assert [r.epoch for r in log.ips] == [1, 1, 2, 2]
    assert [r.loss for r in log.ips] == [12.5, 10.0, 8.0, 6.0]
    assert [r.batch_cost for r in log.ips] == [0.5, 0.2, 0.25, 0.2]
    assert log.max_mem_reserved_mb == 1536.0  # 1.5 GB is the largest
    assert log.max_mem_allocated_mb == 960.0
    assert log.autolog_rss_mb == 1500.5
    assert log.metrics["acc"] == [(None, None, 0.45), (None, None, 0.45)]


def test_paddleclas_lines_count_iterations_and_batch_cost():
    log = parse_train_log(CLAS_LOG)
    assert [(r.ips, r.step, r.epoch, r.loss, r.batch_cost) for r in log.ips] == [
        (8.20282, 0, 1, 7.01, 0.97528),
        (80.0, 10, 1, 6.9, 0.1),
    ]


def test_tiny_rec_epoch_summaries_and_version():
    log = parse_train_log(TINY_LOG)
    assert [(e.epoch, e.epochs, e.loss, e.samples_per_s, e.seconds) for e in log.epochs] == [
        (1, 3, 35.2247, 150.0, 1.3),
        (2, 3, 18.1028, 310.0, 0.6),
        (3, 3, 17.7248, 250.0, 0.7),
    ]
    assert len(log.ips) == 3  # summaries are not ips records
    assert log.frame_version == "3.3.1"
    assert progress(TINY_LOG) == (3, 3)
    assert progress(TINY_LOG.split("epoch: 2/3")[0]) == (1, 3)  # in epoch 2: one done


def test_throughput_skips_warmup_and_counts_every_process():
    log = parse_train_log(OCR_LOG)
    # upstream's analysis.py: mean of the ips values after skip_steps, times the cards
    assert throughput(log, skip=1, workers=2) == {
        "ips": pytest.approx((80 + 64 + 80) / 3 * 2, abs=1e-3),
        "ips_per_card": pytest.approx((80 + 64 + 80) / 3, abs=1e-3),
        "ips_min": 128.0,
        "ips_max": 160.0,
        "step_time": pytest.approx(0.65 / 3, abs=1e-5),
    }
    assert throughput(log, skip=10, workers=1)["ips"] == 0.0  # nothing left: no speed


def test_record_has_the_benchmark_database_fields():
    from tipcgen.bench.matrix import BenchRun, NodeCommand
    from tipcgen.spec.bench_section import RunMode

    run = BenchRun(
        run_id="tiny_rec_bs16_fp32_mp_N1C2",
        model="tiny_rec",
        run_mode=RunMode(run_mode="mp", procs=2),
        batch_size=16,
        global_batch_size=32,
        fp_item="fp32",
        device="cpu",
        max_epochs=3,
        max_iters=None,
        warmup_steps=1,
        timeout=60,
        log_dir="/x",
        nodes=(NodeCommand(None, ("python", "train.py"), None, None, "/x/launch"),),
    )
    record = make_record(
        run, Outcome("passed", [0], 12.4, 512.0), parse_train_log(TINY_LOG), "2026-01-01T00:00:00+00:00"
    )
    assert list(record)[:15] == [
        "model_branch",
        "model_commit",
        "model_name",
        "batch_size",
        "fp_item",
        "run_process_type",
        "run_mode",
        "convergence_value",
        "convergence_key",
        "ips",
        "speed_unit",
        "device_num",
        "model_run_time",
        "frame_commit",
        "frame_version",
    ]
    assert record["model_name"] == "tiny_rec_bs16_fp32_mp"
    assert (record["run_process_type"], record["device_num"], record["speed_unit"]) == ("MultiP", "N1C2", "samples/s")
    assert record["ips"] == pytest.approx((160 + 128) / 2 * 2)
    assert record["trainer_samples_per_s"] == pytest.approx(280.0)  # epochs 2-3 (one warm-up epoch)
    assert record["train_time"] == pytest.approx(2.6)
    assert record["convergence_value"] == 17.7248
    assert record["epoch_loss"] == [[1, 35.2247], [2, 18.1028], [3, 17.7248]]
    assert record["loss_curve"] == [[1, 73.9], [2, 18.0], [3, 17.0]]
    assert record["log_file"] == "/x/launch/workerlog.0"
    assert record["model_run_time"] == 12 and record["peak_rss_mb"] == 512.0


def _conv(**kw) -> Convergence:
    base = {"metric": "loss", "target": 18.0, "within": {"epochs": 3}}
    base.update(kw)
    return Convergence.model_validate(base)


def test_convergence_pass_names_where_the_target_was_reached():
    v = judge(_conv(), parse_train_log(TINY_LOG))
    assert v.passed and v.reached.at == 3 and v.best.value == 17.7248
    assert v.message() == (
        "convergence PASS: loss <= 18 within 3 epochs: reached 17.7248 at epoch 3; best value 17.7248 at epoch 3"
    )
    assert v.curve_lines()[-1].endswith("<- target reached")


def test_convergence_fail_names_metric_target_and_best_value():
    v = judge(_conv(within={"epochs": 2}), parse_train_log(TINY_LOG))  # epoch 3 is past the limit
    assert not v.passed
    assert v.message() == "convergence FAIL: loss <= 18 not reached within 2 epochs: best value 18.1028 at epoch 2"
    assert judge(_conv(within={"epochs": 2}, tolerance=0.2), parse_train_log(TINY_LOG)).passed


def test_convergence_of_an_accuracy_and_of_steps():
    acc = judge(_conv(metric="acc", target=0.5, direction="max", within={"epochs": 5}), parse_train_log(OCR_LOG))
    assert not acc.passed and "best value 0.45" in acc.message()
    steps = judge(_conv(target=9.0, within={"iters": 3}), parse_train_log(OCR_LOG))
    assert steps.passed and steps.reached.at == 3 and steps.unit == "step"
    missing = judge(_conv(metric="top1", target=0.9, direction="max"), parse_train_log(TINY_LOG))
    assert not missing.passed and "no `top1:` values" in missing.message()
