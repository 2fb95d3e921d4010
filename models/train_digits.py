"""Trains digits-cnn on scikit-learn's 8x8 digits and writes models/weights/:
digits_cnn.pt (state_dict), digits_test.pt (the held-out split, uint8 pixels 0..16 and labels)
and digits_cnn.json (accuracy and settings). Seeded and single-threaded, so a rerun reproduces
the committed files. Needs scikit-learn (for the bundled data set; no download):

    pip install scikit-learn==1.9.1
    python models/train_digits.py
"""

import json
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from models.digits_cnn import RECORD, TEST_SPLIT, WEIGHTS, DigitsCnn

SEED = 0
EPOCHS = 40
BATCH = 64
LR = 3e-3


def main() -> None:
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(SEED)

    digits = load_digits()
    x_train, x_test, y_train, y_test = train_test_split(
        digits.images, digits.target, test_size=0.2, random_state=SEED, stratify=digits.target)

    def as_input(images):
        return torch.tensor(images, dtype=torch.float32).unsqueeze(1) / 16.0

    xt, yt = as_input(x_train), torch.tensor(y_train, dtype=torch.int64)
    xv, yv = as_input(x_test), torch.tensor(y_test, dtype=torch.int64)

    model = DigitsCnn()
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    start = time.perf_counter()
    for epoch in range(EPOCHS):
        model.train()
        order = torch.randperm(len(xt))
        for i in range(0, len(xt), BATCH):
            idx = order[i:i + BATCH]
            opt.zero_grad()
            loss = loss_fn(model(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            acc = (model(xv).argmax(1) == yv).float().mean().item()
        print(f"epoch {epoch + 1:2d}  loss {loss.item():.4f}  test accuracy {acc:.4f}", flush=True)
    seconds = time.perf_counter() - start

    WEIGHTS.parent.mkdir(exist_ok=True)
    torch.save(model.state_dict(), WEIGHTS)
    torch.save({"images": torch.tensor(x_test, dtype=torch.uint8),
                "labels": torch.tensor(y_test, dtype=torch.uint8)}, TEST_SPLIT)
    record = {"test_accuracy": round(acc, 6), "test_samples": len(yv), "train_samples": len(yt),
              "epochs": EPOCHS, "batch": BATCH, "lr": LR, "seed": SEED,
              "train_seconds": round(seconds, 1), "torch": torch.__version__}
    RECORD.write_text(json.dumps(record, indent=2) + "\n")
    print(json.dumps(record))


if __name__ == "__main__":
    main()
