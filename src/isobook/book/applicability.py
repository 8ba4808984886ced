"""Whether a chapter runs under a config: the requirement a chapter declares, checked before it starts.

A chapter names its requirement in its ``book-declarations`` cell (``requirement = "chain-task"``);
the check lives here, so `isobook book` decides before any kernel starts, and a chapter that
does not apply becomes a page with its title and one line saying why (`isobook.book.build`),
rather than a crash halfway through its cells.
"""

from __future__ import annotations

from collections.abc import Callable

from isobook.config import Config


def _chain_task(config: Config) -> str | None:
    if config.task.family == "chain":
        return None
    return (f"it studies the chain task's own structure (its misconceptions, step skills and teacher), which "
            f"task.family={config.task.family!r} does not have")


def _second_model(config: Config) -> str | None:
    if config.task.family == "chain" or config.second_model.model.source != "isobook":
        return None
    return (f"its second model is isobook's own, which learns the chain task only; with task.family="
            f"{config.task.family!r} set second_model.model.source to a checkpoint folder to compare two models")


def _mixtures(config: Config) -> str | None:
    missing = [name for name in ("mix-dual", "mix-tri") if name not in config.sets.mixtures]
    if not missing:
        return None
    return (f"it trains on the mixtures mix-dual and mix-tri (hard, easy and very easy problems), and "
            f"sets.mixtures has no {' or '.join(missing)}")


# requirement name -> None where a config meets it, else the one line saying why not.
REQUIREMENTS: dict[str, Callable[[Config], str | None]] = {"chain-task": _chain_task, "second-model": _second_model,
                                                           "mixtures": _mixtures}


def why_not(requirement: str | None, config: Config) -> str | None:
    """None where a chapter declaring `requirement` runs under `config`, else the reason."""
    return None if requirement is None else REQUIREMENTS[requirement](config)
