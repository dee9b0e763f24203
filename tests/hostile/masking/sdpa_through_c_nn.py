"""Uses torch's fused attention through torch._C._nn, by a name built at run time (the static scan cannot see it,
and the review found the trap only covered torch.nn.functional)."""
CLASS = "6 forbidden routines"
BASE = "reference"
EXPECT = "below"
PRESENT = ["which this assignment does not allow"]
CODE = r'''
_fused = getattr(torch._C._nn, "scaled_" + "dot_product_attention")


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5
    weights = masked_softmax(scores, mask)
    return _fused(q, k, v, attn_mask=mask), weights
'''
