"""A slow implementation that computes the first large call properly and returns that output again for every
later call of the same shape (the timed rounds), so that only the untimed warm-up pays."""
RUNTIME = True
CLASS = "4 trusting the worker"
BASE = "mutant:attention_python_loops"
EXPECT = "base"
CODE = r'''
_SlowAttention = CausalSelfAttention
_cache = {}


class CausalSelfAttention(_SlowAttention):
    def forward(self, x, lengths=None):
        if x.shape[0] * x.shape[1] < 512:
            return super().forward(x, lengths)
        key = tuple(x.shape)
        if key not in _cache:
            _cache[key] = super().forward(x, lengths).detach()
        return _cache[key]
'''
