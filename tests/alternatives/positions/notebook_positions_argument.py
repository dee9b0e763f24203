"""rope_offset_scores with the positions argument of apply_rope (one row per position) and an einsum for the dot
products, instead of rotating the query broadcast over the table.

Style: a student who reads apply_rope's docstring for "positions" and asks for positions 0..P-1 and [n]
explicitly, then writes the row-wise dot product as an einsum. Written from scratch for this catalogue.
"""
# target: positions.ipynb


def rope_offset_scores(q, k, freqs, n=0):
    P = freqs.shape[0]
    rotated_queries = apply_rope(q.unsqueeze(0).repeat(P, 1), freqs, torch.arange(P))
    rotated_key = apply_rope(k.reshape(1, -1), freqs, torch.full((1,), n))
    return torch.einsum("pd,d->p", rotated_queries, rotated_key.squeeze(0))

# autograder-hidden-canary-7d3e9a (never ships to students)
