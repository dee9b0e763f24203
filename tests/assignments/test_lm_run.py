"""The LM reference's run.py: presets, the runs on data in memory, prediction, and the CS224N command line."""

from __future__ import annotations

import csv
import logging

import pytest
import torch
from support.lm import (
    corpus,
    one_thread,  # noqa: F401 - an autouse fixture
    reference,
    tiny_preset,
    tiny_world,
)

from autograder.suites.lm import birthplaces
from autograder.suites.lm.world import write_world

ref = reference()
run = ref.run
MASK = ref.dataset.MASK_CHAR


def test_presets():
    gpu = run.get_preset("gpu")
    assert (gpu.n_layer, gpu.n_head, gpu.n_embd, gpu.block_size) == (4, 8, 256, 128)
    assert (gpu.pretrain_epochs, gpu.pretrain_batch_size, gpu.pretrain_lr, gpu.finetune_lr) == (650, 128, 6e-3, 6e-4)
    assert (gpu.finetune_epochs, gpu.scratch_epochs, gpu.finetune_batch_size, gpu.dropout) == (10, 75, 256, 0.1)
    assert (gpu.warmup_tokens, gpu.decay_epochs, gpu.num_workers) == (512 * 20, 200, 4)
    cpu = run.get_preset("cpu")
    assert cpu.dropout == 0.0 and cpu.autocast == "off" and cpu.block_size == 128 and cpu.num_workers == 0
    assert cpu.decay_epochs == cpu.pretrain_epochs
    with pytest.raises(ValueError, match="cpu, gpu"):
        run.get_preset("tpu")


def test_gpu_configs_are_the_cs224n_recipe():
    """CS224N's run.py: final_tokens = 200 * len(pretrain_dataset) * block_size for pretraining AND finetuning."""
    documents = 2937  # len(CharCorruptionDataset) on the real wiki.txt: its non-empty lines
    pre = run.pretrain_config("gpu", documents)
    tuned, scratch = (run.finetune_config("gpu", documents, pretrained) for pretrained in (True, False))
    assert (pre.max_epochs, pre.batch_size, pre.learning_rate, pre.lr_decay, pre.num_workers) == (650, 128, 6e-3,
                                                                                                   True, 4)
    assert (tuned.max_epochs, scratch.max_epochs, tuned.batch_size, tuned.learning_rate) == (10, 75, 256, 6e-4)
    for config in (pre, tuned, scratch):
        assert (config.warmup_tokens, config.final_tokens, config.num_workers) == (10240, 75_187_200, 4)


def test_configs_follow_the_preset():
    preset = tiny_preset(decay_epochs=5)
    pre = run.pretrain_config(preset, documents=30, lr=1e-2, max_seconds=9.0)
    assert (pre.max_epochs, pre.batch_size, pre.learning_rate, pre.lr_decay) == (2, 8, 1e-2, True)
    assert pre.final_tokens == 5 * 30 * 64 and pre.warmup_tokens == 512 and pre.max_seconds == 9.0
    tuned = run.finetune_config(preset, documents=30, pretrained=True)
    scratch = run.finetune_config(preset, documents=30, pretrained=False)
    assert (tuned.max_epochs, scratch.max_epochs, tuned.learning_rate) == (2, 3, 1e-3)
    assert tuned.final_tokens == scratch.final_tokens == 5 * 30 * 64 and tuned.num_workers == 0


class Decayed(Exception):
    """Raised by a stand-in finetune_config with the document count it was given."""


def test_finetuning_decays_over_the_pretraining_corpus(monkeypatch, files):
    """experiment and the command line give finetune_config the corpus's document count, never the number of pairs."""
    def config(preset, documents, pretrained, lr=None, **options):
        raise Decayed(documents)

    monkeypatch.setattr(run, "finetune_config", config)
    world, documents = tiny_world(), len(ref.dataset.split_documents(corpus()))
    with pytest.raises(Decayed) as decayed:
        run.experiment(corpus(), world.pairs(world.train)[:3], [], "vanilla", tiny_preset(), pretraining=False)
    assert decayed.value.args == (documents,) and documents != 3
    with pytest.raises(Decayed) as decayed:
        run.main(["finetune", "vanilla", str(files["wiki"]), "--preset", "tiny", "--writing_params_path", "x",
                  "--finetune_corpus_path", str(files["train"])])
    assert decayed.value.args == (len(ref.dataset.split_documents(files["wiki"].read_text(encoding="utf-8"))),)


