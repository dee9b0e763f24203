"""The CPU-tier table: what the reference reaches on generated worlds, per seed.

    python bench/cpu_tier.py --seeds 0 1 2 [--variant vanilla] [--preset cpu] [--csv out.csv]
    python bench/cpu_tier.py --size retraining --implementation tests/alternatives/lm/mingpt_trainer.py --seeds 7

For each seed: a fresh world (``autograder.suites.lm.world.SIZES["cpu-tier"]`` unless overridden), then
0. the calibration step (``gates.calibration_seconds``: how fast this machine trains, for the grader's budgets),
1. pretraining (time; the loss, evaluated after it, and the trainer's last-epoch loss), the cloze probe on the
   held-out (dev) people,
2. finetuning the pretrained model: held-out exact match (and accuracy on the finetuning people),
3. finetuning a fresh model without pretraining: accuracy on its own finetuning people ("finetune-only
   train accuracy") and held-out exact match,
4. the majority baseline on the held-out people.
Every figure is measured on the trained weights by autograder.suites.lm.evaluation, as the grader measures a
student's. Each stage's time is given twice: ``*_s`` the wall clock, ``*_cpu_s`` this process's CPU time (every
thread), which is what the grader's budgets count; training runs on ``--threads`` threads, the worker's
([limits] threads of the lm assignment.toml). It prints one row per seed and the mean, then the gates derived from
them (see [retraining] in autograder/suites/lm/assignment.toml for the rule), and with ``--check`` whether each row
passes the committed gates and budgets (what the grader would give it). ``--implementation FILE`` trains the reference
with a file of tests/mutants/lm/ or tests/alternatives/lm/ applied (``autograder.grading.mutants``): the
alternatives must pass, the training mutants must not. Not part of CI: one seed takes about a minute.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import torch
from common import REFERENCE, environment, load_implementation

from autograder import course
from autograder.grading import mutants
from autograder.suites.lm import evaluation, gates
from autograder.suites.lm.birthplaces import exact_match, majority_answer
from autograder.suites.lm.world import SIZES, generate_world

log = logging.getLogger("cpu_tier")
Z = 3.0  # binomial standard errors below the reference's mean (see autograder/suites/lm/gates.py)
WORLD_NAME = "cpu-tier-{seed}"  # the sweep's worlds; the hidden retraining test draws "lm-retraining:{seed}"
RATES = ("cloze", "heldout_em", "train_acc", "scratch_train_acc", "scratch_heldout_em", "majority_em")


def run_seed(impl, seed: int, variant: str, preset: str, world_args: dict, name: str = WORLD_NAME) -> dict:
    """One row of the table (see the module docstring). Every figure is measured as the grader measures a
    student's (``autograder.suites.lm.evaluation``): the trained weights loaded into a fresh GPT, evaluated there;
    ``last_epoch_loss`` is the trainer's own summary, which the grader does not believe, for comparison. The row
    names its world when it is not the sweep's own (``name``, ``{seed}`` replaced)."""
    world = generate_world(name.format(seed=seed), **world_args)
    corpus = "".join(f"{line}\n" for line in world.bios)
    train, heldout = world.pairs(world.train), world.pairs(world.dev)
    vocab = impl.dataset.Vocabulary(corpus)
    row = {"seed": seed, "variant": variant, "people": len(world.people), "bios": len(world.entries)}
    if name != WORLD_NAME:
        row["world"] = name.format(seed=seed)
    row["calibration_s"] = gates.calibration_seconds(impl, preset, variant)

    def trained(model):
        return evaluation.trained_model(impl, model.state_dict(), variant, vocab.size, preset)

    with timed(row, "pretrain"):
        model = impl.run.build_model(variant, vocab.size, preset, seed=seed)
        summary = impl.run.pretrain(model, corpus, preset, seed=seed, progress=False)
    row["last_epoch_loss"] = summary["loss"]
    with timed(row, "evaluate"), evaluation.one_thread():  # as the grader evaluates
        row["pretrain_loss"] = evaluation.pretraining_loss(impl, trained(model), corpus, preset, seed)
        row["cloze"] = evaluation.cloze(impl, trained(model), vocab, world.cloze_items(world.dev))

    with timed(row, "finetune"):
        impl.run.finetune(model, vocab, train, preset, documents=len(world.bios), pretrained=True, seed=seed,
                          progress=False)
    with evaluation.one_thread():
        row["heldout_em"] = evaluation.accuracy(impl, trained(model), vocab, heldout)
        row["train_acc"] = evaluation.accuracy(impl, trained(model), vocab, train)

    with timed(row, "scratch"):
        scratch = impl.run.build_model(variant, vocab.size, preset, seed=seed)
        impl.run.finetune(scratch, vocab, train, preset, documents=len(world.bios), pretrained=False, seed=seed,
                          progress=False)
    with evaluation.one_thread():
        row["scratch_train_acc"] = evaluation.accuracy(impl, trained(scratch), vocab, train)
        row["scratch_heldout_em"] = evaluation.accuracy(impl, trained(scratch), vocab, heldout)
    row["tier_s"] = row["pretrain_s"] + row["finetune_s"] + row["scratch_s"] + row["evaluate_s"]
    row["tier_cpu_s"] = row["pretrain_cpu_s"] + row["finetune_cpu_s"] + row["scratch_cpu_s"] + row["evaluate_cpu_s"]
    majority = majority_answer([a for _, a in train])
    row["majority_em"] = evaluation.rate(exact_match([majority] * len(heldout), [a for _, a in heldout]))
    return row


