"""Uses torch's fused attention through torch.ops.aten, looked up by a name built at run time."""
CLASS = "6 forbidden routines"
BASE = "reference"
EXPECT = "below"
PRESENT = ["which this assignment does not allow"]
CODE = r'''
_fused = getattr(torch.ops.aten, "scaled_dot_" + "product_attention")


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    weights = masked_softmax(q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5, mask)
    return _fused(q, k, v, mask), weights
'''
