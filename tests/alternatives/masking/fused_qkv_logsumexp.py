"""One fused QKV projection (nanoGPT's c_attn, made from the three named weights), queries scaled before the product,
and the softmax written as exp(score - logsumexp) over the kept keys.

Style: Karpathy's nanoGPT / minGPT CausalSelfAttention, which projects once to 3 * d_model features and splits
them, and the log-domain softmax of numerically minded code (JAX, fairseq's utils). nanoGPT holds the fused weight as
one parameter, c_attn; the docstring here names the parameters query, key and value (D -> D each), because the grader
loads its weights into them, so the fused weight is concatenated from those three at each call: the same arithmetic,
the names the spec asks for. The masks are made with triu/negation and broadcasting views. Written from scratch for
this catalogue.
"""
# target: masking.py


def causal_mask(T, device=None):
    return ~torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)


def lecture_causal_candidate():
    return [bool(((candidate == 0) == causal_mask(4)).all()) for candidate in LECTURE_MASKS].index(True)


def padding_mask(lengths, T):
    return torch.arange(T, device=lengths.device).unsqueeze(0).lt(lengths.unsqueeze(-1))


def combined_mask(lengths, T):
    return causal_mask(T, lengths.device) & padding_mask(lengths, T)[:, None, None, :]


def masked_softmax(scores, mask=None):
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    norm = torch.logsumexp(scores, dim=-1, keepdim=True)
    empty = torch.isinf(norm)  # every key masked: nothing to attend to
    weights = torch.exp(scores - torch.where(empty, torch.zeros_like(norm), norm))
    return weights.masked_fill(empty, 0.0)


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    q = q * (1.0 / math.sqrt(q.shape[-1]))
    weights = masked_softmax(q @ k.mT, mask)
    return (weights if dropout is None else dropout(weights)) @ v, weights


def split_heads(x, n_head):
    return x.unflatten(-1, (n_head, -1)).transpose(-3, -2)


def merge_heads(x):
    return x.transpose(-3, -2).flatten(-2)


class CausalSelfAttention(nn.Module):
    def __init__(self, d_model, n_head, dropout=0.0):
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_head ({n_head})")
        self.n_head, self.d_model = n_head, d_model
        self.query = nn.Linear(d_model, d_model)
        self.key = nn.Linear(d_model, d_model)
        self.value = nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def forward(self, x, lengths=None):
        weight = torch.cat([self.query.weight, self.key.weight, self.value.weight], dim=0)
        bias = torch.cat([self.query.bias, self.key.bias, self.value.bias], dim=0)
        q, k, v = nn.functional.linear(x, weight, bias).split(self.d_model, dim=-1)
        T = x.shape[1]
        mask = causal_mask(T, x.device) if lengths is None else combined_mask(lengths, T)
        y, _ = scaled_dot_product_attention(split_heads(q, self.n_head), split_heads(k, self.n_head),
                                            split_heads(v, self.n_head), mask, self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(y)))

# autograder-hidden-canary-7d3e9a (never ships to students)
