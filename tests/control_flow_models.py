"""Models with data-dependent control flow that several test folders compile: a torch.cond whose
true branch holds a linear, a while_loop whose trip count the values decide, and a scan (a tanh
recurrence with weights). Weights are seeded."""

import torch
from torch._higher_order_ops import while_loop
from torch._higher_order_ops.scan import scan


class Gate(torch.nn.Module):
    """A linear and ReLU on one side (weights lifted into the branch), arithmetic on the other."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x, y):
        out = torch.cond(x.sum() > 0, lambda x, y: (self.lin(x).relu() + y,), lambda x, y: (x * 2 - y,), (x, y))
        return out[0] + 1


class Doubling(torch.nn.Module):
    """Doubles x until its sum passes a limit: the trip count depends on the values (0 when it
    starts past it, never ending on zeros); returns the count too."""

    def forward(self, x):
        n = torch.zeros((), dtype=torch.int64)
        n, x = while_loop(lambda n, x: x.abs().sum() < 100.0, lambda n, x: (n + 1, x * 2), (n, x))
        return n, x


class Elman(torch.nn.Module):
    """A tanh recurrence over the rows of xs with weights in the step (constants of the
    subgraph); returns the last state and every step's output."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.cell = torch.nn.Linear(8, 8)
        self.inp = torch.nn.Linear(3, 8)

    def forward(self, xs, h0):
        def step(h, x):
            h = torch.tanh(self.cell(h) + self.inp(x))
            return h, h.sum(-1)

        return scan(step, h0, xs)
