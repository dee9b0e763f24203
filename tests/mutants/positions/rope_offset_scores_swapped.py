"""rope_offset_scores rotates the query by the key's position n and the key by each query position m, so the curve
runs backwards (scores of n - m instead of m - n): rotate the queries by 0..P-1 and the key by n."""
# target: positions.ipynb


def rope_offset_scores(q, k, freqs, n=0):
    P = freqs.shape[0]
    query = apply_rope(q[None], freqs, torch.tensor([n]))
    keys = apply_rope(k.expand(P, -1), freqs)
    return keys @ query[0]

# autograder-hidden-canary-7d3e9a (never ships to students)
