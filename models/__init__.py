"""The pteron model zoo: plain torch modules with seeded weights and example inputs.

Imports torch only (no torchvision, no pteron), so the project's venv and the ExecuTorch peer
venv can both build the same models. opt-125m also needs `transformers`, imported on use.

    from models import build, NAMES
    model, example_inputs = build("resnet-8")   # model in eval mode, inputs a tuple
"""

from collections.abc import Callable
from dataclasses import dataclass

import torch

from . import (digits_cnn, efficientnet, encoders, llm, mlperf_tiny, mobilenet_v2, mobilenet_v3, opt, resnet,
               tiny_stories, transformer_block, vit)
from .common import seeded


@dataclass(frozen=True)
class ZooEntry:
    name: str
    builder: Callable[[], tuple[torch.nn.Module, tuple]]
    summary: str
    input_shapes: tuple[tuple[int, ...], ...]
    output_shape: tuple[int, ...]
    seed: int = 0
    # A KV-cache decoder's own export (transformers' convert_and_export_with_cache, T dynamic)
    # instead of torch.export(model, inputs); None for the plain models.
    export: Callable[[torch.nn.Module, tuple], torch.export.ExportedProgram] | None = None
    # Too big to build or export in `make test` (llama-1b: 1.2 B parameters, 5 GB in float32).
    slow: bool = False

    @property
    def is_llm(self) -> bool:
        return self.export is not None


ENTRIES = [
    ZooEntry("opt-125m", opt.opt_125m,
             "OPT-125M causal LM (transformers, random weights), seq 128, last-token logits",
             ((1, 128), (1, 128)), (1, 50272)),
    ZooEntry("mobilenet-v2", mobilenet_v2.mobilenet_v2,
             "MobileNetV2 1.0 (torchvision layout, random weights), ImageNet 224",
             ((1, 3, 224, 224),), (1, 1000)),
    ZooEntry("resnet-18", resnet.resnet_18,
             "ResNet-18 (torchvision layout, random weights), ImageNet 224",
             ((1, 3, 224, 224),), (1, 1000)),
    ZooEntry("ds-cnn", mlperf_tiny.ds_cnn,
             "MLPerf Tiny keyword spotting DS-CNN, 49x10 MFCC -> 12 classes",
             ((1, 1, 49, 10),), (1, 12)),
    ZooEntry("mobilenet-v1-025", mlperf_tiny.mobilenet_v1_025,
             "MLPerf Tiny visual wake words MobileNetV1 0.25, 96x96 RGB -> 2 classes",
             ((1, 3, 96, 96),), (1, 2)),
    ZooEntry("resnet-8", mlperf_tiny.resnet_8,
             "MLPerf Tiny image classification ResNet-8, CIFAR-10 32x32 -> 10 classes",
             ((1, 3, 32, 32),), (1, 10)),
    ZooEntry("fc-autoencoder", mlperf_tiny.fc_autoencoder,
             "MLPerf Tiny anomaly detection FC autoencoder, 640 -> 640",
             ((1, 640),), (1, 640)),
    ZooEntry("digits-cnn", digits_cnn.digits_cnn,
             "small CNN trained on scikit-learn digits 8x8 -> 10 classes (committed weights)",
             ((1, 1, 8, 8),), (1, 10)),
    ZooEntry("transformer-block", transformer_block.transformer_block,
             "2-layer pre-norm transformer encoder, causal mask, GELU FFN, 16x64",
             ((1, 16, 64),), (1, 16, 64)),
    # The CPU benchmark's other model families (bench/cpu_path.py's "cpu" suite).
    ZooEntry("efficientnet-b0", efficientnet.efficientnet_b0,
             "EfficientNet-B0 (torchvision layout: MBConv, SiLU, squeeze-excite, random weights), ImageNet 224",
             ((1, 3, 224, 224),), (1, 1000)),
    ZooEntry("mobilenet-v3-large", mobilenet_v3.mobilenet_v3_large,
             "MobileNetV3-Large (torchvision layout: hardswish, hardsigmoid-gated squeeze-excite, random weights), "
             "ImageNet 224",
             ((1, 3, 224, 224),), (1, 1000)),
    ZooEntry("vit-b16-6l", vit.vit_b16_6l,
             "ViT-B/16-style encoder, 6 of its 12 layers (random weights), 224x224 -> 1000 classes",
             ((1, 3, 224, 224),), (1, 1000)),
    ZooEntry("bert-base-6l", encoders.bert_base_6l,
             "BERT-base-style encoder (transformers, 6 layers, random weights), seq 128, last hidden state",
             ((1, 128), (1, 128)), (1, 128, 768)),
    ZooEntry("llama-prefill-6l", encoders.llama_prefill_6l,
             "Llama-style decoder (GQA, RoPE, RMSNorm, SwiGLU), 6 layers, 512 wide, 128-token prefill, logits",
             ((1, 128),), (1, 128, 32000)),
    # KV-cache decoders for `pteron generate`: forward(input_ids [1, T], cache_position [T]) ->
    # logits [1, T, vocab], T in [1, 32] (models/llm.py); the shapes are the example's T = 2.
    ZooEntry("llama-110m", llm.llama_110m,
             "Llama-3-style decoder (GQA, RoPE, RMSNorm, SwiGLU), 107M parameters, random weights, KV cache 256",
             ((1, 2), (2,)), (1, 2, 32000), export=llm.export_hf),
    ZooEntry("llama-1b", llm.llama_1b,
             "Llama-3.2-1B's config, random weights, KV cache 512 (1.24 B parameters)",
             ((1, 2), (2,)), (1, 2, 128256), export=llm.export_hf, slow=True),
    ZooEntry("opt-125m-kv", llm.opt_125m_kv,
             "OPT-125M (opt-125m's config, random weights) with a static KV cache 256",
             ((1, 2), (2,)), (1, 2, 50272), export=llm.export_module),
    ZooEntry("tiny-stories", tiny_stories.tiny_stories,
             "small Llama trained here on the Python standard library's docstrings, with its tokenizer",
             ((1, 2), (2,)), (1, 2, tiny_stories.VOCAB), export=llm.export_hf),
]

BY_NAME = {e.name: e for e in ENTRIES}
NAMES = [e.name for e in ENTRIES]


def build(name: str) -> tuple[torch.nn.Module, tuple]:
    """(model in eval mode, example inputs tuple) for a zoo name; the same every call."""
    try:
        entry = BY_NAME[name]
    except KeyError:
        raise KeyError(f"unknown zoo model {name!r}; known: {', '.join(NAMES)}") from None
    with seeded(entry.seed):
        model, inputs = entry.builder()
    return model.eval(), inputs
