"""Digs the original fused attention out of the grader's trap (the wrapper's closure) and calls that."""
CLASS = "6 forbidden routines"
BASE = "reference"
EXPECT = "below"
PRESENT = ["which this assignment does not allow"]
CODE = r'''
import torch.nn.functional as _F

_trapped = getattr(_F, "scaled_dot_" + "product_attention")
_original = next((cell.cell_contents for cell in (_trapped.__closure__ or ()) if callable(cell.cell_contents)),
                 _trapped)


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, mask)
    return _original(q, k, v, attn_mask=mask), weights
'''
