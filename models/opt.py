"""OPT-125M: transformers' OPTForCausalLM(OPTConfig()) — facebook/opt-125m's architecture (12
layers, d=768, 12 heads, FFN 3072, vocab 50272) — with random seeded weights, wrapped for the
reference workload: batch 1, sequence 128, input_ids and attention_mask [1,128] int64, output the
last token's logits [1,50272] float32. Needs the `transformers` package (imported on use only)."""

import torch
from torch import nn

SEQ_LEN = 128
VOCAB = 50272


class LastTokenLogits(nn.Module):
    """Runs the causal LM without a KV cache and keeps the logits of the last position only."""

    def __init__(self, lm: nn.Module):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        out = self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False)
        return out.logits[:, -1, :]


def opt_125m():
    from transformers import OPTConfig, OPTForCausalLM

    # The plain-PyTorch attention path: a graph of bmm/softmax ops, no fused SDPA kernel.
    config = OPTConfig(attn_implementation="eager")
    lm = OPTForCausalLM(config)
    input_ids = torch.randint(0, config.vocab_size, (1, SEQ_LEN), dtype=torch.long)
    attention_mask = torch.ones(1, SEQ_LEN, dtype=torch.long)
    return LastTokenLogits(lm).eval(), (input_ids, attention_mask)
