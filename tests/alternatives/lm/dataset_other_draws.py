"""The datasets written another way: the span's start drawn from rng.random() instead of rng.randint, str.ljust for
the padding, a character filter for the ASCII rule, a torch.where for the question's unlearned targets, and encode
through a dict lookup that turns KeyError into ValueError.

Style: CS224N students' own CharCorruptionDataset code, which draws its random numbers with random.randint in an
order of its own; the handout states the distributions (the truncated length uniform in 4 .. int(7/8 block_size),
the span length uniform in 1 .. max(1, n // 2), its start uniform in 0 .. n - k) and that every draw comes from the
dataset's own rng, not which calls make them. Here the span length k is drawn first, as in the reference, but the
start is drawn with rng.random() scaled to n - k + 1 positions: the same distribution from another stream of draws,
so the examples differ from the reference's for the same seed. For the retraining that is another seed's draw, which
the gates' sweep over five seeds already covers (bench/cpu_tier.py --implementation can retrain it), so validate grades
it without retraining. Written from scratch for this catalogue.
"""
# target: dataset.py


class Vocabulary:
    def __init__(self, text):
        reserved = [c for c in (PAD_CHAR, MASK_CHAR) if c in text]
        if reserved:
            raise ValueError(f"the corpus already holds the reserved character(s) {reserved!r}: they are kept for "
                             "padding and masking; clean the corpus first")
        self.itos = [PAD_CHAR, MASK_CHAR] + sorted({c for c in text})
        self.stoi = dict(zip(self.itos, range(len(self.itos)), strict=True))

    @property
    def size(self):
        return len(self.stoi)

    def encode(self, text):
        try:
            return torch.as_tensor([self.stoi[c] for c in text], dtype=torch.int64)
        except KeyError as missing:
            raise ValueError(f"unknown character {missing.args[0]!r}: it is not in the pretraining corpus, so it "
                             "has no id") from None

    def decode(self, ids):
        if isinstance(ids, torch.Tensor):
            ids = ids.tolist()
        return "".join(map(self.itos.__getitem__, ids))


def corrupt(document, block_size, rng):
    keep = rng.randint(4, int(7 / 8 * block_size))
    text = document[:keep]
    n = len(text)
    k = rng.randint(1, max(1, n // 2))
    start = min(int(rng.random() * (n - k + 1)), n - k)  # uniform over 0 .. n - k
    masked = text[start:start + k]
    corrupted = f"{text[:start]}{MASK_CHAR}{text[start + k:]}{MASK_CHAR}{masked}"
    return corrupted.ljust(block_size + 1, PAD_CHAR)


def shift(example, vocab):
    ids = vocab.encode(example)
    return ids[:len(ids) - 1].clone(), ids[1:].clone()


def finetune_example(question, answer, block_size):
    text = f"{question}{MASK_CHAR}{answer}{MASK_CHAR}"
    if len(text) <= block_size:
        return text.ljust(block_size, PAD_CHAR)
    raise ValueError(f"the example is {len(text)} characters long and block_size is {block_size}: it does not fit")


def _ascii(text):
    return "".join(c for c in str(text) if ord(c) < 128)


class NameDataset(Dataset):
    def __init__(self, pairs, vocab, block_size):
        self.pairs = [(_ascii(q), _ascii(a)) for q, a in pairs]
        self.vocab = vocab
        self.block_size = block_size

    def __len__(self):
        return len(self.pairs)

    def example(self, index):
        return finetune_example(*self.pairs[index], self.block_size)

    def __getitem__(self, index):
        question = self.pairs[index][0]
        x, y = shift(self.example(index), self.vocab)
        hidden = torch.arange(y.shape[0]) < len(question) - 1  # targets that predict the question's own characters
        return x, torch.where(hidden, torch.full_like(y, PAD_ID), y)

    def item(self, index):
        return self[index]


# autograder-hidden-canary-7d3e9a (never ships to students)
