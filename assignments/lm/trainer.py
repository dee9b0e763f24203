"""Training: AdamW, a token-based learning-rate schedule, clipping, mixed precision, exact resume.

Conventions (the grader relies on them):
- Tokens: a batch of B items of length T counts B * T tokens (every target position of every item, pads
  too, as CS224N's trainer counts them), however much of it the batch keeps after cropping. T is the
  items' own length: block_size for pretraining, block_size - 1 for finetuning.
- Schedule (``learning_rate``), minGPT's and CS224N's: linear warm-up from 0 over warmup_tokens, then
  max(0.1, 0.5 * (1 + cos(pi * progress))) of the full rate, with progress = (tokens - warmup_tokens) /
  (final_tokens - warmup_tokens) not capped at 1: the rate meets the 10 % floor at progress 0.795, leaves
  it at 1.205 and climbs back to the full rate at progress 2 (a run longer than final_tokens rises and
  falls again). The constant full rate when lr_decay is False. The rate of a step is that of the tokens
  counted so far, this batch included.
- Weight decay applies to matrices (parameters with 2 or more dimensions) only, never to biases
  and LayerNorm gains.
- bf16 autocast (on CUDA by default) wraps the forward pass and the loss only; backward, clipping
  and the optimiser step run outside it, in float32.

Given code (you need not change it): batching (an epoch's examples are drawn, sorted by length,
cut into batches that are shuffled, and each batch is cropped to its longest example: with causal
attention and pad targets ignored this changes no loss, and on a CPU it is about twice as fast; with
num_workers the examples are built in DataLoader worker processes, see ``draw_items``),
checkpoints that resume exactly (model, optimiser, counters and every random state, including the
dataset's), a time budget, a tqdm progress bar, a CSV log and a PNG loss curve.
"""

from __future__ import annotations

import csv
import logging
import math
import random
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import NamedTuple

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, get_worker_info
from tqdm.auto import tqdm

log = logging.getLogger(__name__)

PAD_ID = 0
AUTOCAST_MODES = ("auto", "bf16", "off")


@dataclass
class TrainerConfig:
    """Hyperparameters and bookkeeping of one training run (names follow CS224N's TrainerConfig).

    Args:
        max_epochs, batch_size, learning_rate, betas, grad_norm_clip, weight_decay: as usual.
        lr_decay: warm-up and cosine decay (see ``learning_rate``); False keeps learning_rate constant.
        warmup_tokens, final_tokens: the schedule's milestones, in tokens.
        ckpt_path: where ``train`` saves the final parameters (a plain state_dict), or None.
        num_workers: DataLoader worker processes that build each epoch's examples (0: this process;
            see ``draw_items`` for their random streams).
        device: "auto" (CUDA when available, else CPU), or a torch device string.
        autocast: "auto" (bf16 on CUDA, none on CPU), "bf16", or "off".
        seed: seeds the batch order (the dataset has its own seed).
        max_seconds: stop (after a whole step, with a checkpoint) once training has run this long.
        max_steps: stop after this many optimiser steps in all.
        checkpoint_path: resumable state, saved when training stops and at the end of an epoch once
            checkpoint_seconds have passed since the last save; None for none.
        resume: load checkpoint_path first when it exists.
        log_path: CSV log (one row per step); plot_path: PNG loss curve, written when training ends.
        progress: show a tqdm progress bar.
        sort_by_length: length-sorted batches (see the module docstring).
    """

    max_epochs: int = 10
    batch_size: int = 64
    learning_rate: float = 3e-4
    betas: tuple[float, float] = (0.9, 0.95)
    grad_norm_clip: float = 1.0
    weight_decay: float = 0.1
    lr_decay: bool = False
    warmup_tokens: float = 375e6
    final_tokens: float = 260e9
    ckpt_path: str | None = None
    num_workers: int = 0
    device: str = "auto"
    autocast: str = "auto"
    seed: int = 0
    max_seconds: float | None = None
    max_steps: int | None = None
    checkpoint_path: str | None = None
    checkpoint_seconds: float = 60.0
    resume: bool = False
    log_path: str | None = None
    plot_path: str | None = None
    progress: bool = True
    sort_by_length: bool = True

    def __post_init__(self):
        if self.autocast not in AUTOCAST_MODES:
            raise ValueError(f"autocast must be one of {', '.join(AUTOCAST_MODES)}, got {self.autocast!r}")
        self.betas = tuple(self.betas)


