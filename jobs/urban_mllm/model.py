"""The multimodal model: view encoders, the cross-view perceiver (or the plain projector), and a tiny Llama.

- `ViewEncoder`: a conv stem per view type (satellite, street) turning a 16 × 16 image into 16 LayerNorm-ed tokens
  (one per 4 × 4 patch) of width `vision_dim`, plus a learned position embedding per patch and a view-type embedding.
- `CrossViewPerceiver` (latents K > 0): K learned latents; L blocks of `Z ← Z + CrossAttn(Z, inputs)`,
  `Z ← Z + SelfAttn(Z)`, `Z ← Z + MLP(Z)`; a street image's inputs are its own tokens *and* the tokens of the
  satellite tile it is shown with, so the latents model satellite ↔ street interactions explicitly. The K latents
  are projected into the LLM's embedding space: K visual tokens per image. Both paths end in a LayerNorm, so the
  visual tokens enter the LLM at unit scale whatever the stems' initial output scale (without it the random-init
  stems' tokens barely varied across images and the LLM fell back to the answers' class priors).
- `latents = 0` is the ablation: plain concatenation, each image's 16 tokens through a 2-layer MLP projector.
- The language model is `transformers`' `LlamaForCausalLM` built from a tiny `LlamaConfig` (random init, no
  weights downloaded); image tokens enter as `inputs_embeds`. At paper scale the view encoders and the LLM would be
  pretrained checkpoints loaded from local paths; the perceiver code is the same.
"""

from __future__ import annotations

import torch
from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM

from raygent.jobs.urban_mllm.tokens import SAT, STREET, VOCAB, Batch

PATCHES = 16


class ViewEncoder(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.stems = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.GELU(), nn.Conv2d(32, dim, 4, stride=4))
            for _ in (SAT, STREET)
        ])
        self.norm = nn.LayerNorm(dim)
        self.position = nn.Parameter(torch.randn(2, PATCHES, dim) * 0.02)
        self.kind = nn.Parameter(torch.randn(2, 1, dim) * 0.02)

    def forward(self, images: torch.Tensor, kind: int) -> torch.Tensor:
        """(B, 3, 16, 16) in [0, 1] → (B, 16, dim): centred pixels, conv stem, LayerNorm, position and view type."""
        tokens = self.stems[kind]((images - 0.5) / 0.25).flatten(2).transpose(1, 2)
        return self.norm(tokens) + self.position[kind] + self.kind[kind]


class PerceiverBlock(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.norm_q, self.norm_kv = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.cross = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm_self = nn.LayerNorm(dim)
        self.self_attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm_mlp = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, latents: torch.Tensor, inputs: torch.Tensor) -> torch.Tensor:
        kv = self.norm_kv(inputs)
        latents = latents + self.cross(self.norm_q(latents), kv, kv, need_weights=False)[0]
        h = self.norm_self(latents)
        latents = latents + self.self_attn(h, h, h, need_weights=False)[0]
        return latents + self.mlp(self.norm_mlp(latents))


class CrossViewPerceiver(nn.Module):
    def __init__(self, latents: int, dim: int, out_dim: int, blocks: int = 2, heads: int = 4) -> None:
        super().__init__()
        self.latents = nn.Parameter(torch.randn(latents, dim) * 0.02)
        self.blocks = nn.ModuleList([PerceiverBlock(dim, heads) for _ in range(blocks)])
        self.out = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, out_dim), nn.LayerNorm(out_dim))

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        """(B, N, dim) tokens of one image and its context → (B, K, out_dim)."""
        z = self.latents.unsqueeze(0).expand(len(inputs), -1, -1)
        for block in self.blocks:
            z = block(z, inputs)
        return self.out(z)


class UrbanMLLM(nn.Module):
    def __init__(self, latents: int, vision_dim: int = 64, hidden: int = 128, layers: int = 2, heads: int = 4,
                 max_positions: int = 256) -> None:
        super().__init__()
        self.latents = latents
        self.vision = ViewEncoder(vision_dim)
        self.projector: nn.Module
        if latents > 0:
            self.projector = CrossViewPerceiver(latents, vision_dim, hidden)
        else:
            self.projector = nn.Sequential(nn.Linear(vision_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden),
                                           nn.LayerNorm(hidden))
        config = LlamaConfig(vocab_size=len(VOCAB), hidden_size=hidden, intermediate_size=2 * hidden,
                             num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                             max_position_embeddings=max_positions, pad_token_id=VOCAB["<pad>"],
                             bos_token_id=VOCAB["<bos>"], eos_token_id=VOCAB["<pad>"], tie_word_embeddings=True)
        self.llm = LlamaForCausalLM(config)

    def visual_tokens(self, batch: Batch) -> list[torch.Tensor]:
        """Per image slot, (B, V, hidden): K perceiver latents, or the 16 projected patch tokens."""
        encoded = [self.vision(torch.from_numpy(pixels), kind)
                   for pixels, kind in zip(batch.images, batch.kinds, strict=True)]
        if self.latents == 0:
            return [self.projector(tokens) for tokens in encoded]
        out = []
        for slot, tokens in enumerate(encoded):
            context = batch.context[slot]
            inputs = tokens if context < 0 else torch.cat([tokens, encoded[context]], dim=1)
            out.append(self.projector(inputs))
        return out

    def forward(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Logits (B, T, vocab) over the whole sequence, and the targets (B, T) and loss mask (T,) aligned with them:
        position t predicts the token at t + 1 when that token is a predicted text column."""
        visual = self.visual_tokens(batch)
        text = torch.from_numpy(batch.text)
        embed = self.llm.get_input_embeddings()
        pieces, targets, mask = [], [], []
        n = len(text)
        for kind, index in batch.layout:
            if kind == "img":
                pieces.append(visual[index])
                width = visual[index].shape[1]
                targets.append(torch.zeros(n, width, dtype=torch.long))
                mask += [False] * width
            else:
                pieces.append(embed(text[:, index:index + 1]))
                targets.append(text[:, index:index + 1])
                mask.append(bool(batch.loss_mask[index]))
        sequence = torch.cat(pieces, dim=1)
        logits = self.llm(inputs_embeds=sequence).logits
        target = torch.cat(targets, dim=1)
        return logits[:, :-1], target[:, 1:], torch.tensor(mask[1:])


def sequence_loss(model: UrbanMLLM, batch: Batch) -> torch.Tensor:
    """Mean next-token cross-entropy over the predicted text tokens."""
    logits, target, mask = model(batch)
    return nn.functional.cross_entropy(logits[:, mask].reshape(-1, logits.shape[-1]), target[:, mask].reshape(-1))


@torch.no_grad()
def answer(model: UrbanMLLM, batch: Batch, choices: list[int]) -> torch.Tensor:
    """(B,) the predicted answer token (argmax over `choices`) at the batch's last text column."""
    logits, _, _ = model(batch)
    last = logits[:, -1, choices]
    return torch.tensor(choices)[last.argmax(dim=1)]
