"""The GRPO objective isobook trains with (the paper's "healthy recipe", Figures 3-4).

Which variant, term by term:

* **Advantages**: group-relative. Each problem's n rollouts form a group; a rollout's
  advantage is its reward minus the group mean, divided by the group's (population)
  standard deviation when `normalize_std` is on. A group whose rewards are all equal has
  zero advantage (its "zero variance"). The baseline may come from `n_est` rollouts while
  the gradient uses a random `n_train` of them (the decoupled baseline, paper Appendix C).
* **Policy term**: PPO's clipped importance ratio ``pi / pi_old`` per token. isobook makes
  one update per batch (strictly on-policy), so the ratio is 1 and only carries the
  gradient; the clip matters only if a batch is reused.
* **Truncated importance sampling (TIS)**: the rollout engine's sampler and the trainer
  disagree slightly on log-probs (kernels, dtypes, vLLM); each token's policy term is
  weighted by ``min(pi_old / mu, cap)`` (``mu``: the engine's probability), detached.
* **KL to the base model**: the k3 estimator ``exp(ref - logp) - (ref - logp) - 1``
  (Schulman, "Approximating KL divergence", 2020): unbiased, always >= 0.
* **Entropy bonus**: the mean per-token entropy of the policy, subtracted with its weight.
* **Aggregation**: token mean over all valid tokens of the batch ("token-mean"), so long
  and short completions weigh by their tokens; with data parallelism, over the whole
  batch across micro-batches and processes (`BatchTokens`), not per part.
* **Zero-variance filter**: `none` keeps every group; `all` drops zero-variance groups from
  every term; `regularisers` drops them from the KL and entropy terms only (paper Fig. 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import torch


class ZeroVarianceFilter(str, Enum):
    """Which terms leave out groups whose rewards are all equal."""

    NONE = "none"
    ALL = "all"
    REGULARISERS = "regularisers"


@dataclass(frozen=True)
class LossWeights:
    """Coefficients of the objective: `clip` is PPO's epsilon, `tis_cap` the TIS truncation."""

    clip: float = 0.2
    tis_cap: float = 2.0
    kl: float = 0.0
    entropy: float = 0.0
    zero_variance: ZeroVarianceFilter = ZeroVarianceFilter.NONE


@dataclass
class LossTerms:
    """The loss to backpropagate and its parts (token means) for logging."""

    loss: torch.Tensor  # scalar, differentiable
    policy: float
    kl: float
    entropy: float
    clip_fraction: float  # share of policy tokens whose ratio was clipped
    tis_truncated_fraction: float  # share of policy tokens whose TIS weight hit the cap


def group_advantages(rewards: torch.Tensor, normalize_std: bool, eps: float = 1e-6) -> torch.Tensor:
    """Reward minus the group mean (over the std too if `normalize_std`). # [G, n] -> [G, n]"""
    centred = rewards - rewards.mean(dim=1, keepdim=True)
    if normalize_std:
        centred = centred / (rewards.std(dim=1, unbiased=False, keepdim=True) + eps)
    return centred


def zero_variance_groups(rewards: torch.Tensor) -> torch.Tensor:
    """True for groups whose rewards are all equal. # [G, n] -> [G]"""
    return (rewards == rewards[:, :1]).all(dim=1)