# ---------------------------------------------------------------- what students write


def learning_rate(tokens: float, config: TrainerConfig) -> float:
    """The learning rate after ``tokens`` tokens (see the module docstring).

    Returns:
        config.learning_rate * multiplier, where the multiplier is tokens / warmup_tokens during the
        warm-up, then max(0.1, 0.5 * (1 + cos(pi * progress))) with progress = (tokens - warmup_tokens)
        / (final_tokens - warmup_tokens), NOT capped at 1 (past final_tokens the cosine climbs again);
        1 when config.lr_decay is False.
    """
    raise NotImplementedError('learning_rate: no decay: the full rate; warm-up: a linear ramp from 0; after it: the cosine with its 0.1 floor (progress is not capped)')


def configure_optimizer(model: nn.Module, config: TrainerConfig) -> torch.optim.AdamW:
    """AdamW over every parameter of ``model``, in two groups.

    Returns:
        an AdamW with lr=config.learning_rate and betas=config.betas whose param_groups[0] holds the
        parameters with 2 or more dimensions (weight_decay=config.weight_decay) and param_groups[1]
        the others (weight_decay=0.0), each in model.named_parameters() order.
    """
    raise NotImplementedError('configure_optimizer: split model.named_parameters() on p.dim() >= 2 into two groups; torch.optim.AdamW(groups, lr=..., betas=...)')


