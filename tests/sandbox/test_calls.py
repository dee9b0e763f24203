"""``autograder.calls.forward_backward``: the gradients are exactly those of ``torch.autograd.backward`` with the same
output gradients, a wrongly shaped output is refused, and the pass imports nothing more (sympy, which that call
imports the first time, half a second or more of a student's ``check``)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from autograder.calls import forward_backward


class TwoOutputs(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(5, 3).double()

    def forward(self, x, scale):
        hidden = self.linear(x)
        return torch.tanh(hidden) * scale, hidden.softmax(dim=-1)


def _by_torch(target, args, grads) -> tuple:
    inputs = [a.detach().clone().requires_grad_(True) if a.is_floating_point() else a for a in args]
    outputs = target(*inputs)
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    torch.autograd.backward(outputs, grads)
    params = {name: p.grad.clone() for name, p in target.named_parameters()} if isinstance(target, torch.nn.Module) \
        else {}
    if params:
        target.zero_grad(set_to_none=True)
    return outputs, [a.grad for a in inputs], params


@pytest.mark.parametrize("given", [True, False], ids=["grad_output", "ones"])
def test_gradients_are_bit_for_bit_those_of_torch_autograd_backward(given):
    generator = torch.Generator().manual_seed(3)
    module = TwoOutputs()
    x = torch.randn(4, 5, dtype=torch.float64, generator=generator)
    scale = torch.randn(4, 3, dtype=torch.float64, generator=generator)
    grads = [torch.randn(4, 3, dtype=torch.float64, generator=generator) for _ in range(2)] if given \
        else [torch.ones(4, 3, dtype=torch.float64)] * 2
    outputs, input_grads, params = _by_torch(module, [x, scale], grads)
    got = forward_backward(module, [x, scale], {}, tuple(grads) if given else None)
    assert all(torch.equal(a, b) for a, b in zip(got["output"], outputs, strict=True))
    assert all(torch.equal(a, b) for a, b in zip(got["input_grads"], input_grads, strict=True))
    assert params.keys() == got["param_grads"].keys()
    assert all(torch.equal(params[name], got["param_grads"][name]) for name in params)


def test_an_output_gradient_of_another_dtype_is_cast_as_torch_casts_it():
    x = torch.randn(6, dtype=torch.float32)
    grad = torch.randn(6, dtype=torch.float64)
    _, expected, _ = _by_torch(torch.sin, [x], [grad])
    got = forward_backward(torch.sin, [x], {}, grad)["input_grads"][0]
    assert got.dtype == torch.float32 and torch.equal(got, expected[0])


def test_a_wrongly_shaped_output_is_refused_not_broadcast():
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: output 0 has shape \(3, 1\), but its gradient has "
                                           r"shape \(3, 4\)"):
        forward_backward(lambda x: x.sum(dim=-1, keepdim=True), [torch.randn(3, 4)], {}, torch.randn(3, 4))


def test_the_pass_imports_no_sympy():
    code = ("import sys, torch; from autograder.calls import forward_backward; "
            "forward_backward(torch.nn.Linear(4, 2), [torch.randn(3, 4)], {}, torch.randn(3, 2)); "
            "print('sympy' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["False"]
