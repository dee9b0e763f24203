"""Attention is computed with Python loops over batch items, heads and query positions instead of batched
tensor operations: the values are right, but it is many times slower."""
# slow
# target: masking.py
# unnamed: its values are right; only the runtime and memory tests catch it


def scaled_dot_product_attention(q, k, v, mask=None, dropout=None):
    lead, t_q, t_k = q.shape[:-2], q.shape[-2], k.shape[-2]
    qs, ks, vs = q.reshape(-1, t_q, q.shape[-1]), k.reshape(-1, t_k, k.shape[-1]), v.reshape(-1, t_k, v.shape[-1])
    masks = None if mask is None else torch.broadcast_to(mask, (*lead, t_q, t_k)).reshape(-1, t_q, t_k)
    rows = []
    for n in range(qs.shape[0]):
        for i in range(t_q):
            scores = ks[n] @ qs[n, i] / math.sqrt(q.shape[-1])
            rows.append(masked_softmax(scores, None if masks is None else masks[n, i]))
    weights = torch.stack(rows).reshape(*lead, t_q, t_k)
    dropped = dropout(weights) if dropout is not None else weights
    outputs = [dropped.reshape(-1, t_q, t_k)[n] @ vs[n] for n in range(qs.shape[0])]
    return torch.stack(outputs).reshape(*lead, t_q, v.shape[-1]), weights

# autograder-hidden-canary-7d3e9a (never ships to students)
