"""The LM reference's trainer: schedule, optimiser groups, one step, exact resume, logs, and the CUDA path on a CPU."""

from __future__ import annotations

import csv
import math
import random

import pytest
import torch
from support.lm import (
    corpus,
    one_thread,  # noqa: F401 - an autouse fixture
    reference,
    tiny_preset,
)

ref = reference()
tr = ref.trainer


def config(**changes):
    return tr.TrainerConfig(**{"max_epochs": 2, "batch_size": 8, "learning_rate": 1e-3, "lr_decay": True,
                               "warmup_tokens": 1000, "final_tokens": 11000, "progress": False,
                               "autocast": "off", **changes})


def test_schedule_values():
    c = config(learning_rate=2.0)
    assert tr.learning_rate(0, c) == 0.0
    assert tr.learning_rate(250, c) == pytest.approx(0.5)
    assert tr.learning_rate(1000, c) == pytest.approx(2.0)
    assert tr.learning_rate(6000, c) == pytest.approx(1.0)  # half-way through the cosine
    assert tr.learning_rate(1000 + 10000 * 0.75, c) == pytest.approx(2.0 * 0.5 * (1 + math.cos(0.75 * math.pi)))
    assert tr.learning_rate(10900, c) == pytest.approx(0.2)  # the floor: 10 % of the full rate
    # progress is not capped at 1 (minGPT, CS224N): past final_tokens the cosine leaves the floor and climbs again
    assert tr.learning_rate(11000 + 10000 * 0.1, c) == pytest.approx(0.2)
    assert tr.learning_rate(11000 + 10000 * 0.5, c) == pytest.approx(1.0)
    assert tr.learning_rate(11000 + 10000 * 1.0, c) == pytest.approx(2.0)
    assert tr.learning_rate(50, config(learning_rate=2.0, lr_decay=False)) == 2.0


def tiny_model(variant="vanilla", dropout=0.0):
    preset = tiny_preset(dropout=dropout)
    return ref.run.build_model(variant, ref.dataset.Vocabulary(corpus()).size, preset, seed=0)


def pretraining_data(seed=0):
    return ref.dataset.CharCorruptionDataset(corpus(), 64, seed=seed)


def test_weight_decay_only_on_matrices():
    model = tiny_model()
    optimizer = tr.configure_optimizer(model, config(weight_decay=0.3))
    decay, plain = optimizer.param_groups
    assert decay["weight_decay"] == 0.3 and plain["weight_decay"] == 0.0
    assert [p.shape for p in decay["params"]] == [p.shape for p in model.parameters() if p.dim() >= 2]
    assert [p.shape for p in plain["params"]] == [p.shape for p in model.parameters() if p.dim() < 2]
    assert optimizer.defaults["betas"] == (0.9, 0.95) and optimizer.defaults["lr"] == 1e-3


def test_one_step_counts_tokens_sets_the_rate_and_learns():
    model = tiny_model()
    data = pretraining_data()
    trainer = tr.Trainer(model, data, None, config())
    plan = tr.plan_batches(data, 8, random.Random(0))
    x, y = plan.batches[0]
    assert plan.item_length == 64 and x.shape[1] < 64
    trainer.item_length = plan.item_length  # as train() does for each epoch
    before = {k: v.clone() for k, v in model.state_dict().items()}
    loss = trainer.step(x, y)
    assert loss.dim() == 0 and loss.dtype == torch.float32 and not loss.requires_grad
    assert trainer.tokens == 8 * 64 and trainer.steps == 1
    assert all(g["lr"] == pytest.approx(1e-3 * 512 / 1000) for g in trainer.optimizer.param_groups)
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())
    losses = [float(trainer.step(x, y)) for _ in range(30)]
    assert losses[-1] < float(loss)


def test_tokens_count_the_items_length_not_block_size():
    """CS224N counts (y >= 0).sum(): finetuning items are block_size - 1 long, so a batch of 8 counts 8 * 63."""
    world_pairs = [(f"Where was {name} born?", "Ulm") for name in ("Ada", "Bo", "Cy Li", "Dee")] * 4
    vocab = ref.dataset.Vocabulary(corpus() + "".join(f"{q}{a}" for q, a in world_pairs))
    trainer = tr.Trainer(tiny_model(), ref.dataset.NameDataset(world_pairs, vocab, 64), None, config(max_steps=1))
    trainer.train()
    assert (trainer.item_length, trainer.tokens) == (63, 8 * 63)
    pretraining = tr.Trainer(tiny_model(), pretraining_data(), None, config(max_steps=1))
    pretraining.train()
    assert pretraining.tokens == 8 * 64


