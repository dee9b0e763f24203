"""RoPE with Hugging Face's rotate_half (x * cos + rotate_half(x) * sin on the two halves), taken to the adjacent-pair
convention by de-interleaving the features first and interleaving them back; LearnedPositions as an nn.Embedding;
sinusoidal embeddings from an einsum outer product written into even and odd columns.

Style: transformers' LlamaRotaryEmbedding / apply_rotary_pos_emb, where cos and sin are the angle table repeated
twice along the features and rotate_half(x) = cat(-x2, x1). Applied to x as it is, that rotates the pairs
(i, i + head_dim / 2), a different convention from the one the module docstring fixes (adjacent pairs (2i, 2i + 1));
the catalogue holds that as a mistake (tests/mutants/positions/rope_rotates_halves.py). Hugging Face converts Meta's
adjacent-pair checkpoints by permuting the query and key features; here the permutation is made on x instead: even
features to the first half, odd ones to the second, rotate, and back. LearnedPositions subclasses nn.Embedding, whose
one parameter is named ``weight`` with shape (block_size, d_model), as the docstring asks, re-initialised from
N(0, 0.02^2) (nn.Embedding's own default is N(0, 1)). Written from scratch for this catalogue.
"""
# target: positions.py


def attention_ffn(x, weights):
    attended, _ = scaled_dot_product_attention(torch.matmul(x, weights["query"]), torch.matmul(x, weights["key"]),
                                               torch.matmul(x, weights["value"]))
    hidden = torch.clamp(torch.matmul(attended, weights["ff_in"]), min=0)
    return torch.matmul(hidden, weights["ff_out"])


def permute_check(x, perm, weights, positions=None):
    def layer(inputs):
        return attention_ffn(inputs if positions is None else inputs + positions, weights)

    return float(torch.max(torch.abs(layer(x[..., perm, :]) - layer(x)[..., perm, :])))


class LearnedPositions(nn.Embedding):
    def __init__(self, block_size, d_model):
        super().__init__(block_size, d_model)
        self.block_size = block_size

    def reset_parameters(self):
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        T = x.shape[1]
        if T > self.block_size:
            raise ValueError(f"T={T} exceeds block_size={self.block_size}: a learned position table has no "
                             "embedding beyond its last position and cannot extrapolate")
        return x + super().forward(torch.arange(T, device=x.device))


def sinusoidal(T, d, dtype=torch.float32):
    if d % 2:
        raise ValueError(f"the width d={d} is odd, but sinusoidal embeddings need sine/cosine pairs")
    rates = SINUSOIDAL_BASE ** (-torch.arange(d // 2, dtype=torch.float64) * 2 / d)
    angles = torch.einsum("t,i->ti", torch.arange(T, dtype=torch.float64), rates)
    table = torch.zeros(T, d, dtype=torch.float64)
    table[:, ::2], table[:, 1::2] = torch.sin(angles), torch.cos(angles)
    return table.to(dtype=dtype)


def shift_operator(k, d, dtype=torch.float32):
    if d % 2:
        raise ValueError(f"the width d={d} is odd, but sinusoidal embeddings need sine/cosine pairs")
    b = k * SINUSOIDAL_BASE ** (-torch.arange(d // 2, dtype=torch.float64) * 2 / d)
    blocks = torch.stack([torch.stack([b.cos(), -b.sin()], -1), torch.stack([b.sin(), b.cos()], -1)], -2)
    operator = torch.zeros(d // 2, 2, d // 2, 2, dtype=torch.float64)
    index = torch.arange(d // 2)
    operator[index, :, index, :] = blocks
    return operator.reshape(d, d).to(dtype)


def rope_frequencies(head_dim, max_positions, base=10000.0, dtype=torch.float32):
    if head_dim % 2:
        raise ValueError(f"head_dim={head_dim} is odd: RoPE needs pairs of features")
    inv_freq = 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    return torch.einsum("m,i->mi", torch.arange(max_positions, dtype=torch.float64), inv_freq).to(dtype)


def _rotate_half(x):
    first, second = x.chunk(2, dim=-1)
    return torch.cat((-second, first), dim=-1)


def apply_rope(x, freqs, positions=None):
    head_dim, table = x.shape[-1], freqs.shape[0]
    if freqs.shape[-1] * 2 != head_dim:
        raise ValueError(f"freqs is for a head width of {2 * freqs.shape[-1]}, x has width {head_dim}")
    if positions is None:
        if x.shape[-2] > table:
            raise ValueError(f"{x.shape[-2]} positions do not fit a table of {table}")
        positions = torch.arange(x.shape[-2], device=freqs.device)
    positions = torch.as_tensor(positions, device=freqs.device)
    if positions.numel() > 0 and not bool(((positions >= 0) & (positions < table)).all()):
        raise ValueError(f"positions must be in [0, {table}); the table is too small for them")
    angles = torch.cat((freqs[positions], freqs[positions]), dim=-1)  # (..., T, head_dim), as Hugging Face's emb
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    halves = torch.cat((x[..., 0::2], x[..., 1::2]), dim=-1)  # adjacent pairs -> (i, i + head_dim / 2)
    rotated = halves * cos + _rotate_half(halves) * sin
    first, second = rotated.chunk(2, dim=-1)
    return torch.stack((first, second), dim=-1).flatten(-2)  # back to adjacent pairs


class RotaryCausalSelfAttention(CausalSelfAttention):
    def __init__(self, d_model, n_head, dropout=0.0, max_positions=2048, base=10000.0):
        super().__init__(d_model, n_head, dropout)
        if d_model // n_head % 2:
            raise ValueError(f"RoPE needs an even head width; d_model / n_head = {d_model // n_head}")
        self.register_buffer("freqs", rope_frequencies(d_model // n_head, max_positions, base, torch.float64),
                             persistent=False)

    def forward(self, x, lengths=None):
        T = x.shape[1]
        q, k, v = (split_heads(linear(x), self.n_head) for linear in (self.query, self.key, self.value))
        q, k = apply_rope(q, self.freqs), apply_rope(k, self.freqs)
        mask = causal_mask(T, device=x.device)
        if lengths is not None:
            mask = combined_mask(lengths, T)
        out, _ = scaled_dot_product_attention(q, k, v, mask, dropout=self.attn_dropout)
        return self.resid_dropout(self.proj(merge_heads(out)))

# autograder-hidden-canary-7d3e9a (never ships to students)
