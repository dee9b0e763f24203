"""The lm suite's naming experiments (``autograder.grading.naming``): the carried positions.py's and masking.py's
(the positions suite's probes), then, for each function of this assignment whose answer is a value, a family of
fixed inputs, the ordinary and those where known mistakes part ways (pad and mask-id targets, a sequence generated
past block_size, another rope_base, a decay of one token, steps counted in tokens, a small gradient clip, pairs
with non-ASCII letters, configs given options). Which input confirms which mistake is derived from the values,
never written here: add inputs where a new mistake could hide, not mistakes. Every probe is small (models of width
8 at most, a step or two): it runs on every implementation of the catalogue, the carried files' mistakes included,
once per batch (about 45 ms of one thread each: 7 s for the reference and the 144 known mistakes).

Left without a family: what is random by design (CharCorruptionDataset's draws) or judged by its runtime or by a
retraining: those mistakes are named on a test alone, or not at all, as before probes. A trainer's parameters after
its steps are returned as their change over how far AdamW may move them (float32): a correct trainer whose loss is
computed in float32 lands within its tolerances, a mistake far outside (``common.assert_state_close``'s reasoning).
"""

from dataclasses import asdict

import torch

from autograder.grading import Probe
from autograder.suites.lm import common
from autograder.suites.lm.common import Shape
from autograder.suites.positions.probes import PROBES as POSITIONS_PROBES

SHAPE = Shape()  # vocab 13, block_size 12, 2 layers of 2 heads, width 8
STEP_SHAPE = Shape(vocab_size=9, block_size=8, n_layer=1, n_embd=4)
SCHEDULE = dict(learning_rate=6e-3, lr_decay=True, warmup_tokens=1000, final_tokens=11000)
TEXT = "Who is Ab?\tUlm\nWho is Cid?\tRome\nAb was born in Ulm.\n"
PRESET = dict(n_layer=1, n_head=2, n_embd=8, block_size=20, dropout=0.0, pretrain_epochs=7, pretrain_batch_size=2,
              pretrain_lr=1e-2, finetune_epochs=1, scratch_epochs=3, finetune_batch_size=2, finetune_lr=1e-2,
              warmup_tokens=1, decay_epochs=1, num_workers=0, autocast="off")  # runs of one small step
PAIRS = [("Who is Ab?", "Ulm"), ("Who is C\u00eed?", "Rome"), ("Who is Ed?", "\u00d6slo"), ("Who was Flo?", "Bonn")]


def _vocabulary(impl):
    vocab = impl.dataset.Vocabulary(TEXT)
    ids = torch.tensor([0, 1, *vocab.encode("Who is Ab?").tolist(), 1, 0, 0])
    return common.value(vocab.itos), vocab.encode("Ab was born in Rome."), vocab.decode(ids)


def _name_items(block_size):
    def probe(impl):
        data = impl.dataset.NameDataset(PAIRS, impl.dataset.Vocabulary(TEXT + "".join(q + a for q, a in PAIRS)),
                                        block_size)
        return [data.example(i) for i in range(len(PAIRS))], [data.item(i) for i in range(len(PAIRS))]
    return probe


def _gpt(variant, seed, *, dtype=torch.float64, shape=SHAPE, mask_targets=False):
    """Logits and loss on (3, 7) ids with pad targets (``mask_targets``: some targets are the mask id 1)."""
    state = common.gpt_state(shape, variant, seed, dtype)
    x = common.tokens(3, 7, shape.vocab_size, seed + 1)
    y = common.targets(3, 7, shape.vocab_size, seed + 1)
    if mask_targets:
        y[:, 1::3] = 1

    def probe(impl):
        logits, loss = common.gpt(impl, shape, variant, state)(x, y)
        return logits, float(loss)  # the number: assert_loss accepts a loss of one element in any shape
    return probe


def _rope_base(base, seed):
    state = common.gpt_state(SHAPE, "rope", seed, torch.float64)
    x = common.tokens(2, SHAPE.block_size, SHAPE.vocab_size, seed + 1)

    def probe(impl):
        model = impl.model.GPT(impl.model.GPTConfig(**asdict(SHAPE), dropout=0.0, variant="rope", rope_base=base))
        model.double()
        model.load_state_dict(state)
        model.eval()
        return model(x)[0]
    return probe


