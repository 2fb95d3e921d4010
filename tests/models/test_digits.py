"""digits-cnn's committed weights reach the accuracy recorded by models/train_digits.py on the
committed held-out split (360 images), and the zoo's example input is classified correctly."""

import torch
from pteron import zoo

from models import digits_cnn


def test_committed_weights_reproduce_recorded_test_accuracy():
    model, _ = zoo.get("digits-cnn")
    images, labels = digits_cnn.load_test_split()
    assert images.shape == (360, 1, 8, 8) and labels.shape == (360,)
    with torch.no_grad():
        accuracy = (model(images).argmax(1) == labels).float().mean().item()
    assert abs(accuracy - digits_cnn.recorded_accuracy()) < 1e-6
    assert accuracy >= 0.97


def test_example_input_is_first_test_image_and_is_recognised():
    model, (x,) = zoo.get("digits-cnn")
    images, labels = digits_cnn.load_test_split()
    assert torch.equal(x, images[:1])
    assert model(x).argmax().item() == labels[0].item()
