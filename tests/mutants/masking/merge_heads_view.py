"""merge_heads flattens the transposed heads with .view: x.transpose(1, 2) is not contiguous, so view refuses it
(RuntimeError: view size is not compatible with input tensor's size and stride) as soon as there are two heads and
two positions; flatten with .reshape, or call .contiguous() before .view."""
# target: masking.py
# unnamed: it raises (view refuses a non-contiguous tensor) where the reference returns: no output to match
# seen in: public minGPT/nanoGPT forks and CS224N a5 student repositories (the head merge written as .view without
# minGPT's .contiguous())


def merge_heads(x):
    B, H, T, d = x.shape
    return x.transpose(1, 2).view(B, T, H * d)

# autograder-hidden-canary-7d3e9a (never ships to students)
