"""Shared by the tests of the LM reference: the reference imported once, a tiny preset and a tiny world."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import pytest

from autograder import course
from autograder.grading import trusted_import
from autograder.suites.lm import evaluation
from autograder.suites.lm.world import World, generate_world

LM = course.load("lm")


@functools.cache
def reference() -> SimpleNamespace:
    """The reference's modules: ``.dataset``, ``.model``, ``.trainer``, ``.run`` (and the carried ones)."""
    return trusted_import.load(LM.solution_dir, LM.modules)


def tiny_preset(**changes):
    """A preset small enough that a whole run takes a second or two on a CPU."""
    fields = dict(n_layer=1, n_head=2, n_embd=16, block_size=64, dropout=0.0, pretrain_epochs=2,
                  pretrain_batch_size=8, pretrain_lr=3e-3, finetune_epochs=2, scratch_epochs=3,
                  finetune_batch_size=8, finetune_lr=1e-3, warmup_tokens=64 * 8, num_workers=0, autocast="off")
    return reference().run.Preset(**{**fields, **changes})


@functools.cache
def tiny_world() -> World:
    return generate_world("tests", people=40, dev=10, test=10, bios_per_person=2, templates=4)


def corpus(world: World | None = None) -> str:
    """The text of wiki.txt for ``world`` (default: the tiny one)."""
    return "".join(f"{line}\n" for line in (world or tiny_world()).bios)


@pytest.fixture(autouse=True)
def one_thread():
    """Tiny models run faster on one thread, and far faster when other processes share the cores (OpenMP
    threads wait for each other at every operation); import this fixture into a test module to use it."""
    with evaluation.one_thread():
        yield
