"""Deep variant for the cluster-scale path: a 3-layer ReLU MLP whose output is multiplied by alpha.

f(x) = alpha * w3 . ReLU(W2 ReLU(W1 x)) with He-style initialisation (W1 ~ N(0, 2/d), W2 ~ N(0, 2/h),
w3 ~ N(0, 1/h)). The paper defines FLS as the inverse of the effective output scaling, so FLS ~ 1/alpha here
as in the two-layer model (where the output scale at init is alpha^2 instead). The paper's deep experiments use
ResNets on CIFAR; this MLP on flattened, standardised CIFAR (see `data.load_npz`) is a smaller stand-in
[rec]. Same protocol as the two-layer net: full-batch GD on the logistic loss until the train loss <= target.
Written in torch (autograd) since the hand-written gradients of `model.py` would not pay off here.
"""

from __future__ import annotations

import numpy as np
import torch

from raygent.jobs.fls.model import neuron_direction_pr

_NAMES = ("w1", "w2", "w3")


class DeepReLU:
    """3-layer ReLU MLP with output multiplier `alpha`; weights w1 (h, d), w2 (h, h), w3 (h,)."""

    def __init__(self, params: dict[str, np.ndarray], alpha: float, x: np.ndarray, y: np.ndarray) -> None:
        self.alpha = alpha
        self.params = {name: torch.tensor(params[name], dtype=torch.float32, requires_grad=True) for name in _NAMES}
        self.x = torch.as_tensor(x, dtype=torch.float32)
        self.y = torch.as_tensor(y, dtype=torch.float32)

    @classmethod
    def init(cls, x: np.ndarray, y: np.ndarray, width: int, alpha: float, seed: int) -> DeepReLU:
        """He-style init drawn from the seed only (shared across alpha); alpha enters as the output multiplier."""
        d = x.shape[1]
        generator = torch.Generator().manual_seed(seed)
        params = {
            "w1": torch.randn(width, d, generator=generator) * np.sqrt(2.0 / d),
            "w2": torch.randn(width, width, generator=generator) * np.sqrt(2.0 / width),
            "w3": torch.randn(width, generator=generator) / np.sqrt(width),
        }
        return cls({k: v.numpy() for k, v in params.items()}, alpha, x, y)

    def _outputs(self, x: torch.Tensor) -> torch.Tensor:
        p = self.params
        hidden = torch.relu(torch.relu(x @ p["w1"].T) @ p["w2"].T)
        return self.alpha * (hidden @ p["w3"])

    def forward(self, x: np.ndarray) -> np.ndarray:
        """(n, d) inputs to (n,) outputs."""
        with torch.no_grad():
            return self._outputs(torch.as_tensor(x, dtype=torch.float32)).double().numpy()

    def loss_and_step(self, lr: float, target: float) -> float:
        """Training logistic loss at the current weights; one GD step of size `lr` only if loss > target."""
        margins = self.y * self._outputs(self.x)
        loss = torch.nn.functional.softplus(-margins).mean()
        value = float(loss.detach())
        if value > target and np.isfinite(value):
            grads = torch.autograd.grad(loss, list(self.params.values()))
            with torch.no_grad():
                for param, grad in zip(self.params.values(), grads, strict=True):
                    param -= lr * grad
        return value

    def direction_pr(self) -> float:
        """Participation ratio of first-layer neuron directions weighted by their outgoing weight norms."""
        w1 = self.params["w1"].detach().double().numpy()
        outgoing = torch.linalg.vector_norm(self.params["w2"].detach(), dim=0).double().numpy()
        return neuron_direction_pr(w1, outgoing)

    def get_state(self) -> dict[str, np.ndarray]:
        return {name: tensor.detach().numpy().copy() for name, tensor in self.params.items()}

    def set_state(self, state: dict[str, np.ndarray]) -> None:
        self.params = {name: torch.tensor(state[name], dtype=torch.float32, requires_grad=True) for name in _NAMES}