def test_batches_are_cropped_sorted_and_complete():
    data = pretraining_data()
    batches = tr.plan_batches(data, 8, random.Random(1)).batches
    assert sum(len(x) for x, _ in batches) == len(data)
    widths = [x.shape[1] for x, _ in batches]
    assert max(widths) < 64 and len(set(widths)) > 1
    for x, y in batches:
        assert x.shape == y.shape
        assert (x[:, -1] != 0).any(), "cropped to the longest example: its last input is real"
    unsorted = tr.plan_batches(pretraining_data(), 8, random.Random(1), sort_by_length=False).batches
    assert sum(len(x) for x, _ in unsorted) == len(data)


def test_workers_draw_distinct_reproducible_streams():
    """Each DataLoader worker reseeds its copy of the dataset's rng: copies of one rng would corrupt alike."""
    same = "".join(f"Ada Lovelace was born in Lowen in 18{i % 2}5 and wrote on engines.\n" for i in range(16))

    def plan(seed, workers=2):
        data = ref.dataset.CharCorruptionDataset(same, 64, seed=0)
        return tr.plan_batches(data, 4, random.Random(seed), sort_by_length=False, num_workers=workers).batches

    def examples(batches):
        return [row.tolist() for x, _ in batches for row in x]

    first = plan(1)
    assert sum(len(x) for x, _ in first) == 16 and len(set(map(str, examples(first)))) > 8
    # worker 0 builds batches 0 and 2, worker 1 batches 1 and 3, from the same two documents
    assert examples(first[:1]) != examples(first[1:2]) and examples(first[2:3]) != examples(first[3:4])
    assert examples(plan(1)) == examples(first), "the same batch-order state gives the same examples"
    assert examples(plan(2)) != examples(first), "another epoch (batch-order state) gives other examples"


def test_cropping_changes_no_loss():
    model = tiny_model()
    data = pretraining_data()
    x, y = tr.plan_batches(data, 8, random.Random(2)).batches[0]
    full_x = torch.nn.functional.pad(x, (0, 64 - x.shape[1]))
    full_y = torch.nn.functional.pad(y, (0, 64 - y.shape[1]))
    assert torch.allclose(model(x, y)[1], model(full_x, full_y)[1], atol=1e-6)


def run_training(tmp_path, name, stop=None, resume=False, epochs=3, dropout=0.0, workers=0):
    """Train a fresh tiny model (same seeds every time); returns the trainer."""
    model = tiny_model(dropout=dropout)
    trainer = tr.Trainer(model, pretraining_data(), None,
                         config(max_epochs=epochs, max_steps=stop, checkpoint_path=str(tmp_path / f"{name}.ckpt"),
                                resume=resume, seed=3, num_workers=workers))
    trainer.train()
    return trainer


@pytest.mark.parametrize("where, workers", [("epoch boundary", 0), ("mid-epoch", 0), ("mid-epoch", 2)])
def test_resume_is_exact(tmp_path, where, workers):
    """Stopping, saving and resuming in a new trainer gives bit-identical weights (dropout on: RNG state too),
    with the examples built in this process or by DataLoader workers."""
    straight = run_training(tmp_path, "straight", dropout=0.1, workers=workers)
    steps_per_epoch = math.ceil(len(pretraining_data()) / 8)
    stop = steps_per_epoch if where == "epoch boundary" else steps_per_epoch + 2
    run_training(tmp_path, "split", stop=stop, dropout=0.1, workers=workers)
    resumed = run_training(tmp_path, "split", resume=True, dropout=0.1, workers=workers)
    assert resumed.steps == straight.steps and resumed.tokens == straight.tokens
    for key, value in straight.model.state_dict().items():
        assert torch.equal(value, resumed.model.state_dict()[key]), key
    assert [r["loss"] for r in resumed.rows] == [r["loss"] for r in straight.rows]


