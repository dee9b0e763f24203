"""Hidden: the student's own trainer retrained on a secret world, within a budget of CPU time (a minute on a CPU), and
graded by trusted code.

The world is generated here from the suite's hidden seed and never written to files: the worker gets the biographies
and questions as strings and runs the student's build_model, pretrain and finetune (its learning rate decays over
the corpus's documents, one biography a line, as CS224N's does). Nothing the student's process says about its
training is believed: when this test read the loss from the student's own summary and asked the student's own
complete and predict, a submission that trained nothing and looked the answers up in the texts it had been given
earned full marks. After each stage the grader reads the model's state_dict(), loads it into the reference's GPT and
measures there, with the reference's code (../evaluation.py): the pretraining loss and the cloze probe after
pretraining, held-out exact match after finetuning, and the answers of the model finetuned from scratch to its own
finetuning questions. The cloze probe's and the held-out questions are people the student's finetuning never saw;
the finetune-only gate is about fitting the finetuning people themselves (finetuned from scratch, a model stays at
the majority baseline on anyone else), and weights can only answer them by having learnt them. The summaries are
not read at all. Answers are scored with autograder.suites.lm.birthplaces.

Each training stage may use a budget of CPU time from [retraining.budget] (a multiple of the reference's CPU time on
the sweep's machine, counted over all the worker's threads and processes: ``Student.cpu_budget``), stretched on a
slower CPU by the reference's calibration step timed here in CPU time (gates.calibration_seconds); a stage that uses
its budget up is stopped and scores nothing. CPU time, not the wall clock: when the wall clock decided, a correct
submission graded on a machine that other work loaded after the calibration ran out of its budgets and lost points.
The calls' wall-clock deadline (``Budget.deadline``) is only a generous safety net, and the grader's own evaluation is
not charged to it; the gates and parts are in ../gates.py.
"""

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from autograder.grading import RemoteObject, StudentCodeFailure, graded
from autograder.suites.lm import evaluation, gates
from autograder.suites.lm.world import SIZES, World, generate_world

THRESHOLDS = gates.load()
COVERS = ["build_model", "pretrain_config", "finetune_config", "predict", "Trainer.step", "GPT", "GPT.generate",
          "CharCorruptionDataset", "NameDataset", "learning_rate", "configure_optimizer"]


def timing_note(budget: gates.Budget) -> str:
    """What each stage may use, in the CPU time the budgets count."""
    return (f"For scale, in CPU time (all your code's threads and processes together, which does not depend on what "
            f"else the grading machine runs): the reference pretrains in about {budget.reference_pretrain:.0f} "
            f"CPU-seconds, finetunes in {budget.reference_finetune:.0f} and finetunes from scratch in "
            f"{budget.reference_scratch:.0f} on this grading machine; a stage may use {budget.pretrain:.0f}, "
            f"{budget.finetune:.0f} and {budget.scratch:.0f} CPU-seconds respectively before it is stopped. Speed up "
            "your training step (see the runtime test) if a stage ran out.")