def decoupled_advantages(rewards: torch.Tensor, n_train: int, normalize_std: bool,
                         generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Baseline (and std) from all `n_est` rollouts of a group, gradient on a random `n_train`.

    `rewards`: # [G, n_est]. Returns the chosen rollouts' advantages and their indices
    within the group, # [G, n_train] each.
    """
    groups, n_est = rewards.shape
    if not 1 <= n_train <= n_est:
        raise ValueError(f"n_train: must lie in [1, n_est={n_est}], got {n_train}")
    advantages = group_advantages(rewards, normalize_std)
    index = torch.stack([torch.randperm(n_est, generator=generator)[:n_train] for _ in range(groups)])
    return advantages.gather(1, index), index


@dataclass(frozen=True)
class Shard:
    """A batch split over `count` data-parallel processes whose gradients are averaged (DDP)."""

    count: int = 1

    def total(self, local: torch.Tensor) -> torch.Tensor:
        """`local` summed over the processes."""
        if self.count == 1:
            return local
        summed = local.clone()
        torch.distributed.all_reduce(summed)
        return summed


@dataclass(frozen=True)
class BatchTokens:
    """What the token means divide by: the whole batch's token counts over the number of
    processes, also when the loss is taken micro-batch by micro-batch (gradient
    accumulation) or process by process. A part's terms are then its share of the batch's
    mean times the process count; DDP averages the processes' gradients, so the summed,
    averaged gradient is the batch's."""

    policy: torch.Tensor  # scalar: policy-term tokens of the batch / processes
    regulariser: torch.Tensor  # scalar: KL and entropy tokens of the batch / processes


def batch_tokens(mask: torch.Tensor, zero_variance: torch.Tensor, weights: LossWeights,
                 shard: Shard = Shard()) -> BatchTokens:
    """Token counts of the batch whose rollouts (this process's) are `mask` # [N, T] and
    `zero_variance` # [N], summed over the processes of `shard`."""
    policy_mask, regulariser_mask = _term_masks(mask, zero_variance, weights)
    return BatchTokens(policy=shard.total(policy_mask.sum()).clamp(min=1.0) / shard.count,
                       regulariser=shard.total(regulariser_mask.sum()).clamp(min=1.0) / shard.count)


def grpo_loss(logprobs: torch.Tensor, old_logprobs: torch.Tensor, engine_logprobs: torch.Tensor,
              advantages: torch.Tensor, mask: torch.Tensor, zero_variance: torch.Tensor,
              weights: LossWeights, ref_logprobs: torch.Tensor | None = None,
              entropy: torch.Tensor | None = None, tokens: BatchTokens | None = None) -> LossTerms:
    """The GRPO loss of one batch of N rollouts; see the module docstring.

    `logprobs` (with gradient), `old_logprobs` (trainer, at sampling time), `engine_logprobs`
    (rollout engine), `ref_logprobs` (base model), `entropy`, `mask`: # [N, T];
    `advantages`, `zero_variance` (the rollout's group has equal rewards): # [N].
    When these rollouts are a part of the batch (a micro-batch, a process's share), `tokens`
    holds the whole batch's counts and the terms returned are this part's share of it.
    """
    tokens = tokens or batch_tokens(mask, zero_variance, weights)
    policy_mask, regulariser_mask = _term_masks(mask, zero_variance, weights)

    ratio = torch.exp(logprobs - old_logprobs)  # [N, T]
    advantage = advantages[:, None]
    clipped = ratio.clamp(1.0 - weights.clip, 1.0 + weights.clip)
    policy_tokens = -torch.minimum(ratio * advantage, clipped * advantage)  # [N, T]
    tis = torch.exp(old_logprobs - engine_logprobs).clamp(max=weights.tis_cap).detach()  # [N, T]
    policy = _token_mean(tis * policy_tokens, policy_mask, tokens.policy)
    loss = policy

    kl = torch.full((), float("nan"))  # not measured without the base model's log-probs
    if ref_logprobs is not None:
        log_ratio = ref_logprobs - logprobs
        kl = _token_mean(torch.exp(log_ratio) - log_ratio - 1.0, regulariser_mask, tokens.regulariser)
        if weights.kl:
            loss = loss + weights.kl * kl
    mean_entropy = torch.zeros(())
    if entropy is not None:
        mean_entropy = _token_mean(entropy, regulariser_mask, tokens.regulariser)
        if weights.entropy:
            loss = loss - weights.entropy * mean_entropy

    was_clipped = ((ratio - clipped).abs() > 0).float()
    truncated = (torch.exp(old_logprobs - engine_logprobs) > weights.tis_cap).float()
    return LossTerms(
        loss=loss,
        policy=float(policy.detach()),
        kl=float(kl.detach()),
        entropy=float(mean_entropy.detach()),
        clip_fraction=float(_token_mean(was_clipped, policy_mask, tokens.policy)),
        tis_truncated_fraction=float(_token_mean(truncated, policy_mask, tokens.policy)),
    )


def _term_masks(mask: torch.Tensor, zero_variance: torch.Tensor, weights: LossWeights) -> tuple[torch.Tensor, torch.Tensor]:
    """The tokens the policy term and the regularisers average over. # [N, T] each"""
    mask = mask.float()
    keep = (~zero_variance).float()[:, None]  # [N, 1]
    policy_mask = mask * keep if weights.zero_variance is ZeroVarianceFilter.ALL else mask
    regulariser_mask = mask if weights.zero_variance is ZeroVarianceFilter.NONE else mask * keep
    return policy_mask, regulariser_mask


def _token_mean(values: torch.Tensor, mask: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    """The sum of `values` over the tokens `mask` keeps, divided by `tokens` (a `BatchTokens`
    count): the mean itself when these are the whole batch (0 when it keeps none)."""
    return (values * mask).sum() / tokens