def test_build_model_is_reproducible():
    first = run.build_model("rope", 30, tiny_preset(), seed=4)
    second = run.build_model("rope", 30, tiny_preset(), seed=4)
    assert first.config.variant == "rope" and first.config.n_layer == 1
    assert all(torch.equal(a, b) for a, b in zip(first.state_dict().values(), second.state_dict().values(),
                                                  strict=True))


class Scripted(torch.nn.Module):
    """A stand-in model whose generate appends a fixed text: tests the decoding around it."""

    def __init__(self, vocab, text: str):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.zeros(1))
        self.vocab, self.text, self.calls = vocab, text, []

    def generate(self, idx, max_new_tokens, stop_id=None, **_):
        self.calls.append((idx.shape, stop_id))
        extra = self.vocab.encode(self.text)[:max_new_tokens]
        return torch.cat([idx, extra.expand(idx.shape[0], -1)], dim=1)


def test_predict_takes_the_text_between_the_masks():
    vocab = ref.dataset.Vocabulary(corpus())
    questions = ["Where was Ab born?", "Where was Cd born?", "Where was Efg born?"]
    model = Scripted(vocab, f"Rome{MASK}tail")
    assert run.predict(model, vocab, questions) == ["Rome"] * 3
    assert [shape[0] for shape, _ in model.calls] == [2, 1], "questions of equal length are batched"
    assert all(stop == vocab.stoi[MASK] for _, stop in model.calls)
    assert not model.training
    assert run.predict(Scripted(vocab, "Rome and on"), vocab, questions[:1]) == ["Rome and on"]
    assert run.exact_match(["Rome", " Oslo "], ["Rome", "Oslo"]) == (2, 2)
    with pytest.raises(ValueError):
        run.exact_match(["Rome"], [])


def test_experiment_on_data_in_memory():
    """What the grader's retraining route calls: everything from strings, within a time budget."""
    world = tiny_world()
    questions = [q for q, _ in world.pairs(world.dev)]
    prompts = [prompt for prompt, _ in world.cloze_items(world.dev)]
    result = run.experiment(corpus(), world.pairs(world.train), questions, "rope", tiny_preset(), seed=1,
                            max_seconds=60, probes=prompts, probe_tokens=5)
    assert len(result["probes"]) == len(prompts) and all(len(c) == 5 for c in result["probes"])
    assert len(result["predictions"]) == len(questions) and all(isinstance(p, str) for p in result["predictions"])
    assert result["pretrain"]["epochs"] == 2 and result["finetune"]["epochs"] == 2
    assert result["seconds"] < 60
    scratch = run.experiment(corpus(), world.pairs(world.train), questions, "vanilla",
                             tiny_preset(scratch_epochs=10_000), pretraining=False, max_seconds=2.0)
    assert scratch["pretrain"] is None and scratch["probes"] is None
    assert scratch["finetune"]["stopped"] == "time budget"
    assert scratch["seconds"] < 4.0


def test_finetuning_memorises_the_training_people():
    """A sanity check that the pieces fit: finetuning alone learns the training answers."""
    world = tiny_world()
    pairs = world.pairs(world.train)[:8]
    vocab = ref.dataset.Vocabulary(corpus())
    preset = tiny_preset(n_embd=32, scratch_epochs=150, finetune_lr=3e-3, warmup_tokens=1)
    model = run.build_model("vanilla", vocab.size, preset)
    run.finetune(model, vocab, pairs, preset, documents=len(pairs), pretrained=False, progress=False)
    correct, total = run.exact_match(run.predict(model, vocab, [q for q, _ in pairs]), [a for _, a in pairs])
    assert correct >= 6, f"{correct}/{total}"


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setitem(run.PRESETS, "tiny", tiny_preset())
    monkeypatch.chdir(tmp_path)
    return write_world(tiny_world(), tmp_path / "data", tmp_path / "instructor")


