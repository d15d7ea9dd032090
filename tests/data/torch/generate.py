#!/usr/bin/python3
# Writes the PyTorch-exported test networks of tests/data/torch: small versions of the networks
# users bring (a ResNet with basic blocks, MobileNetV2-style inverted residuals, SqueezeNet fire
# modules, transformer encoder/decoder blocks, MLPs, and a net of the shape-arithmetic chains
# dynamic exports produce), exported with torch.onnx.export as users do it (opset 13,
# do_constant_folding=True; one at opset 17 for LayerNormalization), with an input and the
# output PyTorch computed for it. Each case is a directory in the ONNX backend-test layout:
# NAME/model.onnx, NAME/test_data_set_0/input_0.pb, output_0.pb (TensorProto), so both
# `sfumato onnx-test DIR` and `sfumato run NAME/model.onnx --input x=.../input_0.pb --expect
# ...output_0.pb` read them. The model definitions are written here (torchvision is not
# needed). Run with Debian's python3-torch and python3-onnx:
#     /usr/bin/python3 tests/data/torch/generate.py [OUTDIR]
# Weights and inputs come from fixed seeds, so the files only change when this script does
# (byte-identical up to the exporter's version string).
import math
import os
import shutil
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import numpy_helper

OUT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def bn(c):
    b = nn.BatchNorm2d(c)
    # Non-trivial running statistics, as a trained network has.
    with torch.no_grad():
        b.running_mean.uniform_(-0.2, 0.2)
        b.running_var.uniform_(0.5, 1.5)
        b.weight.uniform_(0.5, 1.5)
        b.bias.uniform_(-0.2, 0.2)
    return b


# ---- ResNet: basic blocks, a strided block with a 1x1 downsample, adaptive average pool ----
class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = bn(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = bn(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), bn(cout))

    def forward(self, x):
        idt = x if self.down is None else self.down(x)
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + idt)


class ResNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 7, 2, 3, bias=False), bn(16), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(3, 2, 1))
        self.layer1 = BasicBlock(16, 16, 1)
        self.layer2 = BasicBlock(16, 32, 2)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.layer2(self.layer1(self.stem(x)))
        return self.fc(torch.flatten(self.pool(x), 1))


class ResNetAvgPool(ResNet):
    # An adaptive pool to 2x2 that divides the map: exported as AveragePool (kernel = stride).
    def __init__(self, classes=10):
        super().__init__(classes)
        self.pool = nn.AdaptiveAvgPool2d((2, 2))
        self.fc = nn.Linear(32 * 4, classes)


# ---- MobileNetV2: inverted residuals (expand 1x1, depthwise 3x3, project), ReLU6, hardswish ----
class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand, act):
        super().__init__()
        hid = cin * expand
        self.use_res = stride == 1 and cin == cout
        self.block = nn.Sequential(
            nn.Conv2d(cin, hid, 1, bias=False), bn(hid), act(),
            nn.Conv2d(hid, hid, 3, stride, 1, groups=hid, bias=False), bn(hid), act(),
            nn.Conv2d(hid, cout, 1, bias=False), bn(cout))

    def forward(self, x):
        return x + self.block(x) if self.use_res else self.block(x)


class MobileNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1, bias=False), bn(16), nn.ReLU6(inplace=True),
            InvertedResidual(16, 16, 1, 2, nn.ReLU6),
            InvertedResidual(16, 24, 2, 3, nn.ReLU6),
            InvertedResidual(24, 24, 1, 3, nn.Hardswish),
            nn.Conv2d(24, 64, 1, bias=False), bn(64), nn.Hardswish())
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, classes))

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, 1).reshape(x.shape[0], -1)  # Shape/Gather/Reshape chain
        return self.classifier(x)


class MobileNetMean(MobileNet):
    # torchvision's MobileNetV3 head: a mean over H, W (ReduceMean) and Hardsigmoid gating.
    def forward(self, x):
        x = self.features(x)
        x = x * F.hardsigmoid(x.mean((2, 3), keepdim=True))
        return self.classifier(x.mean((2, 3)))