class Trainer:
    """Trains ``model`` on ``train_dataset`` (items (x, y) of (T,) int64 tensors).

    Args:
        model: a module whose forward(x, y) returns (logits, loss).
        train_dataset: the examples; a ``rng`` attribute (random.Random), when present, is saved in
            checkpoints so resumed training draws the same examples.
        test_dataset: optional; its mean loss is logged after every epoch.
        config: a TrainerConfig.
    Attributes: model, optimizer, device, tokens (counted so far), steps (optimiser steps so far), epoch,
        item_length (T of the current epoch's items before cropping; None before the first epoch).
    """

    def __init__(self, model: nn.Module, train_dataset: Dataset, test_dataset: Dataset | None = None,
                 config: TrainerConfig | None = None):
        self.config = config or TrainerConfig()
        self.device = resolve_device(self.config.device)
        self.model = model.to(self.device)
        self.train_dataset, self.test_dataset = train_dataset, test_dataset
        self.optimizer = configure_optimizer(self.model, self.config)
        self.autocast_dtype = autocast_dtype(self.device, self.config.autocast)
        self.tokens, self.steps, self.epoch = 0, 0, 0
        self.item_length: int | None = None
        self.rng = random.Random(self.config.seed)
        self.rows: list[dict] = []
        self.elapsed = 0.0
        self._position = 0
        self._epoch_states = None

    def autocast(self) -> AbstractContextManager:
        """The mixed-precision context for the forward pass (a no-op when autocast is off)."""
        return autocast_context(self.device, self.autocast_dtype)

    def step(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """One optimiser step on one batch.

        Args:
            x, y: (B, T) int64 inputs and targets (moved to the trainer's device here).
        Returns:
            the batch's loss before the step, a detached 0-dim float32 tensor. Afterwards
            ``self.tokens`` has grown by B * length (length = the items' length before cropping,
            self.item_length, else T), every parameter group's "lr" is learning_rate(self.tokens),
            and ``self.steps`` has grown by 1.
        """
        x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
        length = self.item_length or x.shape[1]
        self.model.train()
        raise NotImplementedError("Trainer.step: count the tokens and set every group's lr first; forward under self.autocast() only; zero the grads, backward, clip to config.grad_norm_clip, optimizer step")
        self.steps += 1
        return loss.detach().float()

    # ---------------------------------------------------------------- given: the loop

    def train(self) -> dict:
        """Run epochs until max_epochs (or the time or step budget), with logging and checkpoints.

        Returns:
            a summary: {"epochs", "steps", "tokens", "seconds", "loss" (mean of the last epoch's
            steps), "stopped" ("done", "time budget" or "step budget"), "tokens_per_second"}.
        """
        config = self.config
        if config.resume and config.checkpoint_path and Path(config.checkpoint_path).is_file():
            self.load_checkpoint(config.checkpoint_path)
            log.info("resumed from %s at epoch %d, step %d", config.checkpoint_path, self.epoch, self.steps)
        per_epoch = math.ceil(len(self.train_dataset) / config.batch_size)
        bar = tqdm(total=config.max_epochs * per_epoch, initial=self.steps, disable=not config.progress,
                   desc="training", unit="step", dynamic_ncols=True)
        stopped, started, saved = "done", time.perf_counter() - self.elapsed, self.elapsed
        try:
            while self.epoch < config.max_epochs and stopped == "done":
                losses = []
                for x, y in self._epoch_batches():
                    losses.append(self.step(x, y))
                    self._position += 1
                    self.elapsed = time.perf_counter() - started
                    self.rows.append({"step": self.steps, "epoch": self.epoch, "tokens": self.tokens,
                                      "lr": self.optimizer.param_groups[0]["lr"], "seconds": round(self.elapsed, 3)})
                    bar.update()
                    if config.max_steps is not None and self.steps >= config.max_steps:
                        stopped = "step budget"
                    elif config.max_seconds is not None and self.elapsed >= config.max_seconds:
                        stopped = "time budget"
                    if stopped != "done":
                        break
                self._fill_losses(losses)
                if stopped == "done":
                    self.epoch, self._position, self._epoch_states = self.epoch + 1, 0, None
                    test_loss = self.test_loss()
                    if test_loss is not None:
                        self.rows[-1]["test_loss"] = test_loss
                if losses:
                    bar.set_postfix(loss=f"{self.rows[-1]['loss']:.3f}", lr=f"{self.rows[-1]['lr']:.2e}")
                finished = stopped != "done" or self.epoch >= config.max_epochs
                if config.checkpoint_path and (finished or self.elapsed - saved >= config.checkpoint_seconds):
                    self.save_checkpoint(config.checkpoint_path)
                    saved = self.elapsed
        finally:
            bar.close()
        self.elapsed = time.perf_counter() - started
        self.write_log()
        if config.ckpt_path:
            Path(config.ckpt_path).parent.mkdir(parents=True, exist_ok=True)
            torch.save(self.model.state_dict(), config.ckpt_path)
        last = [row["loss"] for row in self.rows if row["epoch"] == self.rows[-1]["epoch"]] if self.rows else []
        return {"epochs": self.epoch, "steps": self.steps, "tokens": self.tokens, "seconds": self.elapsed,
                "loss": sum(last) / len(last) if last else float("nan"), "stopped": stopped,
                "tokens_per_second": self.tokens / self.elapsed if self.elapsed > 0 else 0.0}

    def _epoch_batches(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """This epoch's batches from the current position (the plan is rebuilt identically on resume)."""
        dataset_rng = getattr(self.train_dataset, "rng", None)
        if self._epoch_states is None:
            self._epoch_states = (self.rng.getstate(), dataset_rng.getstate() if dataset_rng else None)
        else:  # resuming inside an epoch: replay the random draws of its plan
            self.rng.setstate(self._epoch_states[0])
            if dataset_rng is not None:
                dataset_rng.setstate(self._epoch_states[1])
        plan = plan_batches(self.train_dataset, self.config.batch_size, self.rng, self.config.sort_by_length,
                            self.config.num_workers)
        self.item_length = plan.item_length
        yield from plan.batches[self._position:]

    def _fill_losses(self, losses: list[torch.Tensor]) -> None:
        """Copy this epoch's losses (kept on the device until now: one synchronisation per epoch) into the log."""
        if losses:
            for row, value in zip(self.rows[-len(losses):], torch.stack(losses).tolist(), strict=True):
                row["loss"] = value

    @torch.no_grad()
    def test_loss(self) -> float | None:
        """Mean loss over test_dataset in evaluation mode, or None without one."""
        if self.test_dataset is None or len(self.test_dataset) == 0:
            return None
        self.model.eval()
        total, count = 0.0, 0
        for x, y in plan_batches(self.test_dataset, self.config.batch_size, random.Random(0)).batches:
            with self.autocast():
                _, loss = self.model(x.to(self.device), y.to(self.device))
            total, count = total + float(loss) * len(x), count + len(x)
        self.model.train()
        return total / count

    # ---------------------------------------------------------------- given: checkpoints and logs

    def state(self) -> dict:
        """Everything needed to continue training exactly where it stopped."""
        cuda = torch.cuda.get_rng_state(self.device) if self.device.type == "cuda" else None
        dataset_rng = getattr(self.train_dataset, "rng", None)
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "tokens": self.tokens, "steps": self.steps, "epoch": self.epoch, "position": self._position,
                "epoch_states": self._epoch_states, "rng": self.rng.getstate(),
                "dataset_rng": dataset_rng.getstate() if dataset_rng else None,
                "torch_rng": torch.get_rng_state(), "cuda_rng": cuda, "rows": self.rows, "elapsed": self.elapsed,
                "config": asdict(self.config)}

    def save_checkpoint(self, path: str | Path) -> None:
        """Write ``state()`` to ``path`` (atomically: a crash never leaves half a checkpoint)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        torch.save(self.state(), temporary)
        temporary.replace(path)

    def load_checkpoint(self, path: str | Path) -> None:
        """Restore a ``save_checkpoint`` file (same model shape and dataset)."""
        state = torch.load(path, map_location=self.device, weights_only=False)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.tokens, self.steps, self.epoch = state["tokens"], state["steps"], state["epoch"]
        self._position, self._epoch_states = state["position"], state["epoch_states"]
        self.rng.setstate(state["rng"])
        dataset_rng = getattr(self.train_dataset, "rng", None)
        if dataset_rng is not None and state["dataset_rng"] is not None:
            dataset_rng.setstate(state["dataset_rng"])
        torch.set_rng_state(state["torch_rng"].cpu())
        if state["cuda_rng"] is not None and self.device.type == "cuda":
            torch.cuda.set_rng_state(state["cuda_rng"].cpu(), self.device)
        self.rows, self.elapsed = state["rows"], state["elapsed"]

    def write_log(self) -> None:
        """Write the CSV log and the PNG loss curve, where configured."""
        if self.config.log_path and self.rows:
            path = Path(self.config.log_path)
            path.parent.mkdir(parents=True, exist_ok=True)
            names = ["step", "epoch", "tokens", "lr", "loss", "seconds", "test_loss"]
            with open(path, "w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=names, restval="")
                writer.writeheader()
                writer.writerows(self.rows)
        if self.config.plot_path and self.rows:
            plot_losses(self.rows, Path(self.config.plot_path))


# ---------------------------------------------------------------- given: batches


class Plan(NamedTuple):
    """One epoch's batches, and the length T of its items before cropping (what a batch's tokens count)."""

    batches: list[tuple[torch.Tensor, torch.Tensor]]
    item_length: int


def plan_batches(dataset: Dataset, batch_size: int, rng: random.Random, sort_by_length: bool = True,
                 num_workers: int = 0) -> Plan:
    """One epoch of batches: every item once, in an order drawn from ``rng``.

    Items are drawn in a shuffled order (``draw_items``); with ``sort_by_length`` they are grouped by
    length (the number of non-pad inputs) and the batches are shuffled. Each batch is cropped to its
    longest item (pads are only ever at the end).

    Returns:
        a Plan: batches, a list of (x, y) pairs of (B, T') int64 tensors, T' <= T, and item_length T.
    """
    order = list(range(len(dataset)))
    rng.shuffle(order)
    items = draw_items(dataset, order, batch_size, rng, num_workers)
    lengths = [int((x != PAD_ID).sum()) for x, _ in items]
    ranked = sorted(range(len(items)), key=lengths.__getitem__) if sort_by_length else list(range(len(items)))
    groups = [ranked[i:i + batch_size] for i in range(0, len(ranked), batch_size)]
    if sort_by_length:
        rng.shuffle(groups)
    batches = []
    for group in groups:
        keep = max(1, max(lengths[i] for i in group))
        batches.append((torch.stack([items[i][0][:keep] for i in group]),
                        torch.stack([items[i][1][:keep] for i in group])))
    return Plan(batches, len(items[0][0]) if items else 0)


def draw_items(dataset: Dataset, order: list[int], chunk: int, rng: random.Random,
               num_workers: int = 0) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """``dataset[i]`` for each i of ``order``, in that order, built by ``num_workers`` DataLoader workers.

    Without workers the items come from this process, so a dataset's ``rng`` advances here (and a
    checkpoint saves it). A worker holds a copy of the dataset, and copies of one ``rng`` would all draw
    the same stream: each worker reseeds its copy's ``rng`` from DataLoader's per-worker seed, whose base
    is drawn from ``rng`` (the batch order's generator). The workers' streams are therefore distinct,
    different every epoch, and the same whenever ``rng`` is in the same state with the same num_workers
    and ``chunk`` (the items a worker builds in one go): a run is reproducible, and a resumed one rebuilds
    its epoch exactly. The examples differ from those of a run with another num_workers.

    Returns:
        a list of (x, y) pairs of (T,) int64 tensors.
    """
    if num_workers == 0:
        return [dataset[i] for i in order]
    generator = torch.Generator().manual_seed(rng.getrandbits(63))
    loader = DataLoader(dataset, batch_size=chunk, sampler=order, num_workers=num_workers,
                        worker_init_fn=_reseed_worker, generator=generator)
    return [item for x, y in loader for item in zip(x.unbind(), y.unbind(), strict=True)]


def _reseed_worker(worker_id: int) -> None:
    """In a DataLoader worker: seed the dataset copy's ``rng`` (if it has one) with the worker's own seed."""
    info = get_worker_info()
    rng = getattr(info.dataset, "rng", None)
    if rng is not None:
        rng.seed(info.seed)


# ---------------------------------------------------------------- given: devices, precision, timing


def resolve_device(name: str = "auto") -> torch.device:
    """"auto": the current CUDA device when one is available, else the CPU; otherwise torch.device(name)."""
    if name == "auto":
        return torch.device("cuda", torch.cuda.current_device()) if torch.cuda.is_available() else torch.device("cpu")
    return torch.device(name)


def autocast_dtype(device: torch.device, mode: str = "auto") -> torch.dtype | None:
    """The autocast dtype for ``mode`` on ``device``: "auto" is bf16 on a CUDA device that supports
    it and none elsewhere (on a CPU it only helps wide models); "bf16" forces it; "off" is None."""
    if mode not in AUTOCAST_MODES:
        raise ValueError(f"autocast must be one of {', '.join(AUTOCAST_MODES)}, got {mode!r}")
    if mode == "off":
        return None
    if mode == "bf16":
        return torch.bfloat16
    return torch.bfloat16 if device.type == "cuda" and torch.cuda.is_bf16_supported() else None


def autocast_context(device: torch.device, dtype: torch.dtype | None) -> AbstractContextManager:
    """torch.autocast for ``device``'s type in ``dtype``, or a no-op context when dtype is None."""
    if dtype is None:
        return nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def synchronize(device: torch.device) -> None:
    """Wait for the device's queued work (CUDA runs asynchronously; a CPU has nothing to wait for)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_call(fn: Callable[[], object], device: torch.device, repeats: int = 5, warmup: int = 1) -> list[float]:
    """Seconds per call of ``fn`` on ``device``, ``repeats`` times after ``warmup`` untimed calls.

    On CUDA each call is timed with CUDA events after a synchronisation (wall clocks would time the
    launch, not the work); elsewhere with ``time.perf_counter``. Take the median of the result.
    """
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        if device.type == "cuda":
            synchronize(device)
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end) / 1000.0)
        else:
            started = time.perf_counter()
            fn()
            times.append(time.perf_counter() - started)
    return times


def plot_losses(rows: list[dict], path: Path) -> None:
    """A PNG of the training loss (and the test loss, when logged) against tokens."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    tokens, losses = [row["tokens"] for row in rows], [row["loss"] for row in rows]
    axes.plot(tokens, losses, linewidth=0.6, alpha=0.5, label="train (per step)")
    window = max(1, len(losses) // 50)
    if window > 1:
        smooth = [sum(losses[max(0, i - window + 1):i + 1]) / len(losses[max(0, i - window + 1):i + 1])
                  for i in range(len(losses))]
        axes.plot(tokens, smooth, linewidth=1.5, label=f"train (mean of {window} steps)")
    tested = [(row["tokens"], row["test_loss"]) for row in rows if "test_loss" in row]
    if tested:
        axes.plot(*zip(*tested, strict=True), "o-", label="test")
    axes.set_xlabel("tokens")
    axes.set_ylabel("loss")
    axes.legend()
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=100)
    plt.close(figure)