@contextlib.contextmanager
def timed(row: dict, stage: str) -> Iterator[None]:
    """``row[stage_s]``: the block's wall-clock seconds; ``row[stage_cpu_s]``: this process's CPU seconds in it."""
    wall, cpu = time.perf_counter(), time.process_time()
    yield
    row[f"{stage}_s"], row[f"{stage}_cpu_s"] = time.perf_counter() - wall, time.process_time() - cpu


def verdict(row: dict, thresholds: gates.Thresholds) -> str:
    """What the grader would give this row: the parts passed (of 6) and the stages over their CPU budget."""
    points = sum(v.weight for v in gates.judge(row, thresholds.gates) if v.passed)
    over = [stage for stage in ("pretrain", "finetune", "scratch")
            if row[f"{stage}_cpu_s"] > getattr(thresholds.budget, stage)]
    return f"{points:g}/6" + (f", over the CPU budget: {', '.join(over)}" if over else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--variant", default="vanilla", choices=["vanilla", "rope"])
    parser.add_argument("--preset", default="cpu")
    parser.add_argument("--solution", type=Path, default=REFERENCE, help="an lm folder (default: the reference)")
    parser.add_argument("--size", default="cpu-tier", choices=sorted(SIZES))
    parser.add_argument("--bios-per-person", type=int)
    parser.add_argument("--people", type=int)
    parser.add_argument("--implementation", type=Path,
                        help="a file of tests/mutants/lm or tests/alternatives/lm, applied to the reference")
    parser.add_argument("--threads", type=int, default=course.load("lm").limits.threads,
                        help="torch threads for training (default: the grader's worker's)")
    parser.add_argument("--world", default=WORLD_NAME,
                        help="the worlds' names, {seed} replaced (a world the grader drew: lm-retraining:{seed})")
    parser.add_argument("--check", action="store_true", help="judge each row by the committed gates and budgets")
    parser.add_argument("--csv", type=Path, help="also write the rows here")
    options = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    torch.set_num_threads(options.threads)
    if options.implementation is None:
        return sweep(options, load_implementation(options.solution))
    with tempfile.TemporaryDirectory(prefix="cpu-tier-") as applied:
        mutant = mutants.Mutant(course.load("lm"), options.implementation.resolve())
        return sweep(options, load_implementation(mutant.materialize(Path(applied) / "lm")))


def sweep(options: argparse.Namespace, impl) -> int:
    world_args = dict(SIZES[options.size])
    for name in ("bios_per_person", "people"):
        if getattr(options, name) is not None:
            world_args[name] = getattr(options, name)
    log.info("%s", environment())
    rows = []
    for seed in options.seeds:
        rows.append(run_seed(impl, seed, options.variant, options.preset, world_args, options.world))
        log.info("%s", format_row(rows[-1]))
        if options.check:
            log.info("seed %d: %s", seed, verdict(rows[-1], gates.load()))
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