# ---- SqueezeNet 1.1: fire modules (squeeze, two parallel expands, Concat), ceil-mode pooling ----
class Fire(nn.Module):
    def __init__(self, cin, sq, e1, e3):
        super().__init__()
        self.squeeze = nn.Conv2d(cin, sq, 1)
        self.expand1x1 = nn.Conv2d(sq, e1, 1)
        self.expand3x3 = nn.Conv2d(sq, e3, 3, padding=1)

    def forward(self, x):
        x = F.relu(self.squeeze(x))
        return torch.cat([F.relu(self.expand1x1(x)), F.relu(self.expand3x3(x))], 1)


class SqueezeNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(16, 8, 16, 16), Fire(32, 8, 16, 16), nn.MaxPool2d(3, 2, ceil_mode=True),
            Fire(32, 12, 24, 24))
        self.classifier = nn.Sequential(nn.Dropout(0.5), nn.Conv2d(48, classes, 1), nn.ReLU(inplace=True),
                                        nn.AdaptiveAvgPool2d((1, 1)))

    def forward(self, x):
        return torch.flatten(self.classifier(self.features(x)), 1)


# ---- Transformer blocks: attention written out as BERT/GPT-2 implementations do ----
class SelfAttention(nn.Module):
    def __init__(self, d, heads, causal, seq):
        super().__init__()
        self.h, self.dk = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.causal = causal
        if causal:
            self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))
        self.drop = nn.Dropout(0.1)

    def split(self, x):
        b, s = x.size(0), x.size(1)
        return x.view(b, s, self.h, self.dk).permute(0, 2, 1, 3)

    def forward(self, x, add_mask=None):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        att = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dk)
        if self.causal:
            s = x.size(1)
            att = att.masked_fill(self.mask[:, :, :s, :s] == 0, float("-inf"))
        if add_mask is not None:
            att = att + add_mask
        att = self.drop(F.softmax(att, dim=-1))
        y = torch.matmul(att, v).permute(0, 2, 1, 3).contiguous()
        return self.o(y.view(y.size(0), y.size(1), -1))


class EncoderBlock(nn.Module):
    # BERT layer: post-norm, erf GELU, a padding mask turned into an additive scaled mask.
    def __init__(self, d=32, heads=4, ff=64):
        super().__init__()
        self.att = SelfAttention(d, heads, False, 0)
        self.ln1, self.ln2 = nn.LayerNorm(d, eps=1e-12), nn.LayerNorm(d, eps=1e-12)
        self.ff1, self.ff2 = nn.Linear(d, ff), nn.Linear(ff, d)

    def forward(self, x, mask):
        add = (1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0
        x = self.ln1(x + self.att(x, add))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class DecoderBlock(nn.Module):
    # GPT-2 layer: pre-norm, causal mask from a buffer (Where), tanh GELU, token + position
    # embeddings (Gather, Range from the input's length), LM head tied to the embedding.
    def __init__(self, vocab=50, d=32, heads=4, seq=16):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(seq, d)
        self.ln1, self.ln2, self.lnf = nn.LayerNorm(d), nn.LayerNorm(d), nn.LayerNorm(d)
        self.att = SelfAttention(d, heads, True, seq)
        self.fc, self.proj = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, ids):
        pos = torch.arange(0, ids.size(-1), dtype=torch.long).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        x = x + self.att(self.ln1(x))
        x = x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))
        return torch.matmul(self.lnf(x), self.wte.weight.t())


class TorchEncoder(nn.Module):
    # nn.TransformerEncoderLayer as users instantiate it (its export spells attention its own way).
    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True)

    def forward(self, x):
        return self.layer(x)


# ---- MLPs ----
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, 48), nn.ReLU(), nn.Dropout(0.3), nn.Linear(48, 32),
                                 nn.GELU(), nn.Linear(32, 32), nn.LeakyReLU(0.1), nn.Linear(32, 10))

    def forward(self, x):
        return F.log_softmax(self.net(x), dim=1)


