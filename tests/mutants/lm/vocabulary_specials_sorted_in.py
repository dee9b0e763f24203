"""The pad and mask characters are sorted in with the corpus's characters, so they are not ids 0 and 1 (the loss
then ignores some other character instead of the pads)."""
# target: dataset.py
# unnamed: checked by the vocabulary's rules (pad 0, mask 1, the rest sorted), not against the reference's values

_CorrectVocabulary = Vocabulary


class Vocabulary(_CorrectVocabulary):
    def __init__(self, text):
        super().__init__(text)
        self.itos = sorted(set(text) | {PAD_CHAR, MASK_CHAR})
        self.stoi = {char: i for i, char in enumerate(self.itos)}

# autograder-hidden-canary-7d3e9a (never ships to students)
