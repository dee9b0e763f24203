"""RoPE as a multiplication by unit complex numbers (Meta's LLaMA: torch.polar and view_as_complex), sinusoidal
embeddings interleaved with stack and flatten, learned positions looked up with F.embedding, and the shift operator
assembled with torch.block_diag.

Style: the reference implementation of LLaMA (precompute_freqs_cis / apply_rotary_emb), which treats the adjacent
pair (2i, 2i + 1) as the complex number x[2i] + i x[2i + 1] and multiplies it by e^(i m theta_i): exactly the
convention the module docstring states (LLaMA's pairs are adjacent, not halves). The rotation factors are made from
the angles in freqs' own dtype (float64 from the attention's table) and cast to x's complex dtype afterwards, as the
docstring of apply_rope asks (cast after, never the angles before). Written from scratch for this catalogue.
"""
# target: positions.py
import math


def attention_ffn(x, weights):
    q, k, v = (torch.einsum("...td,de->...te", x, weights[name]) for name in ("query", "key", "value"))
    attended = scaled_dot_product_attention(q, k, v, None)[0]
    return nn.functional.relu(attended @ weights["ff_in"]) @ weights["ff_out"]


def permute_check(x, perm, weights, positions=None):
    extra = torch.zeros(()) if positions is None else positions
    shuffled = torch.index_select(x, -2, perm)
    left = attention_ffn(shuffled + extra.to(x.dtype), weights)
    right = torch.index_select(attention_ffn(x + extra.to(x.dtype), weights), -2, perm)
    return (left - right).abs().max().item()


class LearnedPositions(nn.Module):
    def __init__(self, block_size, d_model):
        super().__init__()
        self.block_size = block_size
        self.weight = nn.Parameter(torch.empty(block_size, d_model))
        nn.init.normal_(self.weight, mean=0.0, std=0.02)

    def forward(self, x):
        length = x.size(-2)
        if length > self.block_size:
            raise ValueError(f"cannot add positions to {length} tokens: only {self.block_size} positions "
                             f"(block_size) have a learned embedding, and learned positions do not extrapolate")
        where = torch.arange(length, device=x.device)
        return x + nn.functional.embedding(where, self.weight)


def _rates(d):
    return torch.exp(torch.arange(0, d, 2, dtype=torch.float64) * (-math.log(SINUSOIDAL_BASE) / d))


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2 == 1:
        raise ValueError(f"d must be even (each frequency has a sine and a cosine), got {d}")
    angles = torch.arange(T, dtype=torch.float64).unsqueeze(1) * _rates(d).unsqueeze(0)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(T, d).to(dtype)


def shift_operator(k, d, dtype=torch.float32):
    if d % 2 == 1:
        raise ValueError(f"d must be even (each frequency has a sine and a cosine), got {d}")
    blocks = []
    for rate in _rates(d).tolist():
        c, s = math.cos(k * rate), math.sin(k * rate)
        blocks.append(torch.tensor([[c, -s], [s, c]], dtype=torch.float64))
    return torch.block_diag(*blocks).to(dtype) if blocks else torch.zeros(0, 0, dtype=dtype)


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2 == 1:
        raise ValueError(f"head_dim must be even (RoPE rotates pairs of features), got {head_dim}")
    inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim))
    m = torch.arange(max_positions, dtype=torch.float64)
    return (m[:, None] * inv_freq[None, :]).to(dtype)


def apply_rope(x, freqs, positions=None):
    if x.shape[-1] != 2 * freqs.shape[-1]:
        raise ValueError(f"freqs holds {freqs.shape[-1]} angles per position, for a head width of "
                         f"{2 * freqs.shape[-1]}, but x has {x.shape[-1]} features")
    if positions is None:
        if x.shape[-2] > freqs.shape[0]:
            raise ValueError(f"{x.shape[-2]} positions but the table covers only {freqs.shape[0]}")
        angles = freqs[: x.shape[-2]]
    else:
        positions = torch.as_tensor(positions, device=freqs.device).long()
        if ((positions < 0) | (positions >= freqs.shape[0])).any():
            raise ValueError(f"a position lies outside 0..{freqs.shape[0] - 1}, the range of the table")
        angles = freqs[positions]
    rotation = torch.polar(torch.ones_like(angles), angles)  # e^(i angle), in freqs' dtype
    real_dtype, complex_dtype = ((torch.float64, torch.complex128) if x.dtype == torch.float64
                                 else (torch.float32, torch.complex64))
    pairs = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).to(real_dtype).contiguous())
    rotated = torch.view_as_real(pairs * rotation.to(complex_dtype))
    return rotated.flatten(-2).to(x.dtype)


class RotaryCausalSelfAttention(CausalSelfAttention):
    def __init__(self, d_model, n_head, dropout=0.0, max_positions=2048, base=10000.0):
        super().__init__(d_model, n_head, dropout)
        if (d_model // n_head) % 2:
            raise ValueError(f"the head width d_model / n_head = {d_model // n_head} must be even for RoPE")
        table = rope_frequencies(d_model // n_head, max_positions, base, dtype=torch.float64)
        self.register_buffer("freqs", table, persistent=False)

    def forward(self, x, lengths=None):
        B, T, D = x.shape
        q, k, v = (projection(x).view(B, T, self.n_head, D // self.n_head).transpose(1, 2)
                   for projection in (self.query, self.key, self.value))
        q, k = apply_rope(q, self.freqs), apply_rope(k, self.freqs)
        mask = causal_mask(T, device=x.device) if lengths is None else combined_mask(lengths, T)
        y, _ = scaled_dot_product_attention(q, k, v, mask, self.attn_dropout)
        return self.resid_dropout(self.proj(y.transpose(1, 2).reshape(B, T, D)))

# autograder-hidden-canary-7d3e9a (never ships to students)
