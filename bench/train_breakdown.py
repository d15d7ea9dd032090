#!/usr/bin/python3
"""Per-op-type breakdown of a ResNet-50 training step (zoo:resnet50, torchvision v1.5: the stride
on the 3x3) from the task traces of `sfumato train-step ... --trace task --out DIR`, one DIR per
batch size. Chip 0's stream-0 kernels are grouped by phase (forward, backward, update) and op type
from their names; each group's time is fitted as fixed + per-image (least squares over the runs)
and extrapolated to --batch. Convolutions are rated in TFLOPS (2 x MACs of the layer shapes)
against the cube peak, element-wise and BatchNorm groups in GB/s of the bytes they must move at
least (BatchNorm forward 3 x |Y|: statistics and apply; backward 5 x |Y|; ReLU 2 x, its gradient
3 x) against HBM's peak.

  bench/train_breakdown.py DIR:BATCH [DIR:BATCH ...] [--batch 256] [--peak-tflops 262.144]
                           [--hbm-gbps 1228.8] [--top 10]

The peaks default to the 910-like preset's (docs/HARDWARE.md: 32 cores x 4096 MACs x 1 GHz;
4 HBM2 stacks at 2.4 Gb/s/pin)."""
import argparse
import collections
import json
import re
import sys


def resnet50_convs():
    convs = {'conv1': (3, 64, 7, 2, 112)}  # name -> (Cin, Cout, k, stride, Hout)
    cin = 64
    for layer, blocks, w, h in ((1, 3, 64, 56), (2, 4, 128, 28), (3, 6, 256, 14), (4, 3, 512, 7)):
        for b in range(blocks):
            s = 2 if b == 0 and layer > 1 else 1
            convs[f'layer{layer}.{b}.conv1'] = (cin, w, 1, 1, h * s)
            convs[f'layer{layer}.{b}.conv2'] = (w, w, 3, s, h)
            convs[f'layer{layer}.{b}.conv3'] = (w, 4 * w, 1, 1, h)
            if b == 0:
                convs[f'layer{layer}.{b}.downsample'] = (cin, 4 * w, 1, s, h)
            cin = 4 * w
    return convs


CONV = re.compile(r'^(conv1|layer\d\.\d\.(?:conv\d|downsample))(_bn)?(.*)$')


def group(name):
    if '@low/sgd' in name:
        return 'update', 'SGD, one kernel per weight'
    if re.match(r'^bucket\d+/sgd$', name):
        return 'update', 'SGD, one multi-tensor launch per bucket'
    m = CONV.match(name)
    if m:
        bn, rest = m.group(2), m.group(3)
        if bn:
            return ('forward', 'BatchNorm training') if rest.startswith('#') else ('backward', 'BatchNorm backward')
        if rest == '#0':
            return 'forward', 'Conv weight OIHW -> C1HWC0'
        if rest in ('#1', ''):
            return 'forward', 'Conv (cube)'
        if rest.startswith('/dX'):
            return 'backward', 'Conv data gradient'
        if rest.startswith('/dW'):
            return 'backward', 'Conv weight gradient'
        if rest.startswith('/dZ'):
            return 'backward', 'TransData (dZ, MaxPool operands)'
        if rest == '/sum':
            return 'backward', 'gradient sum (Add)'
    if name.startswith('Relu'):
        return ('backward', 'ReluGrad') if name.endswith('/grad') else ('forward', 'Relu')
    if name.endswith('.add'):
        return 'forward', 'residual Add'
    if name.startswith('maxpool'):
        if 'to_' in name:
            return 'backward', 'TransData (dZ, MaxPool operands)'
        return ('backward', 'MaxPoolGrad') if name.endswith('grad') else ('forward', 'MaxPool')
    if name.startswith('input_transdata'):
        return 'forward', 'TransData (image)'
    return ('backward' if '/' in name else 'forward'), 'other (fc, pooling, loss)'


def kernels(trace_dir):
    try:
        with open(f'{trace_dir}/trace.json') as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        print(f'{trace_dir}/trace.json: {e}', file=sys.stderr)
        sys.exit(2)
    ev = d['traceEvents'] if isinstance(d, dict) else d
    names = {e['tid']: e['args']['name'] for e in ev
             if e.get('ph') == 'M' and e.get('name') == 'thread_name' and e.get('pid') == 2}
    tid = next((t for t, n in names.items() if n == 'context 0 stream 0'), None)
    if tid is None:
        print(f'{trace_dir}/trace.json: no chip0 stream 0 (run train-step with --trace task)', file=sys.stderr)
        sys.exit(2)
    return [(e['name'], e['dur']) for e in ev
            if e.get('ph') == 'X' and e.get('pid') == 2 and e.get('tid') == tid and 'cycles' in e.get('args', {})]