def test_budgets_logs_and_final_parameters(tmp_path):
    model = tiny_model()
    trainer = tr.Trainer(model, pretraining_data(), pretraining_data(seed=9),
                         config(max_epochs=50, max_seconds=0.5, log_path=str(tmp_path / "log.csv"),
                                plot_path=str(tmp_path / "loss.png"), ckpt_path=str(tmp_path / "final.params")))
    summary = trainer.train()
    assert summary["stopped"] == "time budget" and summary["epochs"] < 50
    assert summary["seconds"] >= 0.5 and summary["tokens_per_second"] > 0
    rows = list(csv.DictReader(open(tmp_path / "log.csv")))
    assert len(rows) == summary["steps"] and rows[0].keys() >= {"step", "epoch", "tokens", "lr", "loss", "seconds"}
    assert [int(r["step"]) for r in rows] == list(range(1, summary["steps"] + 1))
    assert any(r["test_loss"] for r in rows) or summary["epochs"] == 0
    assert (tmp_path / "loss.png").read_bytes()[:4] == b"\x89PNG"
    saved = torch.load(tmp_path / "final.params", weights_only=True)
    assert all(torch.equal(saved[k], v) for k, v in model.state_dict().items())
    assert tr.Trainer(tiny_model(), pretraining_data(), None, config(max_steps=3)).train()["stopped"] == "step budget"


# ---------------------------------------------------------------- the CUDA path, exercised on a CPU


def test_device_selection(monkeypatch):
    assert tr.resolve_device("cpu") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert tr.resolve_device("auto") == torch.device("cpu")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 1)
    assert tr.resolve_device("auto") == torch.device("cuda", 1)


def test_autocast_selection(monkeypatch):
    cpu, cuda = torch.device("cpu"), torch.device("cuda", 0)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: True)
    assert tr.autocast_dtype(cuda, "auto") == torch.bfloat16
    assert tr.autocast_dtype(cpu, "auto") is None
    assert tr.autocast_dtype(cpu, "bf16") == torch.bfloat16 and tr.autocast_dtype(cuda, "off") is None
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda: False)
    assert tr.autocast_dtype(cuda, "auto") is None
    with pytest.raises(ValueError, match="autocast"):
        tr.autocast_dtype(cpu, "fp8")


def test_bf16_autocast_wraps_the_forward_pass_only(monkeypatch):
    """On a CPU, "bf16" takes the code path a GPU takes by default: bf16 matmuls forward, float32 everywhere else."""
    model = tiny_model()
    data = pretraining_data()
    trainer = tr.Trainer(model, data, None, config(autocast="bf16"))
    assert trainer.autocast_dtype == torch.bfloat16
    x, y = tr.plan_batches(data, 8, random.Random(0)).batches[0]
    with trainer.autocast():
        logits, _ = model(x, y)
    assert logits.dtype == torch.bfloat16
    seen, original = [], torch.Tensor.backward

    def watched_backward(self, *args, **kwargs):
        seen.append(torch.is_autocast_enabled("cpu"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "backward", watched_backward)
    losses = [float(trainer.step(x, y)) for _ in range(20)]
    assert seen and not any(seen), "backward must run outside autocast"
    assert all(p.dtype == torch.float32 for p in model.parameters())
    assert all(math.isfinite(v) for v in losses) and losses[-1] < losses[0]


class FakeEvent:
    """Stands for torch.cuda.Event: records when it was recorded."""

    clock = 0.0

    def __init__(self, enable_timing=False):
        self.at = None

    def record(self):
        FakeEvent.clock += 0.25
        self.at = FakeEvent.clock

    def synchronize(self):
        pass

    def elapsed_time(self, end):
        return (end.at - self.at) * 1000.0


def test_timing_synchronises_and_uses_events_on_cuda(monkeypatch):
    synced = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda device=None: synced.append(device))
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    calls = []
    times = tr.time_call(lambda: calls.append(1), torch.device("cuda", 0), repeats=3, warmup=2)
    assert len(calls) == 5 and len(synced) == 3 and times == pytest.approx([0.25, 0.25, 0.25])
    synced.clear()
    times = tr.time_call(lambda: None, torch.device("cpu"), repeats=4)
    assert len(times) == 4 and not synced and all(t >= 0 for t in times)
    tr.synchronize(torch.device("cpu"))
    assert not synced
