"""Finds the grader's torch.library registration with gc, destroys it so that the original fused kernels come
back, and calls torch's fused attention."""
CLASS = "6 forbidden routines"
BASE = "reference"
EXPECT = "below"
PRESENT = ["which this assignment does not allow"]
CODE = r'''
import gc as _gc

import torch.nn.functional as _F

for _object in _gc.get_objects():
    if isinstance(_object, torch.library.Library) and getattr(_object, "ns", None) == "aten":
        _object._destroy()
_trapped = getattr(_F, "scaled_dot_" + "product_attention")
_original = next((cell.cell_contents for cell in (_trapped.__closure__ or ()) if callable(cell.cell_contents)),
                 _trapped)


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, mask)
    return _original(q, k, v, attn_mask=mask), weights
'''