@dataclass
class Retraining:
    """One retraining: the student's process trains, the grader measures (see the module docstring). ``figures``
    and ``notes`` collect what was measured and what to tell the student; ``vocab`` is the student's Vocabulary of
    the corpus (in its worker) and ``size`` its size, once ``run`` has built it; ``known`` is the reference's, which
    the grader's evaluation uses."""

    student: Any
    reference: Any
    world: World
    corpus: str
    seed: int
    budget: gates.Budget
    figures: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    vocab: Any = None
    size: int = 0
    known: Any = field(init=False)

    def __post_init__(self):
        self.known = self.reference.dataset.Vocabulary(self.corpus)

    def run(self) -> None:
        """The student's vocabulary, then both stages; a stage that fails leaves its figures out and says why."""
        try:
            self.vocab = self.student.dataset.Vocabulary(self.corpus)
            self.size = self.vocab.size.get()
        except StudentCodeFailure as exc:
            self.notes.append(f"Vocabulary(corpus) failed, so nothing could be trained: {exc}")
            return
        for stage in (self.pretrained, self.from_scratch):
            try:
                stage()
            except StudentCodeFailure as exc:  # a StudentTimeout says which call ran how long
                self.notes.append(f"{stage.__doc__} failed: {exc}\n{timing_note(self.budget)}")

    def pretrained(self) -> None:
        """Pretraining, the cloze probe, finetuning and held-out predictions"""
        run, world, preset = self.student.run, self.world, THRESHOLDS.preset
        with self.student.cpu_budget(self.budget.pretrain):
            model = run.build_model(THRESHOLDS.variant, self.size, preset, seed=self.seed)
            run.pretrain(model, self.corpus, preset, seed=self.seed, progress=False)
        with self.trained(model) as trained:
            self.figures["pretrain_loss"] = evaluation.pretraining_loss(self.reference, trained, self.corpus, preset,
                                                                        self.seed)
            self.figures["cloze"] = evaluation.cloze(self.reference, trained, self.known,
                                                     world.cloze_items(world.dev))
        with self.student.cpu_budget(self.budget.finetune):
            run.finetune(model, self.vocab, world.pairs(world.train), preset, documents=len(world.bios),
                         pretrained=True, seed=self.seed, progress=False)
        with self.trained(model) as trained:
            self.figures["heldout_em"] = evaluation.accuracy(self.reference, trained, self.known,
                                                             world.pairs(world.dev))
        self.notes.append(f"For information: held-out exact match after pretraining and finetuning was "
                          f"{self.figures['heldout_em']:.0%} (on a world this small it stays near the majority "
                          "baseline).")

    def from_scratch(self) -> None:
        """Finetuning without pretraining"""
        run, train = self.student.run, self.world.pairs(self.world.train)
        with self.student.cpu_budget(self.budget.scratch):
            model = run.build_model(THRESHOLDS.variant, self.size, THRESHOLDS.preset, seed=self.seed)
            run.finetune(model, self.vocab, train, THRESHOLDS.preset, documents=len(self.world.bios),
                         pretrained=False, seed=self.seed, progress=False)
        with self.trained(model) as trained:
            self.figures["scratch_train_acc"] = evaluation.accuracy(self.reference, trained, self.known, train)

    @contextlib.contextmanager
    def trained(self, model) -> Iterator[Any]:
        """The reference's GPT holding the weights of ``model`` (the student's, read with state_dict()). The time
        spent inside is the grader's: the student's deadline moves by it."""
        if not isinstance(model, RemoteObject):
            raise StudentCodeFailure(f"build_model returned a {type(model).__name__}, not a model (a torch.nn.Module)")
        state = model.state_dict()
        started = time.monotonic()
        try:
            with evaluation.one_thread():
                yield evaluation.trained_model(self.reference, state, THRESHOLDS.variant, self.known.size,
                                               THRESHOLDS.preset)
        finally:
            self.student.excuse(time.monotonic() - started)


@graded(points=6, tags=["retraining"], covers=COVERS, builds_on=["masking", "positions"],
        timeout=THRESHOLDS.budget.scaled(gates.MAX_SLOWDOWN).deadline)
def test_retraining(student, reference, parts, seed):
    """Retraining on a secret world: pretraining stores the facts, finetuning learns them"""
    measured = gates.calibration_seconds(reference, THRESHOLDS.preset, THRESHOLDS.variant)
    slowdown = THRESHOLDS.budget.slowdown(measured)
    budget = THRESHOLDS.budget.scaled(slowdown)
    student.time_limit = budget.deadline
    student.deadline = min(student.deadline, time.monotonic() + student.time_limit)
    world = generate_world(f"lm-retraining:{seed}", **SIZES[THRESHOLDS.size])
    corpus = "".join(f"{line}\n" for line in world.bios)
    retraining = Retraining(student, reference, world, corpus, seed, budget)
    if slowdown > 1:
        retraining.notes.append(f"This grading machine's CPU trains {slowdown:.1f}x slower than the one the budgets "
                                "were measured on (the reference's training step, timed here in CPU time), so every "
                                "budget was stretched as much.")
    retraining.run()
    figures, notes = retraining.figures, retraining.notes
    details = "\n".join(note for note in notes if note)
    verdicts = gates.judge(figures, THRESHOLDS.gates)
    parts.figure("cloze probe", figures.get("cloze"), at_least=THRESHOLDS.gates.cloze_min)
    parts.figure("final pretraining loss", figures.get("pretrain_loss"), at_most=THRESHOLDS.gates.pretrain_loss_max)
    parts.figure("finetune-only accuracy", figures.get("scratch_train_acc"),
                 at_least=THRESHOLDS.gates.scratch_train_acc_min)
    for verdict in verdicts:
        with parts(verdict.part, verdict.weight):
            assert verdict.passed, f"{verdict.message}\n{details}".strip()
    passed = [f"- {verdict.part}: {verdict.message}" for verdict in verdicts if verdict.passed]
    if passed:  # the figures of the parts that passed (a failed part's message already holds the details)
        parts.note("\n".join(["What your retraining reached:", *passed, *([details] if parts.all_passed else [])]))

# autograder-hidden-canary-7d3e9a (never ships to students)
