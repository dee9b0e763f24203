"""Hidden: the student's own trainer retrained on a secret world, within a time budget (minutes on a CPU).

The world is generated here from the suite's hidden seed and never written to files: the worker gets
the biographies and questions as strings and runs the student's build_model, pretrain, complete (the
cloze probe), finetune (its learning rate decays over the corpus's documents, one biography a line, as CS224N's
does) and predict; answers come back as strings and are scored here with
autograder.suites.lm.birthplaces. Each training stage gets max_seconds from [retraining.budget] (a multiple of the
reference's time on the sweep's machine), stretched on a slower grading machine by the reference's calibration step
timed here (gates.calibration_seconds), and the calls' deadline covers their sum; the gates and parts are in
../gates.py.
"""

import time

from autograder.grading import StudentCodeFailure, graded
from autograder.suites.lm import gates
from autograder.suites.lm.birthplaces import cloze_match, exact_match
from autograder.suites.lm.world import SIZES, generate_world

THRESHOLDS = gates.load()
SLACK_SECONDS = gates.SLACK_SECONDS  # beyond the training budgets ([retraining.budget] in the lm assignment.toml)
COVERS = ["build_model", "pretrain_config", "finetune_config", "predict", "Trainer.step", "GPT", "GPT.generate",
          "CharCorruptionDataset", "NameDataset", "learning_rate", "configure_optimizer"]


def strings(value, count: int, what: str) -> list[str]:
    """``value`` if it is a list of ``count`` strings, else a failure that says what came back."""
    if not isinstance(value, list | tuple) or len(value) != count or not all(isinstance(v, str) for v in value):
        shown = f"a {type(value).__name__}" + (f" of {len(value)}" if isinstance(value, list | tuple) else "")
        raise AssertionError(f"{what} returned {shown}; expected a list of {count} strings")
    return list(value)


def rate(score: tuple[int, int]) -> float:
    return score[0] / score[1]


def training_note(stage: str, summary, budget: float, reference: float) -> str:
    """A line about a training stage that the time budget stopped (empty when it finished)."""
    if not isinstance(summary, dict) or summary.get("stopped") != "time budget":
        return ""
    return (f"Your {stage} was stopped by its time budget of {budget:.0f} s after {summary.get('epochs')} epoch(s); "
            f"the reference finishes all its epochs in about {reference:.0f} s. Speed up your training step "
            "(see the runtime test) so that training completes.")


def timing_note(budget: gates.Budget) -> str:
    factor = budget.pretrain / budget.reference_pretrain
    return (f"For scale: the reference pretrains in about {budget.reference_pretrain:.0f} s, finetunes in "
            f"{budget.reference_finetune:.0f} s and finetunes from scratch in {budget.reference_scratch:.0f} s on "
            f"this grading machine; each stage may train {factor:g}x that long (at least a minute) before it is "
            "stopped.")


def loss_of(summary) -> float | None:
    loss = summary.get("loss") if isinstance(summary, dict) else None
    return float(loss) if isinstance(loss, int | float) and not isinstance(loss, bool) else None


def pretrained(run, world, corpus: str, vocab, size: int, seed: int, budget: gates.Budget, figures: dict,
               notes: list) -> None:
    """Pretraining, the cloze probe, finetuning and held-out predictions"""
    preset, variant = THRESHOLDS.preset, THRESHOLDS.variant
    model = run.build_model(variant, size, preset, seed=seed)
    summary = run.pretrain(model, corpus, preset, seed=seed, max_seconds=budget.pretrain, progress=False)
    figures["pretrain_loss"] = loss_of(summary)
    notes.append(training_note("pretraining", summary, budget.pretrain, budget.reference_pretrain))
    model.eval()
    prompts, places = zip(*world.cloze_items(world.dev), strict=True)
    completions = run.complete(model, vocab, list(prompts), max(map(len, places)) + 1)
    figures["cloze"] = rate(cloze_match(strings(completions, len(places), "complete"), places))
    heldout = world.pairs(world.dev)
    summary = run.finetune(model, vocab, world.pairs(world.train), preset, documents=len(world.bios), pretrained=True,
                           seed=seed, max_seconds=budget.finetune, progress=False)
    notes.append(training_note("finetuning", summary, budget.finetune, budget.reference_finetune))
    answers = run.predict(model, vocab, [q for q, _ in heldout])
    figures["heldout_em"] = rate(exact_match(strings(answers, len(heldout), "predict"), [a for _, a in heldout]))
    notes.append(f"For information: held-out exact match after pretraining and finetuning was "
                 f"{figures['heldout_em']:.0%} (on a world this small it stays near the majority baseline).")


def from_scratch(run, world, corpus: str, vocab, size: int, seed: int, budget: gates.Budget, figures: dict,
                 notes: list) -> None:
    """Finetuning without pretraining"""
    train = world.pairs(world.train)
    model = run.build_model(THRESHOLDS.variant, size, THRESHOLDS.preset, seed=seed)
    summary = run.finetune(model, vocab, train, THRESHOLDS.preset, documents=len(world.bios), pretrained=False,
                           seed=seed, max_seconds=budget.scratch, progress=False)
    notes.append(training_note("finetuning from scratch", summary, budget.scratch, budget.reference_scratch))
    answers = run.predict(model, vocab, [q for q, _ in train])
    figures["scratch_train_acc"] = rate(exact_match(strings(answers, len(train), "predict"), [a for _, a in train]))


@graded(points=6, tags=["retraining"], covers=COVERS, builds_on=["masking", "positions"],
        timeout=gates.MAX_SLOWDOWN * THRESHOLDS.budget.training + SLACK_SECONDS)
def test_retraining(student, reference, parts, seed):
    """Retraining on a secret world: pretraining stores the facts, finetuning learns them"""
    measured = gates.calibration_seconds(reference, THRESHOLDS.preset, THRESHOLDS.variant)
    slowdown = THRESHOLDS.budget.slowdown(measured)
    budget = THRESHOLDS.budget.scaled(slowdown)
    student.time_limit = budget.training + SLACK_SECONDS
    student.deadline = min(student.deadline, time.monotonic() + student.time_limit)
    world = generate_world(f"lm-retraining:{seed}", **SIZES[THRESHOLDS.size])
    corpus = "".join(f"{line}\n" for line in world.bios)
    figures, notes = {}, []
    if slowdown > 1:
        notes.append(f"This grading machine trains {slowdown:.1f}x slower than the one the time budgets were measured "
                     "on (the reference's training step, timed here), so every budget was stretched as much.")
    try:
        vocab = student.dataset.Vocabulary(corpus)
        size = vocab.size.get()
    except StudentCodeFailure as exc:
        notes.append(f"Vocabulary(corpus) failed, so nothing could be trained: {exc}")
    else:
        for stage in (pretrained, from_scratch):
            try:
                stage(student.run, world, corpus, vocab, size, seed, budget, figures, notes)
            except StudentCodeFailure as exc:  # a StudentTimeout says which call ran how long
                notes.append(f"{stage.__doc__} failed: {exc}\n{timing_note(budget)}")
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
