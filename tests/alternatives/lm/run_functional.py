"""run.py's functions written another way: configurations built by dataclasses.replace on a TrainerConfig made from
the preset's shared fields, build_model through a dict of the preset's shape, predict through str.partition, and
exact_match counted with map over stripped strings.

Style: a student who builds one base configuration and derives the two stages from it (as Hugging Face's
TrainingArguments are copied and changed), instead of writing each config in full. The values are the reference's
(the presets and the docstrings fix every field), so training is unchanged and validate does not retrain it.
Written from scratch for this catalogue.
"""
# target: run.py
import dataclasses


def build_model(variant, vocab_size, preset="cpu", seed=0):
    p = get_preset(preset)
    shape = {name: getattr(p, name) for name in ("block_size", "n_layer", "n_head", "n_embd", "dropout")}
    torch.random.manual_seed(seed)
    return GPT(GPTConfig(vocab_size=vocab_size, variant=variant, **shape))


def _base(p, documents, options):
    base = TrainerConfig(lr_decay=True, warmup_tokens=p.warmup_tokens, num_workers=p.num_workers,
                         autocast=p.autocast, final_tokens=p.decay_epochs * documents * p.block_size)
    return base, options


def pretrain_config(preset, documents, lr=None, **options):
    p = get_preset(preset)
    base, options = _base(p, documents, options)
    stage = dataclasses.replace(base, max_epochs=p.pretrain_epochs, batch_size=p.pretrain_batch_size,
                                learning_rate=p.pretrain_lr if lr is None else lr)
    return dataclasses.replace(stage, **options)


def finetune_config(preset, documents, pretrained, lr=None, **options):
    p = get_preset(preset)
    base, options = _base(p, documents, options)
    epochs = p.finetune_epochs if pretrained else p.scratch_epochs
    stage = dataclasses.replace(base, max_epochs=epochs, batch_size=p.finetune_batch_size,
                                learning_rate=p.finetune_lr if lr is None else lr)
    return dataclasses.replace(stage, **options)


def predict(model, vocab, questions, max_new_tokens=32):
    model.train(False)
    prompts = [f"{question}{MASK_CHAR}" for question in questions]
    return [text.partition(MASK_CHAR)[0] for text in complete(model, vocab, prompts, max_new_tokens, stop=MASK_CHAR)]


def exact_match(predictions, answers):
    if len(predictions) != len(answers):
        raise ValueError(f"got {len(predictions)} predictions but {len(answers)} answers: one prediction per answer")
    same = map(lambda pair: pair[0].strip() == pair[1].strip(), zip(predictions, answers, strict=True))
    return sum(same), len(answers)

# autograder-hidden-canary-7d3e9a (never ships to students)
