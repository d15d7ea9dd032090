#!/usr/bin/env python3
"""Compares an example's output with its golden data: python3 verify_result.py OUTPUT GOLDEN [DTYPE]
(DTYPE float16 by default); tolerance: relative 1e-3 for float16, 1e-4 for float32, absolute 1e-3."""
import sys
import numpy as np


def main():
    out_file, golden_file = sys.argv[1], sys.argv[2]
    dtype = np.dtype(sys.argv[3] if len(sys.argv) > 3 else "float16")
    rtol = 1e-3 if dtype == np.float16 else 1e-4
    out = np.fromfile(out_file, dtype=dtype).astype(np.float64)
    golden = np.fromfile(golden_file, dtype=dtype).astype(np.float64)
    if out.shape != golden.shape:
        print(f"test failed: {out.size} output values, {golden.size} golden")
        return 1
    bad = np.where(~np.isclose(out, golden, rtol=rtol, atol=1e-3, equal_nan=True))[0]
    for i in bad[:10]:
        print(f"index {i}: expected {golden[i]:.6f}, got {out[i]:.6f}")
    if bad.size:
        print(f"test failed: {bad.size} of {out.size} values differ")
        return 1
    print("test pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
