"""The pieces of the learner group that are plain torch: the process group, DDP/FSDP wrapping, LoRA adapters and
the state dicts that leave the learner (weight sync, checkpoints): the merged weights under the plain model's
names, or with LoRA the adapters alone (`policies.adapters`, which the engines share for adapter-only sync).

`learner.Learner` uses the LoRA and state-dict helpers (a single learner can train adapters too);
`learner_group.LearnerWorker` uses the rest.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor

from raygent.platform.rl.settings import LoraSettings
from raygent.policies.adapters import ADAPTER, LORA_MARK, LoraSpec, inject_lora
from raygent.policies.adapters import adapter_state as adapter_state  # re-exported: the learner's checkpoints

# -- process group -------------------------------------------------------------------------------------------


def backend_for(device: str) -> str:
    """NCCL for a CUDA learner, gloo otherwise."""
    return "nccl" if device.startswith("cuda") else "gloo"


def rendezvous_address() -> tuple[str, int]:
    """This node's address and a free TCP port on it (rank 0 calls this; the port is released before use, the
    usual small race that torchrun and Ray Train accept too)."""
    import ray

    address = ray.util.get_node_ip_address()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((address, 0))
        port = int(sock.getsockname()[1])
    return address, port


def init_process_group(rank: int, world_size: int, address: str, port: int, device: str) -> None:
    """Joins the group that lives as long as the actor (`tcp://address:port`, rank 0 listening)."""
    backend = backend_for(device)
    if backend == "nccl":
        torch.cuda.set_device(0)  # Ray gives each learner actor its own GPU as device 0
    elif address in ("127.0.0.1", "localhost") and "GLOO_SOCKET_IFNAME" not in os.environ:
        os.environ["GLOO_SOCKET_IFNAME"] = "lo"  # a one-machine group on loopback stays on loopback
    dist.init_process_group(
        backend,
        init_method=f"tcp://{address}:{port}",
        rank=rank,
        world_size=world_size,
        timeout=timedelta(minutes=30),
    )


def is_distributed() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


def rank() -> int:
    return dist.get_rank() if is_distributed() else 0


# -- wrapping ------------------------------------------------------------------------------------------------


def wrap_ddp(model: torch.nn.Module, device: str) -> torch.nn.Module:
    """DDP without its per-backward all-reduce: micro-batch backwards only accumulate locally (the wrapper is
    left in `no_sync` mode), and `reduce_gradients` all-reduces the accumulated gradients once per optimizer step.
    So ranks may run different numbers of micro-batches (or none). Buffers are not broadcast on forward (they are
    constants here), which keeps no-grad forwards free of collectives."""
    from torch.nn.parallel import DistributedDataParallel

    ddp = DistributedDataParallel(model, device_ids=[0] if device.startswith("cuda") else None, broadcast_buffers=False)
    ddp.require_backward_grad_sync = False
    return ddp


def reduce_gradients(ddp: torch.nn.Module, pad_id: int, device: str) -> None:
    """One synchronised backward of a zero loss on a one-token input: DDP's reducer then averages every rank's
    accumulated gradients (its bucketed all-reduce, the same as a last micro-batch outside `no_sync`)."""
    ddp.require_backward_grad_sync = True  # type: ignore[assignment]
    try:
        ids = torch.tensor([[pad_id]], device=device)
        logits = ddp(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
        (logits.float().sum() * 0.0).backward()
    finally:
        ddp.require_backward_grad_sync = False  # type: ignore[assignment]


def shard_fsdp(model: torch.nn.Module) -> None:
    """`torch.distributed.fsdp.fully_shard` on each transformer block (`_no_split_modules` of a HF model) and on
    the root, in place: parameters, gradients and (through them) AdamW's state are sharded across the group."""
    from torch.distributed.fsdp import fully_shard

    blocks = set(getattr(model, "_no_split_modules", None) or ())
    for module in list(model.modules()):
        if module is not model and type(module).__name__ in blocks:
            fully_shard(module)
    fully_shard(model)


def reshard(model: torch.nn.Module) -> None:
    """Reshard every FSDP module of `model` whose parameters a forward left gathered (the root keeps them after a
    forward without backward, e.g. the reference model's): loading a state dict needs them sharded."""
    from torch.distributed.fsdp import FSDPModule

    for module in model.modules():
        if isinstance(module, FSDPModule):
            module.reshard()


def full_model_state(model: torch.nn.Module) -> dict[str, Tensor]:
    """The full (unsharded) state dict on rank 0's CPU — a collective under FSDP, every rank must call it;
    other ranks get an empty dict."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    state = get_model_state_dict(model, options=options)
    return {name: tensor for name, tensor in state.items() if isinstance(tensor, Tensor)}


# -- LoRA ----------------------------------------------------------------------------------------------------


def apply_lora(model: torch.nn.Module, lora: LoraSettings) -> dict[str, float]:
    """Injects `peft` LoRA adapters into `model` in place (`policies.adapters.inject_lora`, as the `hf` engine
    does on its side), freezes everything else and returns each adapted module's scaling (alpha / rank) by name."""
    scaling = inject_lora(model, lora_spec(lora))
    for name, parameter in model.named_parameters():
        parameter.requires_grad_(LORA_MARK in name)
    return scaling


def lora_spec(lora: LoraSettings) -> LoraSpec:
    """`learner.lora` as the `LoraSpec` the engines get (backend option `lora`) for adapter-only sync."""
    return LoraSpec(rank=lora.rank, alpha=lora.alpha, target_modules=tuple(lora.target_modules), dropout=lora.dropout)


def merged_state(state: Mapping[str, Tensor], scaling: Mapping[str, float]) -> dict[str, Tensor]:
    """A LoRA model's state dict as the plain model's: `base_layer` names without it, W + scaling·B·A for each
    adapted weight, adapters left out. Same names, shapes, dtypes and order as the model before `apply_lora`."""
    if not scaling:
        return dict(state)
    out: dict[str, Tensor] = {}
    for name, tensor in state.items():
        if LORA_MARK not in name:
            out[name.replace(".base_layer.", ".")] = tensor
    for prefix, scale in scaling.items():
        a = state[f"{prefix}.lora_A.{ADAPTER}.weight"]
        b = state[f"{prefix}.lora_B.{ADAPTER}.weight"]
        weight = out[f"{prefix}.weight"]
        delta = scale * (b.detach().to(torch.float32) @ a.detach().to(torch.float32))
        out[f"{prefix}.weight"] = (weight.detach().to(torch.float32) + delta.to(weight.device)).to(weight.dtype)
    return out


# -- small collectives ---------------------------------------------------------------------------------------


def broadcast_object(value: Any) -> Any:
    """Rank 0's `value` on every rank (the value itself when not distributed)."""
    if not is_distributed():
        return value
    box = [value]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def gather_objects(value: Any) -> list[Any]:
    """Every rank's `value` on rank 0 (in rank order); other ranks get an empty list."""
    if not is_distributed():
        return [value]
    out: list[Any] = [None] * dist.get_world_size() if rank() == 0 else []
    dist.gather_object(value, out if rank() == 0 else None, dst=0)
    return out
