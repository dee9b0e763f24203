"""Trainer throughput: the reference trainer against a plain minGPT-style loop, in the same run.

    python bench/throughput.py [--preset cpu] [--epochs 3] [--repeats 2] [--threads 2]

Both pretrain a model of the preset's shape (dropout 0 in both, so the comparison is of the loops)
on the same generated corpus for the same number of epochs, after one untimed warm-up epoch, and
alternate ``--repeats`` times so a change in machine load hits both. Tokens are counted as the
trainers' schedules count them (every position of every example, B * block_size a batch): both do
the same work per epoch, so the ratio is the ratio of epoch times. Prints tokens/s of each and
the ratio reference / baseline.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys

import torch
from common import REFERENCE, environment, load_implementation
from mingpt_baseline import MinGPT, train_epochs

from autograder.suites.lm.world import SIZES, generate_world

log = logging.getLogger("throughput")


def reference_run(impl, corpus: str, preset, epochs: int) -> dict:
    """Seconds and tokens of the reference Trainer on ``epochs`` epochs, after one warm-up epoch."""
    vocab = impl.dataset.Vocabulary(corpus)
    model = impl.run.build_model("vanilla", vocab.size, preset)
    dataset = impl.dataset.CharCorruptionDataset(corpus, preset.block_size, vocab)
    config = impl.run.pretrain_config(preset, len(dataset), max_epochs=1, progress=False)
    trainer = impl.trainer.Trainer(model, dataset, None, config)
    warm = trainer.train()["tokens"]
    trainer.config.max_epochs = 1 + epochs
    summary = trainer.train()
    return {"tokens": summary["tokens"] - warm, "seconds": epoch_seconds(trainer.rows, 1), "loss": summary["loss"]}


def epoch_seconds(rows: list[dict], first_epoch: int) -> float:
    """Wall seconds of the steps of epochs >= first_epoch, from the trainer's log."""
    before = [row["seconds"] for row in rows if row["epoch"] < first_epoch]
    return rows[-1]["seconds"] - (before[-1] if before else 0.0)


def baseline_run(impl, corpus: str, preset, epochs: int) -> dict:
    vocab = impl.dataset.Vocabulary(corpus)
    dataset = impl.dataset.CharCorruptionDataset(corpus, preset.block_size, vocab)
    torch.manual_seed(0)
    model = MinGPT(vocab.size, preset.block_size, preset.n_layer, preset.n_head, preset.n_embd)
    final = preset.pretrain_epochs * len(dataset) * preset.block_size
    train_epochs(model, dataset, 1, preset.pretrain_batch_size, preset.pretrain_lr, preset.warmup_tokens, final)
    return train_epochs(model, dataset, epochs, preset.pretrain_batch_size, preset.pretrain_lr, preset.warmup_tokens,
                        final)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's)")
    parser.add_argument("--solution", default=REFERENCE, help="an lm folder (default: the reference)")
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if options.threads:
        torch.set_num_threads(options.threads)
    impl = load_implementation(options.solution)
    preset = impl.run.get_preset(options.preset)
    preset = type(preset)(**{**preset.__dict__, "dropout": 0.0})
    world = generate_world("throughput", **SIZES["cpu-tier"])
    corpus = "".join(f"{line}\n" for line in world.bios)
    log.info("%s; preset %s (dropout 0), %d documents, %d epochs x %d repeats", environment(), options.preset,
             len(world.entries), options.epochs, options.repeats)
    ours, theirs = [], []
    for _ in range(options.repeats):
        ours.append(reference_run(impl, corpus, preset, options.epochs))
        theirs.append(baseline_run(impl, corpus, preset, options.epochs))
        log.info("reference %.0f tokens/s, baseline %.0f tokens/s (%.0f of them not pads)",
                 rate(ours[-1]), rate(theirs[-1]), rate(theirs[-1], "real_tokens"))
    mine, base = statistics.median(map(rate, ours)), statistics.median(map(rate, theirs))
    log.info("median: reference %.0f tokens/s, minGPT-style baseline %.0f tokens/s, ratio %.2f",
             mine, base, mine / base)
    return 0


def rate(run: dict, key: str = "tokens") -> float:
    return run[key] / run["seconds"]


if __name__ == "__main__":
    sys.exit(main())
