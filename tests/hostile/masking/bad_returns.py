"""Returns almost-right values: a float mask, a transposed mask, NaN weights, a list, and a tensor subclass whose
== and allclose always say yes."""
CLASS = "11 misbehaving answers"
BASE = "reference"
EXPECT = "below"
PRESENT = ["dtype torch.float32, expected torch.bool (a mask is a boolean tensor", "shape (5, 4), expected (4, 5)",
           "NaN", "returned a list", "tensor subclass"]
CODE = r'''
class Agreeable(torch.Tensor):
    def __eq__(self, other):
        return True

    def allclose(self, *args, **kwargs):
        return True


def causal_mask(T, device=None):
    return torch.ones(T, T).tril()


def padding_mask(lengths, T):
    return (torch.arange(T)[None, :] < lengths[:, None]).T


def masked_softmax(scores, mask=None):
    return torch.full_like(scores, float("nan"))


def split_heads(x, n_head):
    return x.tolist()


def merge_heads(x):
    return torch.zeros(x.shape[0], x.shape[2], x.shape[1] * x.shape[3]).as_subclass(Agreeable)
'''
