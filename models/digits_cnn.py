"""digits-cnn: a small CNN for scikit-learn's 8x8 handwritten digits, trained by
models/train_digits.py (seeded, seconds on a CPU). The trained weights and the held-out test
split are committed in models/weights/, so loading needs torch only.

Input 1x1x8x8 float32, pixel intensity / 16 (0..1); output 1x10 logits.
"""

import json
from pathlib import Path

import torch
from torch import nn

WEIGHTS_DIR = Path(__file__).parent / "weights"
WEIGHTS = WEIGHTS_DIR / "digits_cnn.pt"
TEST_SPLIT = WEIGHTS_DIR / "digits_test.pt"
RECORD = WEIGHTS_DIR / "digits_cnn.json"


class DigitsCnn(nn.Module):
    """conv3x3(16)+ReLU, maxpool 2, conv3x3(32)+ReLU, maxpool 2, linear 128->10."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.fc = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.features(x), 1))


def load_test_split() -> tuple[torch.Tensor, torch.Tensor]:
    """The held-out digits as (images Nx1x8x8 float32 in 0..1, labels N int64)."""
    split = torch.load(TEST_SPLIT, weights_only=True)
    images = split["images"].to(torch.float32).unsqueeze(1) / 16.0
    return images, split["labels"].to(torch.int64)


def recorded_accuracy() -> float:
    """Test-split accuracy written by train_digits.py when it produced the committed weights."""
    return json.loads(RECORD.read_text())["test_accuracy"]


def digits_cnn():
    model = DigitsCnn()
    model.load_state_dict(torch.load(WEIGHTS, weights_only=True))
    images, _ = load_test_split()
    return model.eval(), (images[:1].clone(),)
