"""Device and precision resolution, and what of them enters a run's name."""

import pytest
import torch

from isobook.config import ConfigError, SystemConfig
from isobook.device import Processes, launched_processes, numerics, resolve_placement
from isobook.grpo.shards import data_parallel_shard
from isobook.store.names import run_name

from conftest import smoke_config


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU-only answers")
def test_auto_is_cpu_and_fp32_without_a_gpu_and_cuda_is_refused() -> None:
    placement = resolve_placement(SystemConfig())
    assert (placement.device.type, placement.precision, placement.dtype) == ("cpu", "fp32", torch.float32)
    with placement.autocast():
        assert not torch.is_autocast_enabled("cpu")
    bf16 = resolve_placement(SystemConfig(precision="bf16"))
    with bf16.autocast():
        assert torch.is_autocast_enabled("cpu") and torch.get_autocast_dtype("cpu") == torch.bfloat16
    with pytest.raises(ConfigError, match="system.device: 'cuda' asked for, but torch sees no CUDA device"):
        resolve_placement(SystemConfig(device="cuda"))


def test_engine_and_precision_name_a_run_only_when_they_differ_from_the_default(tmp_path) -> None:
    default = smoke_config(tmp_path)
    assert numerics(default.system) == ()
    assert run_name(smoke_config(tmp_path, "system.device=cpu", "system.micro_batch_tokens=64")) == run_name(default)
    names = {run_name(smoke_config(tmp_path, *extra)) for extra in
             [(), ("system.precision=bf16",), ("system.engine=vllm",), ("system.engine=vllm", "system.precision=bf16")]}
    assert len(names) == 4


def test_the_launchers_variables_give_the_process_its_place(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert launched_processes() == Processes(0, 1) and launched_processes().main
    monkeypatch.setenv("RANK", "1")
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert launched_processes() == Processes(1, 2) and not launched_processes().main
    with pytest.raises(RuntimeError, match="WORLD_SIZE=2 but no process group"):
        data_parallel_shard(8)  # a trainer outside run_grpo, whose Accelerator would start the group
