"""pretrain_config and finetune_config ignore lr and the options (max_epochs, batch_size, ...) they are given:
every run trains with the preset's values, so `--pretrain_lr` or a time budget changes nothing."""
# target: run.py
# unnamed: caught by the fields of a config, which no known mistake's output can be told apart by

_pretrain_config, _finetune_config = pretrain_config, finetune_config


def pretrain_config(preset, documents, lr=None, **options):
    return _pretrain_config(preset, documents)


def finetune_config(preset, documents, pretrained, lr=None, **options):
    return _finetune_config(preset, documents, pretrained)

# autograder-hidden-canary-7d3e9a (never ships to students)
