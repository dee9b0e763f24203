"""The LM reference's model: shapes, parameter names, causality, the loss, generation."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from support.lm import (
    one_thread,  # noqa: F401 - an autouse fixture
    reference,
)

ref = reference()
model_module = ref.model


def make(variant: str = "vanilla", **changes) -> torch.nn.Module:
    config = dict(vocab_size=11, block_size=16, n_layer=2, n_head=2, n_embd=8, dropout=0.0, variant=variant)
    torch.manual_seed(0)
    return model_module.GPT(model_module.GPTConfig(**{**config, **changes})).eval()


@pytest.mark.parametrize("variant", ["vanilla", "rope"])
def test_shapes_and_parameter_names(variant):
    model = make(variant)
    names = set(model.state_dict())
    assert {"tok_emb.weight", "ln_f.weight", "head.weight", "blocks.1.attn.query.weight", "blocks.0.mlp.0.weight",
            "blocks.0.mlp.2.weight", "blocks.0.ln1.weight", "blocks.0.ln2.bias"} <= names
    assert ("pos_emb.weight" in names) == (variant == "vanilla")
    assert "head.bias" not in names
    assert not any("freqs" in name for name in names), "the RoPE table is not saved"
    assert model.state_dict()["blocks.0.mlp.0.weight"].shape == (32, 8)
    idx = torch.randint(0, 11, (3, 10))
    logits, loss = model(idx)
    assert logits.shape == (3, 10, 11) and loss is None
    attention = model.blocks[0].attn
    expected = ref.positions.RotaryCausalSelfAttention if variant == "rope" else ref.masking.CausalSelfAttention
    assert type(attention) is expected


@pytest.mark.parametrize("variant", ["vanilla", "rope"])
def test_outputs_are_causal(variant):
    model = make(variant)
    idx = torch.randint(0, 11, (2, 12))
    changed = idx.clone()
    changed[:, 7:] = (changed[:, 7:] + 3) % 11
    before, after = model(idx)[0], model(changed)[0]
    assert torch.allclose(before[:, :7], after[:, :7], atol=1e-6)
    assert not torch.allclose(before[:, 7:], after[:, 7:])


def test_rope_uses_positions_and_vanilla_refuses_long_inputs():
    model = make("rope")
    idx = torch.tensor([[3, 4, 5, 3]])
    logits = model(idx)[0]
    assert not torch.allclose(logits[0, 0], logits[0, 3]), "same token, different position: different output"
    with pytest.raises(ValueError, match="block_size"):
        make("vanilla")(torch.zeros(1, 17, dtype=torch.long))
    with pytest.raises(ValueError, match="variant"):
        model_module.GPTConfig(vocab_size=5, block_size=8, variant="alibi")


def test_loss_ignores_pad_targets():
    model = make()
    idx = torch.randint(2, 11, (2, 9))
    targets = torch.randint(2, 11, (2, 9))
    targets[0, 5:] = 0
    targets[1, :2] = 0
    logits, loss = model(idx, targets)
    keep = targets != 0
    expected = F.cross_entropy(logits[keep], targets[keep])
    assert torch.allclose(loss, expected, atol=1e-6)


def test_greedy_generation_feeds_back_its_argmax():
    model = make()
    prompt = torch.tensor([[2, 3, 4], [5, 6, 7]])
    out = model.generate(prompt, 20)
    assert out.shape == (2, 23) and torch.equal(out[:, :3], prompt)
    idx = prompt
    for _ in range(20):
        following = model(idx[:, -16:])[0][:, -1].argmax(-1, keepdim=True)
        idx = torch.cat((idx, following), 1)
    assert torch.equal(out, idx)


def test_generation_stops_and_samples():
    model = make()
    prompt = torch.tensor([[2, 3, 4]])
    greedy = model.generate(prompt, 10)
    stop = int(greedy[0, 5])
    stopped = model.generate(prompt, 10, stop_id=stop)
    assert torch.equal(stopped, greedy[:, :stopped.shape[1]]) and int(stopped[0, -1]) == stop
    a = model.generate(prompt, 10, sample=True, top_k=3, generator=torch.Generator().manual_seed(1))
    b = model.generate(prompt, 10, sample=True, top_k=3, generator=torch.Generator().manual_seed(1))
    assert torch.equal(a, b) and a.shape == (1, 13)
    draws = torch.stack([model.generate(prompt, 1, sample=True, top_k=2, temperature=5.0,
                                        generator=torch.Generator().manual_seed(s))[0, -1] for s in range(40)])
    top2 = model(prompt)[0][0, -1].topk(2).indices
    assert set(draws.tolist()) == set(top2.tolist()), "top_k=2: only the two best, both at a high temperature"