class MLPMisc(nn.Module):
    # Odd forms: Tanh, Sigmoid, SiLU, Softplus, ELU, bias-less Linear, a 3-D input (MatMul + Add),
    # Split/Slice/Concat/Transpose/Expand/ConstantOfShape/Where/Cast and a softmax over axis 1.
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 32)
        self.b = nn.Linear(16, 32, bias=False)
        self.c = nn.Linear(32, 16)

    def forward(self, x):
        h = torch.tanh(self.a(x)) * torch.sigmoid(self.b(x))  # [B, S, 32]
        h1, h2 = torch.split(h, [12, 20], dim=-1)
        h = torch.cat([F.silu(h1), F.softplus(h2), F.elu(h[..., 8:24])], dim=-1)[..., :32]
        h = F.pad(h, (2, 1))[..., 1:-2]
        h = torch.cat([h[:, :1], h[:, 1:] * 0.5], dim=1)  # an open-ended slice: ends = INT64_MAX
        z = torch.zeros(h.shape[0], 1, h.shape[2]) + h.mean(dim=1, keepdim=True)
        h = h + z.expand(-1, h.shape[1], -1)
        h = torch.where(h > 0, h, h * 0.5)
        y = self.c(h).transpose(1, 2)  # [B, 16, S]
        keep = (y.abs() < 2.0).to(torch.float32)
        return F.softmax(y * keep, dim=1)


CASES = [
    # name, model, inputs, opset, symbolic axes
    ("mlp", MLP, lambda: [torch.randn(3, 1, 8, 8)], 13, True),
    ("mlp_misc", MLPMisc, lambda: [torch.randn(2, 5, 16)], 13, True),
    ("resnet_basic", ResNet, lambda: [torch.randn(1, 3, 32, 32)], 13, False),
    ("resnet_avgpool_dyn", ResNetAvgPool, lambda: [torch.randn(2, 3, 32, 32)], 13, True),
    ("mobilenet_v2", MobileNet, lambda: [torch.randn(1, 3, 32, 32)], 13, True),
    ("mobilenet_mean", MobileNetMean, lambda: [torch.randn(1, 3, 32, 32)], 13, False),
    ("squeezenet", SqueezeNet, lambda: [torch.randn(1, 3, 48, 48)], 13, False),
    ("bert_layer", EncoderBlock,
     lambda: [torch.randn(2, 8, 32), torch.tensor([[1] * 8, [1] * 5 + [0] * 3], dtype=torch.int64)], 13, True),
    ("bert_layer_opset17", EncoderBlock,
     lambda: [torch.randn(2, 8, 32), torch.tensor([[1] * 8, [1] * 6 + [0] * 2], dtype=torch.int64)], 17, False),
    ("gpt2_block", DecoderBlock, lambda: [torch.randint(0, 50, (1, 12))], 13, {0: "batch", 1: "seq"}),
    ("torch_encoder_layer", TorchEncoder, lambda: [torch.randn(2, 6, 32)], 13, False),
]


def tensor_pb(arr, name):
    return numpy_helper.from_array(np.ascontiguousarray(arr), name).SerializeToString()


def export(name, cls, make_inputs, opset, dynamic):
    torch.manual_seed(sum(map(ord, name)))
    model = cls().eval()
    inputs = make_inputs()
    with torch.no_grad():
        out = model(*inputs)
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    in_names = ["x"] if len(inputs) == 1 else ["x", "mask"]
    axes = None
    if dynamic:  # True: a symbolic batch; a dict: these symbolic axes of every input and output
        axes = {n: dict(dynamic) if isinstance(dynamic, dict) else {0: "batch"} for n in in_names + ["y"]}
    path = os.path.join(d, "model.onnx")
    torch.onnx.export(model, tuple(inputs), path, opset_version=opset, do_constant_folding=True,
                      input_names=in_names, output_names=["y"], dynamic_axes=axes)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    for i, (n, t) in enumerate(zip(in_names, inputs)):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % i), "wb") as f:
            f.write(tensor_pb(t.numpy(), n))
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(tensor_pb(out.numpy(), "y"))
    ops = sorted({n.op_type for n in m.graph.node})
    print("%-22s opset %d %7d bytes  %s" % (name, opset, os.path.getsize(path), " ".join(ops)))


if __name__ == "__main__":
    for c in CASES:
        export(*c)
