"""Traps for the routines an assignment forbids: any use is recorded, wherever it comes from.

Two layers, both set before any submission file can be imported. The Python names in ``assignment.toml``
(``torch.nn.functional.scaled_dot_product_attention``, ``torch.nn.MultiheadAttention``) are wrapped so that a call
is recorded and then runs. Beneath them, the aten kernels those routines run on (the front door and every backend
the build has) are replaced through ``torch.library`` by a kernel that records the use and refuses, so that
``torch._C._nn``, ``torch.ops.aten`` or a name built at run time end there too, and the original kernels are gone
from the process before student code runs. A Python composite without a kernel of its own (MultiheadAttention
returning its weights) is caught by its Python trap only.

Student code shares the process, so it could undo a trap: after every call ``tampered`` compares the traps and the
kernels' registrations with what was set, and a change counts as using the routine.
"""

from __future__ import annotations

import importlib
import warnings

SDPA = ("scaled_dot_product_attention", "_scaled_dot_product_attention_math",
        "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention")
LAYERS = ("_native_multi_head_attention", "_transformer_encoder_layer_fwd")
# The aten kernels behind each forbidden routine (a name missing here has Python traps only).
KERNELS = {
    "torch.nn.functional.scaled_dot_product_attention": SDPA,
    "torch.nn.functional.multi_head_attention_forward": LAYERS,
    "torch.nn.MultiheadAttention": LAYERS,
    "torch.nn.Transformer": LAYERS,
    "torch.nn.TransformerEncoder": LAYERS,
    "torch.nn.TransformerDecoder": LAYERS,
    "torch.nn.TransformerEncoderLayer": LAYERS,
    "torch.nn.TransformerDecoderLayer": LAYERS,
}
DISPATCH_KEYS = ("CompositeImplicitAutograd", "CPU", "CUDA")


class Traps:
    """The traps for ``names`` (dotted routine names); ``used`` collects the routines called since the last take."""

    def __init__(self, names: list[str]):
        self.used: list[str] = []
        self._wrappers: list[tuple[object, str, object, str]] = []  # (owner, attribute, wrapper, routine)
        self._kernels: dict[str, str] = {}  # aten op -> its registrations as set here
        self._routines: dict[str, str] = {}  # aten op -> the forbidden routine it runs
        self._library = None
        for dotted in names:
            self._wrap(dotted)
        self._replace_kernels(names)

    def take(self) -> list[str]:
        """The routines used since the last call (tampering with a trap included), sorted, and forget them."""
        self._check()
        used = sorted(set(self.used))
        self.used.clear()  # in place: the traps hold this list
        return used

    def _wrap(self, dotted: str) -> None:
        owner_name, _, attribute = dotted.rpartition(".")
        try:
            owner = importlib.import_module(owner_name)
            original = getattr(owner, attribute)
        except (ImportError, AttributeError):
            return
        record = self.used.append
        if isinstance(original, type):
            init = original.__init__

            def trapped_init(obj, *args, **kwargs):
                record(dotted)
                init(obj, *args, **kwargs)

            original.__init__ = trapped_init
            self._wrappers.append((original, "__init__", trapped_init, dotted))
        else:

            def trapped(*args, **kwargs):
                record(dotted)
                return original(*args, **kwargs)

            setattr(owner, attribute, trapped)
            self._wrappers.append((owner, attribute, trapped, dotted))

    def _replace_kernels(self, names: list[str]) -> None:
        import torch

        self._routines = {op: dotted for dotted in names for op in KERNELS.get(dotted, ())}
        if not self._routines:
            return
        self._library = torch.library.Library("aten", "IMPL")
        record = self.used.append
        for op, dotted in self._routines.items():
            def refuse(*args, _routine=dotted, **kwargs):
                record(_routine)
                raise RuntimeError(f"{_routine} is not allowed in this assignment")

            keys = [k for k in DISPATCH_KEYS if torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{op}", k)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "overriding a previously registered kernel": the point
                for key in keys:
                    self._library.impl(op, refuse, key)
            if keys:
                self._kernels[op] = torch._C._dispatch_dump(f"aten::{op}")

    def _check(self) -> None:
        """Count a trap that was removed or a kernel registration that changed as a use of its routine."""
        for owner, attribute, wrapper, dotted in self._wrappers:
            if getattr(owner, attribute, None) is not wrapper:
                self.used.append(dotted)
        if self._kernels:
            import torch

            for op, dump in self._kernels.items():
                if torch._C._dispatch_dump(f"aten::{op}") != dump:
                    self.used.append(self._routines[op])
