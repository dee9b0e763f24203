"""The CPU-tier table: what the reference reaches on generated worlds, per seed.

    python bench/cpu_tier.py --seeds 0 1 2 [--variant vanilla] [--preset cpu] [--csv out.csv]

For each seed: a fresh world (``autograder.suites.lm.world.SIZES["cpu-tier"]`` unless overridden), then
0. the calibration step (``gates.calibration_seconds``: how fast this machine trains, for the grader's budgets),
1. pretraining (time; the loss, evaluated after it, and the trainer's last-epoch loss), the cloze probe on the
   held-out (dev) people,
2. finetuning the pretrained model: held-out exact match (and accuracy on the finetuning people),
3. finetuning a fresh model without pretraining: accuracy on its own finetuning people ("finetune-only
   train accuracy") and held-out exact match,
4. the majority baseline on the held-out people.
Every figure is measured on the trained weights by autograder.suites.lm.evaluation, as the grader measures a
student's. It prints one row per seed and the mean, then the gates derived from them (see
[retraining] in autograder/suites/lm/assignment.toml for the rule). Not part of CI: one seed takes minutes.
"""

from __future__ import annotations

import argparse
import csv
import logging
import statistics
import sys
import time
from pathlib import Path

from common import REFERENCE, environment, load_implementation

from autograder.suites.lm import evaluation, gates
from autograder.suites.lm.birthplaces import exact_match, majority_answer
from autograder.suites.lm.world import SIZES, generate_world

log = logging.getLogger("cpu_tier")
Z = 3.0  # binomial standard errors below the reference's mean (see autograder/suites/lm/gates.py)
RATES = ("cloze", "heldout_em", "train_acc", "scratch_train_acc", "scratch_heldout_em", "majority_em")


def run_seed(impl, seed: int, variant: str, preset: str, world_args: dict) -> dict:
    """One row of the table (see the module docstring). Every figure is measured as the grader measures a
    student's (``autograder.suites.lm.evaluation``): the trained weights loaded into a fresh GPT, evaluated there;
    ``last_epoch_loss`` is the trainer's own summary, which the grader does not believe, for comparison."""
    world = generate_world(f"cpu-tier-{seed}", **world_args)
    corpus = "".join(f"{line}\n" for line in world.bios)
    train, heldout = world.pairs(world.train), world.pairs(world.dev)
    vocab = impl.dataset.Vocabulary(corpus)
    row = {"seed": seed, "variant": variant, "people": len(world.people), "bios": len(world.entries)}
    row["calibration_s"] = gates.calibration_seconds(impl, preset, variant)

    def trained(model):
        return evaluation.trained_model(impl, model.state_dict(), variant, vocab.size, preset)

    started = time.perf_counter()
    model = impl.run.build_model(variant, vocab.size, preset, seed=seed)
    summary = impl.run.pretrain(model, corpus, preset, seed=seed, progress=False)
    row["pretrain_s"], row["last_epoch_loss"] = time.perf_counter() - started, summary["loss"]
    row["pretrain_loss"] = evaluation.pretraining_loss(impl, trained(model), corpus, preset, seed)
    row["cloze"] = evaluation.cloze(impl, trained(model), vocab, world.cloze_items(world.dev))

    started = time.perf_counter()
    impl.run.finetune(model, vocab, train, preset, documents=len(world.bios), pretrained=True, seed=seed,
                      progress=False)
    row["finetune_s"] = time.perf_counter() - started
    started = time.perf_counter()
    row["heldout_em"] = evaluation.accuracy(impl, trained(model), vocab, heldout)
    row["evaluate_s"] = time.perf_counter() - started
    row["train_acc"] = evaluation.accuracy(impl, trained(model), vocab, train)
    row["tier_s"] = row["pretrain_s"] + row["finetune_s"] + row["evaluate_s"]

    started = time.perf_counter()
    scratch = impl.run.build_model(variant, vocab.size, preset, seed=seed)
    impl.run.finetune(scratch, vocab, train, preset, documents=len(world.bios), pretrained=False, seed=seed,
                      progress=False)
    row["scratch_s"] = time.perf_counter() - started
    row["scratch_train_acc"] = evaluation.accuracy(impl, trained(scratch), vocab, train)
    row["scratch_heldout_em"] = evaluation.accuracy(impl, trained(scratch), vocab, heldout)
    majority = majority_answer([a for _, a in train])
    row["majority_em"] = evaluation.rate(exact_match([majority] * len(heldout), [a for _, a in heldout]))
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variant", default="vanilla", choices=["vanilla", "rope"])
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--solution", type=Path, default=REFERENCE, help="an lm folder (default: the reference)")
    parser.add_argument("--size", default="cpu-tier", choices=sorted(SIZES))
    parser.add_argument("--bios-per-person", type=int)
    parser.add_argument("--people", type=int)
    parser.add_argument("--csv", type=Path, help="also write the rows here")
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    impl = load_implementation(options.solution)
    world_args = dict(SIZES[options.size])
    for name in ("bios_per_person", "people"):
        if getattr(options, name) is not None:
            world_args[name] = getattr(options, name)
    log.info("%s", environment())
    rows = []
    for seed in options.seeds:
        rows.append(run_seed(impl, seed, options.variant, options.preset, world_args))
        log.info("%s", format_row(rows[-1]))
    mean = {key: statistics.mean(r[key] for r in rows) for key in rows[0] if isinstance(rows[0][key], float)}
    log.info("mean: %s", format_row(mean))
    n_train = world_args["people"] - world_args["dev"] - world_args["test"]
    log.info("derived gates (z = %g): %s", Z, gates.derive(rows, world_args["dev"], n_train, Z))
    if options.csv:
        with open(options.csv, "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    return 0


def format_row(row: dict) -> str:
    return ", ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items())


if __name__ == "__main__":
    sys.exit(main())
