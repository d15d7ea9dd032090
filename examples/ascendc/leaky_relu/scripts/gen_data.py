#!/usr/bin/env python3
"""Input and golden output of the leaky relu example: x ~ U(-10, 10) fp16, y = x if x >= 0 else 0.1 x
(the product rounded once to fp16, as the vector unit does)."""
import os
import numpy as np


def main():
    os.makedirs("input", exist_ok=True)
    os.makedirs("output", exist_ok=True)
    rng = np.random.default_rng(7)
    x = rng.uniform(-10, 10, [16, 4096]).astype(np.float16)
    alpha = np.float32(np.float16(0.1))
    xf = x.astype(np.float32)
    golden = np.where(xf >= 0, xf, xf * alpha).astype(np.float16)
    x.tofile("./input/input_x.bin")
    golden.tofile("./output/golden.bin")


if __name__ == "__main__":
    main()
