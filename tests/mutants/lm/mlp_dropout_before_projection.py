"""Block's feed-forward drops before its second Linear (after GELU) instead of at its end."""
# target: model.py


class _DropBeforeProjection(nn.Sequential):
    def forward(self, x):
        first, gelu, second, drop = self
        return second(drop(gelu(first(x))))


_correct_init = Block.__init__


def _init(self, config):
    _correct_init(self, config)
    self.mlp = _DropBeforeProjection(*self.mlp)


Block.__init__ = _init

# autograder-hidden-canary-7d3e9a (never ships to students)
