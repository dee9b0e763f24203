"""Hidden: the training step's and generation's runtime and peak memory, as ratios to the reference in the
same run (autograder.grading.timing: alternating rounds, fastest rounds compared; on a GPU grader the worker
synchronises CUDA).

Both sides get the same model shape, weights and batches: training steps from the same initial weights on
fresh batches of the same shape each round, and greedy generation for a batch of prompts. The limits are generous,
as in masking's runtime test: they catch Python loops over batch items or positions and copies far larger
than the computation needs, not a batched implementation written differently from the reference.
"""

from autograder.grading import graded, timing
from autograder.suites.lm import common
from autograder.suites.lm.common import Shape

# A small model and large batches: the per-call cost of a Python loop over the batch shows plainly (on a CPU a
# loop over the rows of a larger model costs little more than the batched matrix products).
SHAPE = Shape(vocab_size=32, block_size=32, n_layer=1, n_head=2, n_embd=16)
BATCH = 256
PROMPTS, PROMPT_LENGTH, NEW_TOKENS = 32, 8, 8
MAX_TIME_RATIO, MAX_MEMORY_RATIO = 5, 4
ROUNDS = 5  # every mutant is graded with this test too: keep it cheap


def _on(model, device: str):
    return model.to(device) if device != "cpu" else model


@graded(points=2, covers=["Trainer.step", "GPT", "configure_optimizer", "learning_rate"], tags=["runtime"],
        timeout=180, builds_on=["masking", "positions"])
def test_training_step_runtime(student, reference_student, device, parts, seed):
    """Trainer.step: time and peak memory within a few times the reference's"""
    state = common.gpt_state(SHAPE, "vanilla", seed)

    def step(impl):
        model = _on(common.gpt(impl, SHAPE, "vanilla", state, train=True), device)
        config = impl.trainer.TrainerConfig(device=device, autocast="auto", progress=False, batch_size=BATCH,
                                            learning_rate=1e-3, lr_decay=True, warmup_tokens=BATCH * SHAPE.block_size,
                                            final_tokens=100 * BATCH * SHAPE.block_size)
        return impl.trainer.Trainer(model, [], None, config).step

    def inputs(round_index: int):
        x = common.tokens(BATCH, SHAPE.block_size, SHAPE.vocab_size, seed + 100 + round_index)
        return (x, common.targets(BATCH, SHAPE.block_size, SHAPE.vocab_size, seed + 200 + round_index)), {}

    comparison = timing.compare(step(student), step(reference_student), inputs, device=device, rounds=ROUNDS,
                                max_time_ratio=MAX_TIME_RATIO,
                                what=f"Trainer.step on a batch of {BATCH} x {SHAPE.block_size} tokens "
                                     f"({SHAPE.n_layer} layer{'s' * (SHAPE.n_layer != 1)}, width {SHAPE.n_embd})")
    timing.grade(comparison, parts, max_time_ratio=MAX_TIME_RATIO, max_memory_ratio=MAX_MEMORY_RATIO)


@graded(points=2, covers=["GPT.generate", "GPT"], tags=["runtime"], timeout=180, builds_on=["masking", "positions"])
def test_generate_runtime(student, reference_student, device, parts, seed):
    """GPT.generate: greedy decoding of a batch, time and peak memory within a few times the reference's"""
    state = common.gpt_state(SHAPE, "vanilla", seed + 1)

    def generate(impl):
        return _on(common.gpt(impl, SHAPE, "vanilla", state), device).generate

    def inputs(round_index: int):
        prompts = common.tokens(PROMPTS, PROMPT_LENGTH, SHAPE.vocab_size, seed + 300 + round_index)
        return (prompts, NEW_TOKENS), {}

    comparison = timing.compare(generate(student), generate(reference_student), inputs, device=device, rounds=ROUNDS,
                                max_time_ratio=MAX_TIME_RATIO,
                                what=f"GPT.generate of {NEW_TOKENS} tokens for {PROMPTS} prompts of {PROMPT_LENGTH}")
    timing.grade(comparison, parts, max_time_ratio=MAX_TIME_RATIO, max_memory_ratio=MAX_MEMORY_RATIO)


# autograder-hidden-canary-7d3e9a (never ships to students)
