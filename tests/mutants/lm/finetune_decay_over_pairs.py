"""Finetuning decays the learning rate over the question-answer pairs (final_tokens = decay_epochs * pairs *
block_size): CS224N decays finetuning over the PRETRAINING corpus too, 200 * len(pretrain_dataset) * block_size, so
that finetuning's few epochs hardly decay."""
# target: run.py


def finetune(model, vocab, pairs, preset="cpu", *, documents, pretrained=True, lr=None, seed=0, **options):
    dataset = NameDataset(pairs, vocab, get_preset(preset).block_size)
    config = finetune_config(preset, len(dataset), pretrained, lr, seed=seed, **options)
    return Trainer(model, dataset, None, config).train()

# autograder-hidden-canary-7d3e9a (never ships to students)
