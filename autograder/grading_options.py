"""How a submission is graded, as one typed record from the command line to ``runner.grade_one``
(``GradingOptions``): which tests (public or hidden only, tags not to run), which oracle, under which secret.

The command line builds it once; an engine passes it through untouched; a job may carry its own (``Job.options``),
which ``GradingOptions.over`` applies to the batch's, the one place where a job overrides; the runner receives the
result as its job (``to_json``, read back by ``from_json``). Nobody else declares these fields. A leaf module: the
batch, which builds jobs, and the runner, which grades them, both import it, and neither imports the other's layer
for it (otter-grader's ``AutograderConfig`` is the model)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class GradingOptions:
    """``public_only`` or ``hidden_only``: one kind of tests; ``skip_tags``: tags of tests not to run, which carry no
    points (``runner.grade_one``); ``oracle``: ``runner.make_oracle``'s mode (``auto``: live where the reference is
    present, else replay); ``secret``: the term's hidden seed to grade under (None: ``AUTOGRADER_SECRET`` where it is
    set, ``autograder.batch.jobs.with_term_secret``, else the assignment's own)."""

    public_only: bool = False
    hidden_only: bool = False
    skip_tags: tuple[str, ...] = ()
    oracle: str = "auto"
    secret: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "skip_tags", tuple(self.skip_tags))  # a list from JSON or a command line: one type

    def over(self, batch: GradingOptions) -> GradingOptions:
        """These options (a job's own) applied to the ``batch``'s: the job's secret and oracle win where it sets them
        (not None, not ``auto``); public or hidden only where either says so; the tags of both are skipped (the
        batch's first). ``autograder validate`` grades its whole matrix in one batch this way."""
        return GradingOptions(public_only=self.public_only or batch.public_only,
                              hidden_only=self.hidden_only or batch.hidden_only,
                              skip_tags=tuple(dict.fromkeys((*batch.skip_tags, *self.skip_tags))),
                              oracle=self.oracle if self.oracle != "auto" else batch.oracle,
                              secret=self.secret if self.secret is not None else batch.secret)

    def to_json(self) -> dict:
        """The record as JSON data (``from_json`` reads it back)."""
        return {**dataclasses.asdict(self), "skip_tags": list(self.skip_tags)}

    @classmethod
    def from_json(cls, data: dict) -> GradingOptions:
        """The record ``to_json`` wrote; ValueError for anything else (a key it does not know, a wrong type)."""
        if not isinstance(data, dict) or set(data) - {field.name for field in dataclasses.fields(cls)}:
            raise ValueError(f"grading options are an object of {[f.name for f in dataclasses.fields(cls)]}")
        if not isinstance(data.get("skip_tags", []), list | tuple):
            raise ValueError("skip_tags is a list of tags")
        return cls(**data)