def _in_training(module, seed):
    """A Block's or a GPT's output in training mode with dropout 0.5, its dropout drawn after torch.manual_seed(0)."""
    if module == "Block":
        state = common.block_state(SHAPE.n_embd, seed)
        x = torch.randn(2, 5, SHAPE.n_embd, generator=common.generator(seed + 1))
    else:
        state = common.gpt_state(SHAPE, "vanilla", seed)
        x = common.tokens(2, 6, SHAPE.vocab_size, seed + 1)

    def probe(impl):
        built = (common.block if module == "Block" else common.gpt)(impl, SHAPE, "vanilla", state, dropout=0.5,
                                                                     train=True)
        impl.model.torch.manual_seed(0)  # after building, in the implementation's own process
        out = built(x)
        return out if module == "Block" else out[0]
    return probe


def _block(variant, seed, n_embd=8, n_head=2):
    shape = Shape(n_embd=n_embd, n_head=n_head)
    state = common.block_state(n_embd, seed, torch.float64)
    x = torch.randn(2, 5, n_embd, generator=common.generator(seed + 1), dtype=torch.float64)

    def probe(impl):
        return common.block(impl, shape, variant, state)(x)
    return probe


def _generate(variant, seed, new, **sampling):
    state = common.gpt_state(SHAPE, variant, seed, torch.float64)
    prompt = common.tokens(3, 4, SHAPE.vocab_size, seed + 1)

    def probe(impl):
        model = common.gpt(impl, SHAPE, variant, state)
        if not sampling:
            return model.generate(prompt, new)
        rng = impl.model.torch.Generator().manual_seed(seed + 2)
        return model.generate(prompt, new, sample=True, generator=rng, **sampling)
    return probe


def _rates(counts, **schedule):
    def probe(impl):
        config = impl.trainer.TrainerConfig(**schedule)
        return [float(impl.trainer.learning_rate(t, config)) for t in counts]
    return probe


def _groups(impl):
    model = common.gpt(impl, STEP_SHAPE, "vanilla", common.gpt_state(STEP_SHAPE, "vanilla", 90))
    config = impl.trainer.TrainerConfig(weight_decay=0.25, learning_rate=1e-3, betas=(0.8, 0.9))
    groups = common.value(impl.trainer.configure_optimizer(model, config).param_groups)
    return [(float(g["weight_decay"]), float(g["lr"]), [float(b) for b in g["betas"]],
             [list(p.shape) for p in g["params"]]) for g in groups]


def _steps(seed, steps=2, clip=0.05):
    """Steps of a float64 vanilla GPT in warm-up (24 tokens each): the losses, the rate and token count set, the
    gradients' norm after clipping, and each parameter's change over the rates' sum (float32, in state_dict order)."""
    state = common.gpt_state(STEP_SHAPE, "vanilla", seed, torch.float64)
    x = common.tokens(4, 6, STEP_SHAPE.vocab_size, seed + 1)
    y = common.targets(4, 6, STEP_SHAPE.vocab_size, seed + 1)
    moved = sum(SCHEDULE["learning_rate"] * step * 24 / SCHEDULE["warmup_tokens"] for step in range(1, steps + 1))

    def probe(impl):
        model = common.gpt(impl, STEP_SHAPE, "vanilla", state, train=True)
        trainer = common.trainer(impl, model, weight_decay=0.3, grad_norm_clip=clip, **SCHEDULE)
        losses = [float(trainer.step(x, y)) for _ in range(steps)]
        after = model.state_dict()
        change = [((after[name] - state[name]) / moved).float() for name in state]
        return (losses, float(common.value(trainer.optimizer.param_groups)[0]["lr"]),
                int(common.value(trainer.tokens)), common.grad_norm(model, list(state)), change)
    return probe


def _config(kind, documents, *args, **options):
    """The fields of the config ``<kind>_config`` makes from PRESET (its decay and pretraining epochs differ)."""
    fields = ("max_epochs", "batch_size", "learning_rate", "lr_decay", "warmup_tokens", "final_tokens")

    def probe(impl):
        config = getattr(impl.run, f"{kind}_config")(impl.run.Preset(**PRESET), documents, *args, **options)
        return [float(common.value(getattr(config, field))) for field in fields]
    return probe


