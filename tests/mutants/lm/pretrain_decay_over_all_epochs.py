"""pretrain_config decays the learning rate over all pretrain_epochs epochs (final_tokens = pretrain_epochs *
documents * block_size): CS224N decays over 200 epochs of the corpus (final_tokens = 200 * len(pretrain_dataset) *
block_size, the preset's decay_epochs), fewer than its 650 pretraining epochs."""
# target: run.py


def pretrain_config(preset, documents, lr=None, **options):
    p = get_preset(preset)
    fields = dict(max_epochs=p.pretrain_epochs, batch_size=p.pretrain_batch_size,
                  learning_rate=lr if lr is not None else p.pretrain_lr, lr_decay=True, warmup_tokens=p.warmup_tokens,
                  final_tokens=p.pretrain_epochs * documents * p.block_size, num_workers=p.num_workers,
                  autocast=p.autocast)
    return TrainerConfig(**{**fields, **options})

# autograder-hidden-canary-7d3e9a (never ships to students)
