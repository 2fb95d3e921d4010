"""Transformer models from `transformers` configurations with random seeded weights (imported
on use only), for the CPU benchmark's model families:

- bert-base-6l: BertModel with bert-base-uncased's width (768, 12 heads, FFN 3072 GELU,
  post-norm, vocab 30522) and 6 of its 12 layers, layer norms jittered; input_ids and attention_mask [1, 128] int64,
  output the last hidden state [1, 128, 768].
- llama-prefill-6l: LlamaForCausalLM, 6 layers, width 512, 8 query and 2 key/value heads (GQA),
  SwiGLU FFN 1408, RMSNorm, RoPE, vocab 32000, no KV cache: a 128-token prefill, input_ids
  [1, 128] int64, output the logits of every position [1, 128, 32000].
"""

import torch
from torch import nn

SEQ_LEN = 128


class LastHiddenState(nn.Module):
    def __init__(self, encoder: nn.Module):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class PrefillLogits(nn.Module):
    def __init__(self, lm: nn.Module):
        super().__init__()
        self.lm = lm

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.lm(input_ids=input_ids, use_cache=False).logits


def bert_base_6l():
    from transformers import BertConfig, BertModel

    config = BertConfig(num_hidden_layers=6, attn_implementation="eager")
    model = LastHiddenState(BertModel(config, add_pooling_layer=False))
    with torch.no_grad():  # LayerNorms are fresh identities (scale 1, shift 0): not here
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    input_ids = torch.randint(0, config.vocab_size, (1, SEQ_LEN), dtype=torch.long)
    return model.eval(), (input_ids, torch.ones(1, SEQ_LEN, dtype=torch.long))


def llama_prefill_6l():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=512, intermediate_size=1408, num_hidden_layers=6,
                         num_attention_heads=8, num_key_value_heads=2, vocab_size=32000,
                         max_position_embeddings=2048, attn_implementation="eager")
    lm = LlamaForCausalLM(config)
    with torch.no_grad():  # RMSNorm weights are ones when fresh: not identities here
        for m in lm.modules():
            if type(m).__name__ == "LlamaRMSNorm":
                m.weight.uniform_(0.5, 1.5)
    input_ids = torch.randint(0, config.vocab_size, (1, SEQ_LEN), dtype=torch.long)
    return PrefillLogits(lm).eval(), (input_ids,)
