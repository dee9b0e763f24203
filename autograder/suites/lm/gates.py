"""The retraining gates: reading them ([retraining] in the lm assignment.toml), deriving gates from a sweep, judging
one retraining.

A retraining yields rates on the held-out or finetuning people of a generated world (the cloze probe,
finetune-only train accuracy, held-out exact match) and the pretraining loss. Every figure is measured by trusted
code on the weights the training produced, loaded into the reference's GPT (``evaluation``), in the same way for
the reference's sweep and for a student's grading: a student's process could forge its own summary and answers.
The loss is the trained model's mean span-corruption loss over fresh epochs of the corpus. The committed loss
bound was derived from the trainer's own last-epoch mean, which means the same thing (the cpu preset has no
dropout, so only the weights' drift over that last epoch and the corruptions drawn differ); [retraining] in the lm
assignment.toml compares the two. ``judge`` turns the figures into graded parts; ``derive`` is the rule
[retraining.gates] was written with (bench/cpu_tier.py prints it): a rate's gate is the lower end of the Wilson
interval (z standard errors) of the reference's worst seed, never below the upper end of the majority baseline's
(a gate that "always the commonest town" could pass grades nothing); the loss bound is the worst seed's loss plus
z standard deviations across seeds (with fewer than 3 seeds the spread is unknown, and 10 % of the mean loss stands
in for it).
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, fields, replace
from pathlib import Path

import torch

from autograder import course
from autograder.suites.lm import evaluation

THRESHOLDS = Path(__file__).with_name("assignment.toml")  # its [retraining] tables


@dataclass(frozen=True)
class Gates:
    """Minimum rates (fractions of people) and the maximum final pretraining loss."""

    cloze_min: float
    scratch_train_acc_min: float
    pretrain_loss_max: float


# A grading machine up to MAX_SLOWDOWN times slower than the sweep's (by ``calibration_seconds``) gets its budgets
# stretched to match; the retraining's wall-clock safety net is WALL_FACTOR times the stretched CPU budgets plus
# SLACK_SECONDS ([retraining.budget]).
_BUDGET = course.read_toml(THRESHOLDS)["retraining"]["budget"]
MAX_SLOWDOWN: float = _BUDGET["max_slowdown"]
SLACK_SECONDS: float = _BUDGET["slack_s"]
WALL_FACTOR: float = _BUDGET["wall_factor"]
CALIBRATION_VOCAB, CALIBRATION_ROUNDS = 64, 5


@dataclass(frozen=True)
class Budget:
    """CPU seconds each stage may use (the worker's processes together, every thread: ``Student.cpu_budget``), the
    reference's own CPU seconds, and the calibration step's (``calibration_seconds``), all as measured with the
    sweep. CPU time, not the wall clock: other work on the machine stretches the wall clock, not the CPU time a
    training needs, so a busy grading machine cannot make a correct submission run out of its budget."""

    pretrain: float
    finetune: float
    scratch: float
    reference_pretrain: float
    reference_finetune: float
    reference_scratch: float
    calibration: float

    def slowdown(self, measured: float) -> float:
        """How many times slower than the sweep's machine this one is at the retraining's work (``measured``: its
        ``calibration_seconds``), between 1 (a faster machine keeps the measured budgets) and MAX_SLOWDOWN."""
        return min(max(measured / self.calibration, 1.0), MAX_SLOWDOWN)

    def scaled(self, slowdown: float) -> Budget:
        """The budgets and the reference's times on a machine ``slowdown`` times slower than the sweep's."""
        return replace(self, **{field.name: slowdown * getattr(self, field.name) for field in fields(self)})

    @property
    def training(self) -> float:
        """All three stages' budgets."""
        return self.pretrain + self.finetune + self.scratch

    @property
    def deadline(self) -> float:
        """The retraining's wall-clock safety net, in seconds: WALL_FACTOR times all the stages' CPU budgets plus
        SLACK_SECONDS. Only the CPU budgets decide points; this stops a submission that waits without computing, and
        leaves room for a machine whose cores other work shares or that grants the worker half a core."""
        return WALL_FACTOR * self.training + SLACK_SECONDS


@dataclass(frozen=True)
class Thresholds:
    size: str
    preset: str
    variant: str
    gates: Gates
    budget: Budget


@dataclass(frozen=True)
class Verdict:
    """One graded part: its name, weight, whether it passed, and what to tell the student."""

    part: str
    weight: float
    passed: bool
    message: str


def load(path: Path = THRESHOLDS) -> Thresholds:
    """[retraining] of the lm assignment.toml: a stage may use ``factor`` times the reference's CPU time, and never
    less than ``minimum_cpu_s``."""
    data = course.read_toml(path)["retraining"]
    world, gates, budget = data["world"], data["gates"], data["budget"]

    def allowed(stage: str) -> float:
        return max(budget["factor"] * budget[f"reference_{stage}_cpu_s"], budget["minimum_cpu_s"])

    return Thresholds(size=world["size"], preset=world["preset"], variant=world["variant"],
                      gates=Gates(gates["cloze_min"], gates["scratch_train_acc_min"], gates["pretrain_loss_max"]),
                      budget=Budget(pretrain=allowed("pretrain"), finetune=allowed("finetune"),
                                    scratch=allowed("scratch"),
                                    reference_pretrain=budget["reference_pretrain_cpu_s"],
                                    reference_finetune=budget["reference_finetune_cpu_s"],
                                    reference_scratch=budget["reference_scratch_cpu_s"],
                                    calibration=budget["calibration_s"]))


def calibration_seconds(impl, preset: str, variant: str) -> float:
    """The CPU time of the fastest of CALIBRATION_ROUNDS training steps of ``impl`` (the reference) on one batch of
    the preset's shape, on one thread of the CPU after a warm-up step. Measured with the sweep and again by the grader,
    in the same way: it tells how much slower the grading machine's CPU is at the retraining's work (another CPU, its
    vector kernels), so the budgets, measured on one machine, hold on another. The thread's CPU time, on one thread:
    other work sharing the cores takes turns with it, which the wall clock counts and the thread's CPU time does not
    (the wall clock, measured once before training, read a machine that other work loaded later as a fast one)."""
    shape = impl.run.get_preset(preset)
    model = impl.run.build_model(variant, CALIBRATION_VOCAB, preset, seed=0)
    config = impl.run.pretrain_config(preset, 1, device="cpu", progress=False)
    trainer = impl.trainer.Trainer(model, [], None, config)
    generator = torch.Generator().manual_seed(0)
    x, y = torch.randint(2, CALIBRATION_VOCAB, (2, shape.pretrain_batch_size, shape.block_size), generator=generator)
    seconds = []
    with evaluation.one_thread():
        for _ in range(CALIBRATION_ROUNDS + 1):
            started = time.thread_time()
            trainer.step(x, y)
            seconds.append(time.thread_time() - started)
    return min(seconds[1:])


def rate_gate(rate: float, n: int, z: float, majority: float) -> float:
    """max(the lower end of the Wilson interval of ``rate``, the upper end of the majority's), to 0.01: the
    first rounded down, the floor up (``rate``: the reference's, on ``n`` people; the interval has z
    standard errors each side). Wilson, not p - z sqrt(p (1 - p) / n): at a perfect rate that margin is
    zero, and a gate of 100 % would fail a run that misses one person."""
    return max(_floor(wilson(rate, n, z)[0]), _ceil(wilson(majority, n, z)[1]))


def wilson(rate: float, n: int, z: float) -> tuple[float, float]:
    """The Wilson score interval (low, high) of a rate measured on ``n`` trials, z standard errors wide."""
    shrink = 1 + z * z / n
    centre = (rate + z * z / (2 * n)) / shrink
    half = z / shrink * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def derive(rows: list[dict], heldout: int, train: int, z: float) -> dict:
    """The gates from a sweep's rows (bench/cpu_tier.py): ``heldout`` and ``train`` people per world. A rate's
    gate is the lower end of the worst seed's Wilson interval (never below the majority floor)."""
    majority = statistics.mean(r["majority_em"] for r in rows)
    losses = [r["pretrain_loss"] for r in rows]
    spread = statistics.stdev(losses) if len(losses) >= 3 else 0.1 * statistics.mean(losses)
    # The worst seed, not the mean: with few seeds the spread between training runs (the committed sweep's
    # finetune-only 0.98, 0.81 and 0.71) is wider than the binomial margin of one run.
    return {"cloze_min": rate_gate(min(r["cloze"] for r in rows), heldout, z, majority),
            "scratch_train_acc_min": rate_gate(min(r["scratch_train_acc"] for r in rows), train, z, majority),
            "pretrain_loss_max": _ceil(max(losses) + z * spread)}


def _floor(x: float) -> float:
    return math.floor(round(100 * x, 6)) / 100  # rounded first: 100 * 0.68 is 68.00000000000001


def _ceil(x: float) -> float:
    return math.ceil(round(100 * x, 6)) / 100


def judge(figures: dict, gates: Gates) -> list[Verdict]:
    """The three parts of a retraining from its figures (keys as in bench/cpu_tier.py's rows); a figure that is
    missing (its stage failed) fails its part. Weights: cloze probe 3, pretraining loss 1, finetune-only 2."""
    cloze, loss, scratch = (figures.get(k) for k in ("cloze", "pretrain_loss", "scratch_train_acc"))
    missing = "not measured: an earlier stage failed (see below)."
    return [
        Verdict("pretraining stores the facts: held-out people's birthplaces in the cloze probe", 3,
                cloze is not None and cloze >= gates.cloze_min, missing if cloze is None else
                f"completing each held-out person's biography up to the birthplace after pretraining gave the "
                f"birthplace for {cloze:.0%} of them (the gate is {gates.cloze_min:.0%}; without pretraining, or "
                "always naming the commonest town, a model gets only a few %)."),
        Verdict("pretraining converges: the pretrained model's loss", 1,
                loss is not None and math.isfinite(loss) and loss <= gates.pretrain_loss_max,
                missing if loss is None else
                f"the pretrained model's mean span-corruption loss on the corpus, evaluated by the grader on the "
                f"weights your pretraining produced, was {loss:.3f} (the bound is {gates.pretrain_loss_max:.2f})."),
        Verdict("finetuning without pretraining learns its own people's birthplaces", 2,
                scratch is not None and scratch >= gates.scratch_train_acc_min, missing if scratch is None else
                f"a model finetuned from scratch answered {scratch:.0%} of its own finetuning questions exactly "
                f"(the gate is {gates.scratch_train_acc_min:.0%})."),
    ]
