"""What the Vulkan model tests share: lavapipe as the device, and the small models they check
structure and fp16 numerics on (resnet-18 / mobilenet-v2 at 64x64, a 2-layer OPT).

Import this before `pteron`: the Vulkan loader reads VK_ICD_FILENAMES when pteron creates its
device context.
"""

import os

import torch

LAVAPIPE = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json"
if os.path.exists(LAVAPIPE):
    os.environ.setdefault("VK_ICD_FILENAMES", LAVAPIPE)

from pteron import zoo  # noqa: E402


def opt_2_layers():
    """transformers' OPTForCausalLM with a 2-layer config (d=64, 4 heads, vocab 1000), last-token
    logits, and its inputs (sequence 16)."""
    from transformers import OPTConfig, OPTForCausalLM

    from models.opt import LastTokenLogits

    torch.manual_seed(0)
    config = OPTConfig(num_hidden_layers=2, hidden_size=64, ffn_dim=256, num_attention_heads=4,
                       word_embed_proj_dim=64, vocab_size=1000, max_position_embeddings=64,
                       attn_implementation="eager")
    inputs = (torch.randint(0, 1000, (1, 16)), torch.ones(1, 16, dtype=torch.long))
    return LastTokenLogits(OPTForCausalLM(config)).eval(), inputs


def small_model(name):
    """`opt-2-layers`, or a zoo vision model with a seeded 1x3x64x64 input."""
    if name == "opt-2-layers":
        return opt_2_layers()
    model, _ = zoo.get(name)
    return model, (torch.randn(1, 3, 64, 64, generator=torch.Generator().manual_seed(0)),)