def work(n):
    """(MACs, minimum bytes) per group at batch n."""
    convs = resnet50_convs()
    macs = lambda c: n * convs[c][4] ** 2 * convs[c][1] * convs[c][0] * convs[c][2] ** 2
    ybytes = lambda c: n * convs[c][4] ** 2 * convs[c][1] * 2
    total = sum(macs(c) for c in convs)
    relu = sum(ybytes(c) for c in convs if not c.endswith('downsample'))  # conv1/2 outputs, block outputs
    y = sum(ybytes(c) for c in convs)
    return {
        'Conv (cube)': (total, 0), 'Conv data gradient': (total - macs('conv1'), 0),
        'Conv weight gradient': (total, 0), 'BatchNorm training': (0, 3 * y),
        'BatchNorm backward': (0, 5 * y), 'Relu': (0, 2 * relu), 'ReluGrad': (0, 3 * relu),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('runs', nargs='+', help='DIR:BATCH')
    ap.add_argument('--batch', type=int, default=256)
    ap.add_argument('--peak-tflops', type=float, default=262.144)
    ap.add_argument('--hbm-gbps', type=float, default=1228.8)
    ap.add_argument('--top', type=int, default=10)
    a = ap.parse_args()
    runs = []
    for r in a.runs:
        d, _, b = r.rpartition(':')
        if not d or not b.isdigit() or int(b) < 1:
            ap.error(f'bad run "{r}": expected DIR:BATCH')
        runs.append((d, int(b)))
    per = []  # (batch, {group: [us, count]}, kernels)
    for d, b in runs:
        ks = kernels(d)
        g = collections.defaultdict(lambda: [0.0, 0])
        for name, us in ks:
            t = g[group(name)]
            t[0] += us
            t[1] += 1
        per.append((b, g, ks))
        print(f'{d}: batch {b}, {len(ks)} kernels, {sum(us for _, us in ks):.1f} us of kernels on stream 0')
    keys = sorted({k for _, g, _ in per for k in g},
                  key=lambda k: (['forward', 'backward', 'update'].index(k[0]), k[1]))
    bs = [b for b, _, _ in per]
    fit = {}
    for k in keys:
        ts = [g[k][0] if k in g else 0.0 for _, g, _ in per]
        if len(set(bs)) > 1:
            mb, mt = sum(bs) / len(bs), sum(ts) / len(ts)
            slope = sum((b - mb) * (t - mt) for b, t in zip(bs, ts)) / sum((b - mb) ** 2 for b in bs)
        else:
            slope = ts[0] / bs[0]
        fixed = ts[-1] - slope * bs[-1]
        fit[k] = (fixed, slope, fixed + slope * a.batch)
    total = sum(v[2] for v in fit.values())
    w = work(a.batch)
    print(f'\nextrapolated to batch {a.batch}: {total:.0f} us of kernels '
          f'(fixed + per-image fit over batches {", ".join(map(str, bs))})')
    cols = ' | '.join(f'b{b} us' for b in bs)
    print(f'| phase | op type | kernels | {cols} | b{a.batch} us (fit) | share | fixed us | achieved | of peak |')
    print('|---|---|---|' + '---|' * len(bs) + '---|---|---|---|---|')
    for k in sorted(keys, key=lambda k: (['forward', 'backward', 'update'].index(k[0]), -fit[k][2])):
        fixed, _, t = fit[k]
        macs, byts = w.get(k[1], (0, 0))
        ach = roof = ''
        if macs and t > 0:
            ach, roof = f'{2 * macs / t / 1e6:.1f} TFLOPS', f'{2 * macs / t / 1e6 / a.peak_tflops * 100:.0f} % cube'
        elif byts and t > 0:
            ach, roof = f'{byts / t / 1e3:.0f} GB/s', f'{byts / t / 1e3 / a.hbm_gbps * 100:.0f} % HBM'
        cnt = per[-1][1][k][1] if k in per[-1][1] else 0
        times = ' | '.join(f'{(g[k][0] if k in g else 0):.0f}' for _, g, _ in per)
        print(f'| {k[0]} | {k[1]} | {cnt} | {times} | {t:.0f} | {t / total * 100:.1f} % | {fixed:.0f} | {ach} | {roof} |')
    for ph in ('forward', 'backward', 'update'):
        print(f'{ph}: {sum(v[2] for k, v in fit.items() if k[0] == ph):.0f} us')
    b, _, ks = per[-1]
    print(f'\ntop {a.top} kernels at batch {b} (by time):')
    for name, us in sorted(ks, key=lambda x: -x[1])[:a.top]:
        print(f'  {us:9.1f} us  {name}  ({" / ".join(group(name))})')
    print(f'shortest kernel {min(us for _, us in ks):.2f} us; {len(ks)} kernels x it = '
          f'{min(us for _, us in ks) * len(ks):.0f} us per step')


if __name__ == '__main__':
    main()
