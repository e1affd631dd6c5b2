"""Running observation normalizer, exportable to ONNX together with the policy."""

from __future__ import annotations

import torch
from torch import nn

from sim2real.rl.distributed import pooled_moments


class EmpiricalNormalizer(nn.Module):
    """Normalize features by their running mean and variance, then clip.

    Statistics are merged batch by batch with the parallel algorithm of Chan, Golub and LeVeque
    (1979), computed in float64 and stored as float32 buffers, so they travel with the model's
    state dict. forward() is plain tensor arithmetic on those buffers (ONNX Sub, Div, Sqrt, Clip).
    """

    def __init__(self, num_features: int, eps: float = 1e-4, clip: float = 5.0) -> None:
        """Start from mean 0, variance 1 and count 0 for num_features features."""
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.clip = clip
        self.frozen = False
        self.register_buffer('mean', torch.zeros(num_features))
        self.register_buffer('var', torch.ones(num_features))
        self.register_buffer('count', torch.zeros((), dtype=torch.long))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Return clip((x - mean) / sqrt(var + eps), -clip, clip)."""
        # z = (x - mu) / sqrt(sigma^2 + eps)
        z = (x - self.mean) / torch.sqrt(self.var + self.eps)
        return torch.clamp(z, -self.clip, self.clip)

    def freeze(self) -> None:
        """Stop update() from changing the statistics (e.g. for evaluation or fine-tuning)."""
        self.frozen = True

    def unfreeze(self) -> None:
        """Let update() change the statistics again."""
        self.frozen = False

    @torch.no_grad()
    def update(self, x: torch.Tensor) -> None:
        """Merge the batch x (..., num_features) into the statistics; no-op if eval or frozen.

        Under torchrun (sim2real.rl.distributed) the batch is every rank's batch pooled, so
        the replicas' statistics stay equal to those of one normalizer fed all the data.
        """
        if not self.training or self.frozen:
            return
        batch = x.detach().reshape(-1, self.num_features)
        n_b, mean_b, var_b = pooled_moments(batch)
        if n_b == 0:
            return
        n_a = int(self.count.item())
        mean_a = self.mean.to(torch.float64)
        var_a = self.var.to(torch.float64)
        n = n_a + n_b
        # delta = mu_b - mu_a; mu = mu_a + delta * n_b / n
        delta = mean_b - mean_a
        mean = mean_a + delta * (n_b / n)
        # M2 = M2_a + M2_b + delta^2 * n_a * n_b / n, with M2 = n * sigma^2 (population variance)
        m2 = var_a * n_a + var_b * n_b + delta.pow(2) * (n_a * n_b / n)
        self.mean.copy_(mean.to(self.mean.dtype))
        self.var.copy_((m2 / n).to(self.var.dtype))
        self.count.fill_(n)

    def extra_repr(self) -> str:
        """Describe the size, eps and clip in the module's repr."""
        return f'{self.num_features}, eps={self.eps}, clip={self.clip}'
