"""Calls that work the same on a student's object in the worker and on a trusted implementation in the grader:
seeding every generator, and a forward and backward pass that returns the gradients.
"""

from __future__ import annotations


def seed_everything(seed: int) -> None:
    import random

    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def forward_backward(target, args, kwargs, grad_output=None) -> dict:
    """Run ``target(*args)`` with gradients on floating inputs, backpropagate, return everything.

    The output gradient is ``grad_output`` when given (same structure as the output), else ones.
    Returns ``{"output", "input_grads" (one per positional arg, None where not a float tensor),
    "param_grads" ({name: grad or None} when target is an nn.Module)}``.

    The pass starts from the scalar ``sum((o * g).sum())``, whose gradient with respect to each output ``o`` is
    exactly ``g`` (every factor is 1), not from ``torch.autograd.backward(outputs, grads)``: that call's first use in
    a process imports sympy (hundreds of modules), which a student's ``check`` waited for in its worker. Its shape
    check is kept, since a product would broadcast a wrongly shaped output.
    """
    import torch

    inputs = [a.detach().clone().requires_grad_(True) if _is_float_tensor(a) else a for a in args]
    output = target(*inputs, **kwargs)
    outputs = list(output) if isinstance(output, tuple | list) else [output]
    if grad_output is None:
        grads = [torch.ones_like(o) if _is_float_tensor(o) else None for o in outputs]
    else:
        grads = list(grad_output) if isinstance(grad_output, tuple | list) else [grad_output]
    pairs = [(o, g) for o, g in zip(outputs, grads, strict=False)
             if g is not None and _is_float_tensor(o) and o.requires_grad]
    if not pairs:
        raise RuntimeError("the output does not require grad: is it detached from the inputs and parameters?")
    for number, (o, g) in enumerate(pairs):
        if o.shape != g.shape:
            raise RuntimeError(f"Mismatch in shape: output {number} has shape {tuple(o.shape)}, but its gradient "
                               f"has shape {tuple(g.shape)}")
    sum((o * g).sum() for o, g in pairs).backward()
    params = {}
    if isinstance(target, torch.nn.Module):
        params = {name: p.grad for name, p in target.named_parameters()}
    return {
        "output": output,
        "input_grads": [a.grad if _is_float_tensor(a) else None for a in inputs],
        "param_grads": params,
    }


def _is_float_tensor(value) -> bool:
    import torch

    return isinstance(value, torch.Tensor) and value.is_floating_point()
