#!/usr/bin/python3
"""Input and golden data for catlass examples whose own gen_data.py cannot run on the measuring machine.

29_a2_fp8_e4m3_matmul's gen_data.py casts to torch.float8_e4m3fn, which torch has only from 2.1 (the
machine's is Debian's 1.13 and no newer one is reachable). This generator is sfumato's own, written from
what that script does (its code is not copied): A (m x k) and B (k x n) of standard-normal float32 values
rounded to OCP FP8 E4M3 (e4m3fn: bias 7, no infinities, S.1111.111 the NaN; round to nearest, ties to an
even code, as torch converts: a magnitude at or past 480, the first value past the largest finite 448 on
the grid, or a NaN, becomes the NaN), stored as bytes in input/a_8.bin and input/b_8.bin (transposed when
trans_a / trans_b is 1, as the script stores them), and the golden C = A x B of the fp8 values widened to
fp16 (exact) and multiplied in float32, in output/expected_data.bin. The random numbers are numpy's, not
torch's, so the data differ from what the script would make; the example's binary and its comparison
(golden::CompareData) are unmodified.

  catlass_data.py 29_a2_fp8_e4m3_matmul m n k trans_a trans_b   (writes ./input and ./output)
  catlass_data.py --check-e4m3                                  (the codec on all 256 codes)
"""
import os
import sys

import numpy as np

SEED = 29


def e4m3_values():
    """The value of each of the 256 E4M3 codes (NaN for 0x7f and 0xff)."""
    vals = np.empty(256, dtype=np.float64)
    for code in range(256):
        sign = -1.0 if code & 0x80 else 1.0
        exp, man = (code >> 3) & 0xF, code & 0x7
        if exp == 15 and man == 7:
            vals[code] = np.nan
        elif exp == 0:
            vals[code] = sign * man * 2.0 ** -9
        else:
            vals[code] = sign * (1.0 + man / 8.0) * 2.0 ** (exp - 7)
    return vals


def to_e4m3(x):
    """float32 array -> uint8 E4M3 codes: round to nearest, ties to the even code; |x| >= 480 or NaN -> NaN."""
    x = np.asarray(x, dtype=np.float32).astype(np.float64)
    # Codes 0..126 are the non-negative finite values in increasing order; 480 (code 0x7f, odd) closes the
    # grid so that values past 464 round to the NaN as torch's conversion does.
    grid = np.append(e4m3_values()[:127], 480.0)
    ax = np.abs(x)
    hi = np.clip(np.searchsorted(grid, ax, side="left"), 1, 127)
    lo = hi - 1
    dlo, dhi = ax - grid[lo], grid[hi] - ax
    pick = np.where(dlo < dhi, lo, np.where(dhi < dlo, hi, np.where(lo % 2 == 0, lo, hi)))
    pick = np.where(ax >= 480.0, 0x7F, pick)
    pick = np.where(np.isnan(ax), 0x7F, pick)
    sign = np.where(np.signbit(x), 0x80, 0)
    return (pick | sign).astype(np.uint8)


def check_e4m3():
    """Every code decodes and re-encodes to itself (NaN to 0x7f/0xff), the midpoints between neighbours round
    to the even code, and values past the grid saturate to the NaN; against ml_dtypes where it is installed."""
    vals = e4m3_values()
    finite = ~np.isnan(vals)
    codes = np.arange(256, dtype=np.uint8)
    assert (to_e4m3(vals[finite].astype(np.float32)) == codes[finite]).all()
    assert set(to_e4m3(np.array([np.nan, -np.nan], dtype=np.float32))) <= {0x7F, 0xFF}
    pos = vals[:127]
    mids = ((pos[:-1] + pos[1:]) / 2).astype(np.float32)
    got = to_e4m3(mids)
    want = np.where(np.arange(126) % 2 == 0, np.arange(126), np.arange(1, 127))
    assert (got == want).all()
    assert (to_e4m3(np.array([464.0, 465.0, 480.0, 1e30], dtype=np.float32)) == [0x7E, 0x7F, 0x7F, 0x7F]).all()
    try:
        import ml_dtypes
    except ImportError:
        print("e4m3 codec: 256 codes, 126 midpoints, saturation: ok (ml_dtypes not installed)")
        return 0
    rng = np.random.default_rng(0)
    xs = np.concatenate([vals[finite], mids, rng.standard_normal(100000) * 8]).astype(np.float32)
    xs = xs[np.abs(xs) < 464]  # ml_dtypes' overflow rule differs from torch's; the data never reach it
    ref = xs.astype(ml_dtypes.float8_e4m3fn).view(np.uint8)
    assert (to_e4m3(xs) == ref).all(), "differs from ml_dtypes"
    assert (vals[finite] == np.arange(256, dtype=np.uint8)[finite].view(ml_dtypes.float8_e4m3fn).astype(
        np.float64)).all()
    print("e4m3 codec: 256 codes, 126 midpoints, saturation: ok; %d values as ml_dtypes %s" %
          (len(xs), ml_dtypes.__version__))
    return 0


def fp8_e4m3_matmul(m, n, k, trans_a, trans_b):
    rng = np.random.default_rng(SEED)
    a = to_e4m3(rng.standard_normal((m, k), dtype=np.float32))
    b = to_e4m3(rng.standard_normal((k, n), dtype=np.float32))
    os.makedirs("input", exist_ok=True)
    os.makedirs("output", exist_ok=True)
    (a.T if trans_a else a).copy().tofile("input/a_8.bin")
    (b.T if trans_b else b).copy().tofile("input/b_8.bin")
    vals = e4m3_values()
    a16, b16 = vals[a].astype(np.float16), vals[b].astype(np.float16)
    c = a16.astype(np.float32) @ b16.astype(np.float32)
    c.astype(np.float32).tofile("output/expected_data.bin")


GENERATORS = {"29_a2_fp8_e4m3_matmul": (fp8_e4m3_matmul, 5)}


def main(argv):
    if argv[1:] == ["--check-e4m3"]:
        return check_e4m3()
    if len(argv) < 2 or argv[1] not in GENERATORS:
        print("catlass_data: error: name one of %s (or --check-e4m3)" % ", ".join(GENERATORS), file=sys.stderr)
        return 2
    fn, nargs = GENERATORS[argv[1]]
    args = argv[2:]
    if len(args) != nargs or not all(a.isdigit() for a in args):
        print("catlass_data: error: %s takes %d non-negative integers, got %r" % (argv[1], nargs, args),
              file=sys.stderr)
        return 2
    fn(*[int(a) for a in args])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
