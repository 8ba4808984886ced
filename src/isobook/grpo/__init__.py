"""One GRPO run: advantages, the loss, the paper's recipe, token accounting, the update
(collect -> score -> advantages -> loss -> step), evaluation and the run loop."""
