"""Block's feed-forward has no Dropout: mlp is Linear, GELU, Linear, and only the attention drops in training mode."""
# target: model.py

_correct_init = Block.__init__


def _init(self, config):
    _correct_init(self, config)
    self.mlp = nn.Sequential(*list(self.mlp)[:3])


Block.__init__ = _init

# autograder-hidden-canary-7d3e9a (never ships to students)
