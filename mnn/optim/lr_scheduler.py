"""Learning-rate schedules: functions of the step number (MNN's ``LrScheduler`` plus
cosine annealing). Set ``opt.learning_rate = schedule(...)`` before each step."""
import math

from ..express.errors import MnnError

__all__ = ["multi_step", "inv", "exp", "cosine"]


def _step(step):
    step = int(step)
    if step < 0:
        raise MnnError(f"mnn: a schedule needs a step >= 0, got {step}")
    return step


def multi_step(base_lr, step, milestones, multipliers):
    """``base_lr`` times the multiplier of every milestone already reached.

    Parameters
    ----------
    base_lr : float
    step : int
    milestones : sequence of int
        Steps at which the rate changes (sorted here, as MNN does).
    multipliers : float or sequence of float
        One per milestone; a shorter list repeats its last entry (MNN's rule), so a
        single value is torch's ``MultiStepLR`` with ``gamma``.
    """
    step = _step(step)
    if isinstance(multipliers, (int, float)):
        multipliers = [multipliers]
    multipliers = [float(m) for m in multipliers]
    if milestones and not multipliers:
        raise MnnError("mnn: multi_step needs at least one multiplier")
    lr = float(base_lr)
    for i, milestone in enumerate(sorted(int(m) for m in milestones)):
        if step >= milestone:
            lr *= multipliers[min(i, len(multipliers) - 1)]
    return lr


def inv(base_lr, step, gamma, power):
    """``base_lr * (1 + gamma * step) ** -power`` (Caffe's and MNN's ``inv``)."""
    return float(base_lr) * (1.0 + float(gamma) * _step(step)) ** (-float(power))


def exp(base_lr, step, gamma):
    """``base_lr * gamma ** step`` (torch's ``ExponentialLR``)."""
    return float(base_lr) * float(gamma) ** _step(step)


def cosine(base_lr, step, total_steps, min_lr=0.0):
    """Cosine annealing from ``base_lr`` at step 0 to ``min_lr`` at ``total_steps``
    (torch's ``CosineAnnealingLR`` closed form; constant at ``min_lr`` afterwards)."""
    step, total = _step(step), int(total_steps)
    if total <= 0:
        raise MnnError(f"mnn: cosine needs total_steps > 0, got {total}")
    step = min(step, total)
    return float(min_lr) + (float(base_lr) - float(min_lr)) * (
        1.0 + math.cos(math.pi * step / total)) / 2.0