def test_command_line_pretrain_finetune_evaluate(files, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    common = ["vanilla", str(files["wiki"]), "--preset", "tiny", "--no_progress"]
    assert run.main(["pretrain", *common, "--writing_params_path", "pre.params", "--pretrain_lr", "0.01"]) == 0
    log = tmp_path / "expt" / "pretrain" / "run_vanilla_pt_lr_0.010000_ft_lr_0.001000.csv"
    assert log.is_file() and log.with_suffix(".png").is_file()
    assert len(list(csv.DictReader(open(log)))) > 0
    assert run.main(["finetune", *common, "--reading_params_path", "pre.params", "--writing_params_path",
                     "tuned.params", "--finetune_corpus_path", str(files["train"])]) == 0
    assert run.main(["evaluate", *common, "--reading_params_path", "tuned.params", "--eval_corpus_path",
                     str(files["dev"]), "--outputs_path", "dev.predictions"]) == 0
    predictions = birthplaces.read_predictions(tmp_path / "dev.predictions")
    assert len(predictions) == len(tiny_world().dev)
    assert "Correct:" in caplog.text and " out of 10" in caplog.text
    assert run.main(["evaluate", *common, "--reading_params_path", "tuned.params", "--eval_corpus_path",
                     str(files["test_inputs"]), "--outputs_path", "test.predictions"]) == 0
    assert "no targets provided" in caplog.text
    assert len((tmp_path / "test.predictions").read_text().splitlines()) == 10


def test_command_line_resume_and_baseline(files, tmp_path, caplog):
    caplog.set_level(logging.INFO)
    common = ["rope", str(files["wiki"]), "--preset", "tiny", "--no_progress", "--writing_params_path", "p.params"]
    assert run.main(["pretrain", *common, "--max_seconds", "0.01"]) == 0
    stopped = torch.load("p.params.ckpt", weights_only=False)
    assert stopped["steps"] >= 1 and "time budget" in caplog.text
    assert run.main(["pretrain", *common, "--resume"]) == 0
    finished = torch.load("p.params.ckpt", weights_only=False)
    assert finished["epoch"] == 2 and finished["steps"] > stopped["steps"]
    caplog.clear()
    assert run.main(["baseline", "vanilla", str(files["wiki"]), "--eval_corpus_path", str(files["dev"]),
                     "--finetune_corpus_path", str(files["train"]), "--outputs_path", "base.predictions"]) == 0
    majority = birthplaces.majority_answer([a for _, a in birthplaces.read_pairs(files["train"])])
    assert set(birthplaces.read_predictions(tmp_path / "base.predictions")) == {majority}
    assert "Correct:" in caplog.text


def test_command_line_refuses_missing_paths(files):
    with pytest.raises(SystemExit, match="writing_params_path"):
        run.main(["pretrain", "vanilla", str(files["wiki"]), "--preset", "tiny"])
    with pytest.raises(SystemExit, match="finetune_corpus_path"):
        run.main(["finetune", "vanilla", str(files["wiki"]), "--preset", "tiny", "--writing_params_path", "x"])


def test_command_line_takes_both_styles():
    """run.py pretrain vanilla wiki.txt, or CS224N's --function=pretrain --variant=vanilla --pretrain_corpus_path=..."""
    positional = run.parse_args(["finetune", "rope", "wiki.txt", "--preset", "gpu"])
    options = run.parse_args(["--function=finetune", "--variant=rope", "--preset", "gpu",
                              "--pretrain_corpus_path=wiki.txt"])
    assert vars(positional) == vars(options)
    assert (options.function, options.variant, options.pretrain_corpus_path) == ("finetune", "rope", "wiki.txt")
    spaced = run.parse_args(["--variant", "vanilla", "--function", "evaluate", "--pretrain_corpus_path", "w.txt"])
    assert (spaced.function, spaced.variant) == ("evaluate", "vanilla")


@pytest.mark.parametrize("argv, message", [
    (["pretrain", "--variant=vanilla", "wiki.txt"], "not mixed"),
    (["pretrain", "vanilla", "--pretrain_corpus_path=wiki.txt"], "not mixed"),
    (["pretrain", "vanilla"], "got 2 positional"),
    (["--function=pretrain", "--variant=vanilla"], "required: --pretrain_corpus_path"),
    (["train", "vanilla", "wiki.txt"], "argument function: invalid choice: 'train'"),
    (["--function=pretrain", "--variant=gpt2", "--pretrain_corpus_path=w"], "argument --variant: invalid choice"),
    ([], "required: --function, --variant, --pretrain_corpus_path"),
])
def test_command_line_refuses_mixed_or_missing_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as exited:
        run.parse_args(argv)
    assert exited.value.code == 2 and message in capsys.readouterr().err


def test_reading_examples_like_the_cs224n_files(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text("Where was A born?\tOslo\nWhere was B C born?   New York\nWhere was D born?\n\n", encoding="utf-8")
    assert run.read_examples(path) == [("Where was A born?", "Oslo"), ("Where was B C born?", "New York"),
                                       ("Where was D born?", None)]