FINETUNE_SHAPE = Shape(vocab_size=len(set(TEXT)) + 2, block_size=20, n_layer=1, n_head=2, n_embd=8)
def _finetune_step(documents):
    """How far finetune's first step moves a float64 GPT, over the preset's rate (the median element's |change|: a
    first AdamW step moves an element by about its rate), decaying over ``documents`` of the corpus."""
    state = common.gpt_state(FINETUNE_SHAPE, "vanilla", 95, torch.float64)
    pairs = [("Who is Ab?", "Ulm"), ("Who is Cid?", "Rome")]

    def probe(impl):
        model = common.gpt(impl, FINETUNE_SHAPE, "vanilla", state, train=True)
        impl.run.finetune(model, impl.dataset.Vocabulary(TEXT), pairs, impl.run.Preset(**PRESET),
                          documents=documents, pretrained=True, seed=0, device="cpu", progress=False, max_steps=1)
        after = model.state_dict()
        moved = torch.cat([(after[name] - state[name]).abs().flatten() for name in state])
        return float(moved.median()) / PRESET["finetune_lr"]
    return probe


COUNTS = [0, 1, 250, 999, 1000, 1001, 3500, 6000, 9000, 10999, 11000, 12000, 16000, 21000, 50000]

PROBES = [
    *POSITIONS_PROBES,  # the carried positions.py's and masking.py's: a mistake there is told from one here
    Probe("Vocabulary", "itos, encode, decode with pads and masks", _vocabulary),
    Probe("finetune_example", "room left", lambda impl: impl.dataset.finetune_example("Who is Ab?", "Ulm", 20)),
    Probe("finetune_example", "an exact fit", lambda impl: impl.dataset.finetune_example("Who is Ab?", "Ulm", 15)),
    Probe("NameDataset", "non-ASCII letters, block_size 24", _name_items(24)),
    Probe("NameDataset", "block_size 18, the last pair an exact fit", _name_items(18)),
    Probe("Block", "vanilla, width 8, 2 heads", _block("vanilla", 40)),
    Probe("Block", "rope, width 12, 3 heads", _block("rope", 41, 12, 3)),
    Probe("Block", "training mode, dropout 0.5", _in_training("Block", 42)),
    Probe("GPT", "vanilla, pad targets", _gpt("vanilla", 50)),
    Probe("GPT", "rope, pad targets", _gpt("rope", 51)),
    Probe("GPT", "vanilla, float32", _gpt("vanilla", 52, dtype=torch.float32)),
    Probe("GPT", "targets holding the mask id", _gpt("vanilla", 53, mask_targets=True)),
    Probe("GPT", "rope_base 50", _rope_base(50.0, 54)),
    Probe("GPT", "training mode, dropout 0.5", _in_training("GPT", 55)),
    Probe("GPT.generate", "greedy past block_size, vanilla", _generate("vanilla", 70, 10)),
    Probe("GPT.generate", "greedy past block_size, rope", _generate("rope", 71, 10)),
    Probe("GPT.generate", "sampled, temperature 1.5, top_k 4", _generate("vanilla", 75, 4, temperature=1.5, top_k=4)),
    Probe("GPT.generate", "sampled, temperature 0.5", _generate("vanilla", 76, 4, temperature=0.5)),
    Probe("learning_rate", "warm-up 1000, final 11000", _rates(COUNTS, **SCHEDULE)),
    Probe("learning_rate", "lr_decay off", _rates(COUNTS, **{**SCHEDULE, "lr_decay": False})),
    Probe("learning_rate", "a decay of one token", _rates([0, 5, 10, 11, 12, 13], learning_rate=1e-3, lr_decay=True,
                                                           warmup_tokens=10, final_tokens=11)),
    Probe("learning_rate", "no warm-up", _rates([0, 1, 50, 100, 150], learning_rate=1e-3, lr_decay=True,
                                                 warmup_tokens=0, final_tokens=100)),
    Probe("configure_optimizer", "weight_decay 0.25, betas (0.8, 0.9)", _groups),
    Probe("Trainer.step", "two steps in warm-up, clipped to 0.05", _steps(91)),
    Probe("pretrain_config", "40 documents", _config("pretrain", 40)),
    Probe("pretrain_config", "lr and options given", _config("pretrain", 40, 1e-3, max_epochs=3, batch_size=5)),
    Probe("finetune_config", "pretrained", _config("finetune", 40, True)),
    Probe("finetune_config", "from scratch, options given", _config("finetune", 40, False, 2e-3, batch_size=3)),
    Probe("finetune", "the first step's rate, 40 documents", _finetune_step(40)),
]
