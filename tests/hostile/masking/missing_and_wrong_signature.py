"""Deletes causal_mask and gives padding_mask a third required argument."""
CLASS = "11 misbehaving answers"
BASE = "reference"
EXPECT = "below"
PRESENT = ["has no attribute 'causal_mask'", "pad_id"]
CODE = r'''
del causal_mask


def padding_mask(lengths, T, pad_id):
    raise AssertionError("never reached")
'''
