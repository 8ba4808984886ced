"""The language model: the character tokenizer, loading a checkpoint, packing sequences, and
pretraining the small base model isobook builds from its own task."""
