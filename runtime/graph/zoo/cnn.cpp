// Zoo builders for MLPs and convolutional networks: mlp, resnet18/50
// (torchvision's layouts), mobilenet_v2 (inverted residuals, depthwise
// convolutions, ReLU6 as Clip), squeezenet 1.1 (fire modules: two parallel
// expand convolutions joined by a Concat). Convolutions are followed by
// BatchNormalization as an eval-mode export without BN folding writes them.
#include <cmath>

#include "runtime/graph/zoo/builder.h"

namespace sfumato::graph::zoo {

namespace {

// BN with random statistics, as a trained model's export has them; `stats` false: BN as
// initialised (scale 1, bias 0, mean 0, variance 1), which keeps a network without other biases
// homogeneous in its input (small inputs give proportionally small activations).
std::string bn(Builder& b, const std::string& x, int64_t c, const std::string& name, bool stats = true) {
    std::uniform_real_distribution<float> g(0.8f, 1.2f), s(-0.1f, 0.1f);
    std::vector<float> scale(static_cast<size_t>(c), 1.0f), bias(scale.size(), 0.0f), mean(scale.size(), 0.0f),
        var(scale.size(), 1.0f);
    for (size_t i = 0; stats && i < scale.size(); ++i) {
        scale[i] = g(b.rng());
        bias[i] = s(b.rng());
        mean[i] = s(b.rng());
        var[i] = g(b.rng());
    }
    return b.op("BatchNormalization",
                {x, b.constant(name + ".weight", {c}, scale), b.constant(name + ".bias", {c}, bias),
                 b.constant(name + ".running_mean", {c}, mean), b.constant(name + ".running_var", {c}, var)},
                {af("epsilon", 1e-5), af("momentum", 0.9)}, name);
}

// Conv (no bias) + BN + activation ("Relu", "Relu6" or "").
std::string conv_bn(Builder& b, const std::string& x, int64_t cin, int64_t cout, int64_t k, int64_t stride,
                    int64_t groups, const std::string& act, const std::string& name, bool bn_stats = true) {
    const int64_t pad = k / 2;
    const double bound = std::sqrt(6.0 / static_cast<double>(cin / groups * k * k));
    std::string y = b.op("Conv", {x, b.weight(name + ".weight", {cout, cin / groups, k, k}, bound)},
                         {ais("dilations", {1, 1}), ai("group", groups), ais("kernel_shape", {k, k}),
                          ais("pads", {pad, pad, pad, pad}), ais("strides", {stride, stride})},
                         name);
    y = bn(b, y, cout, name + "_bn", bn_stats);
    if (act == "Relu") y = b.op("Relu", {y});
    if (act == "Relu6") y = b.op("Clip", {y, b.scalar("zero", 0.0f), b.scalar("six", 6.0f)});
    return y;
}

std::string head(Builder& b, std::string x, int64_t c, int64_t classes, bool bias = true) {
    x = b.op("GlobalAveragePool", {x});
    x = b.op("Flatten", {x}, {ai("axis", 1)});
    if (!bias) return b.op("Gemm", {x, b.weight("fc.weight", {classes, c})}, {af("alpha", 1.0), ai("transB", 1)}, "fc");
    return b.op("Gemm",
                {x, b.weight("fc.weight", {classes, c}),
                 b.weight("fc.bias", {classes}, 1.0 / std::sqrt(static_cast<double>(c)))},
                {af("alpha", 1.0), af("beta", 1.0), ai("transB", 1)}, "fc");
}

}  // namespace

void build_mlp(Builder& b, const Params& p) {
    const int64_t in = p.at("in"), hidden = p.at("hidden"), layers = p.at("layers"),
                  classes = p.at("classes");
    std::string x = b.input("input", kFloat, {-1, in});
    int64_t c = in;
    for (int64_t l = 0; l < layers; ++l) {
        const bool last = l + 1 == layers;
        const int64_t out = last ? classes : hidden;
        const std::string nm = "fc" + std::to_string(l + 1);
        x = b.op("Gemm",
                 {x, b.weight(nm + ".weight", {out, c}),
                  b.weight(nm + ".bias", {out}, 1.0 / std::sqrt(static_cast<double>(c)))},
                 {af("alpha", 1.0), af("beta", 1.0), ai("transB", 1)}, nm);
        if (!last) x = b.op("Relu", {x});
        c = out;
    }
    x = b.op("Softmax", {x}, {ai("axis", 1)}, "probabilities");
    b.output(x, kFloat);
}

void build_resnet(Builder& b, const Params& p) {
    const int64_t depth = p.at("depth"), image = p.at("image"), classes = p.at("classes"),
                  width = p.at("width");
    const bool bottleneck = depth >= 50;
    const std::vector<int64_t> blocks = depth == 18                  ? std::vector<int64_t>{2, 2, 2, 2}
                                        : depth == 34 || depth == 50 ? std::vector<int64_t>{3, 4, 6, 3}
                                                                     : std::vector<int64_t>{3, 4, 23, 3};
    std::string x = b.input("input", kFloat, {-1, 3, image, image});
    x = conv_bn(b, x, 3, width, 7, 2, 1, "Relu", "conv1");
    x = b.op("MaxPool", {x}, {ais("kernel_shape", {3, 3}), ais("pads", {1, 1, 1, 1}), ais("strides", {2, 2})},
             "maxpool");
    int64_t c = width;
    for (size_t layer = 0; layer < 4; ++layer) {
        const int64_t w = width << layer;
        for (int64_t i = 0; i < blocks[layer]; ++i) {
            const int64_t stride = i == 0 && layer > 0 ? 2 : 1;
            const std::string nm = "layer" + std::to_string(layer + 1) + "." + std::to_string(i);
            const int64_t out = bottleneck ? 4 * w : w;
            std::string y;
            if (bottleneck) {
                y = conv_bn(b, x, c, w, 1, 1, 1, "Relu", nm + ".conv1");
                y = conv_bn(b, y, w, w, 3, stride, 1, "Relu", nm + ".conv2");
                y = conv_bn(b, y, w, out, 1, 1, 1, "", nm + ".conv3");
            } else {
                y = conv_bn(b, x, c, w, 3, stride, 1, "Relu", nm + ".conv1");
                y = conv_bn(b, y, w, w, 3, 1, 1, "", nm + ".conv2");
            }
            std::string sc = x;
            if (stride != 1 || c != out) sc = conv_bn(b, x, c, out, 1, stride, 1, "", nm + ".downsample");
            x = b.op("Relu", {b.op("Add", {y, sc}, {}, nm + ".add")});
            c = out;
        }
    }
    b.output(head(b, x, c, classes), kFloat);
}

void build_mobilenet_v2(Builder& b, const Params& p) {
    const int64_t image = p.at("image"), classes = p.at("classes"), pct = p.at("width_pct");
    // fresh=1: BN as initialised and no classifier bias, so activations scale with the input.
    const bool st = p.at("fresh") == 0;
    auto ch = [pct](int64_t c) { return std::max<int64_t>(8, (c * pct / 100 + 4) / 8 * 8); };
    std::string x = b.input("input", kFloat, {-1, 3, image, image});
    int64_t c = ch(32);
    x = conv_bn(b, x, 3, c, 3, 2, 1, "Relu6", "features.0", st);
    const int64_t cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                               {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    int idx = 1;
    for (const auto& r : cfg) {
        const int64_t out = ch(r[1]);
        for (int64_t i = 0; i < r[2]; ++i, ++idx) {
            const int64_t stride = i == 0 ? r[3] : 1, hidden = c * r[0];
            const std::string nm = "features." + std::to_string(idx);
            std::string y = x;
            if (r[0] != 1) y = conv_bn(b, y, c, hidden, 1, 1, 1, "Relu6", nm + ".expand", st);
            y = conv_bn(b, y, hidden, hidden, 3, stride, hidden, "Relu6", nm + ".dw", st);
            y = conv_bn(b, y, hidden, out, 1, 1, 1, "", nm + ".project", st);
            if (stride == 1 && c == out) y = b.op("Add", {x, y}, {}, nm + ".add");
            x = y;
            c = out;
        }
    }
    const int64_t last = pct > 100 ? ch(1280) : 1280;
    x = conv_bn(b, x, c, last, 1, 1, 1, "Relu6", "features.18", st);
    b.output(head(b, x, last, classes, st), kFloat);
}

void build_squeezenet(Builder& b, const Params& p) {
    const int64_t image = p.at("image"), classes = p.at("classes");
    auto conv = [&](const std::string& x, int64_t cin, int64_t cout, int64_t k, int64_t stride,
                    const std::string& nm) {
        const int64_t pad = k == 3 && stride == 1 ? 1 : 0;
        std::string y = b.op(
            "Conv",
            {x,
             b.weight(nm + ".weight", {cout, cin, k, k}, std::sqrt(6.0 / static_cast<double>(cin * k * k))),
             b.weight(nm + ".bias", {cout}, 0.05)},
            {ais("kernel_shape", {k, k}), ais("pads", {pad, pad, pad, pad}),
             ais("strides", {stride, stride})},
            nm);
        return b.op("Relu", {y});
    };
    auto pool = [&](const std::string& x) {
        return b.op("MaxPool", {x},
                    {ai("ceil_mode", 1), ais("kernel_shape", {3, 3}), ais("strides", {2, 2})});
    };
    int64_t c = 64;
    auto fire = [&](const std::string& x, int64_t s, int64_t e, const std::string& nm) {
        const std::string sq = conv(x, c, s, 1, 1, nm + ".squeeze");
        const std::string e1 = conv(sq, s, e, 1, 1, nm + ".expand1x1");
        const std::string e3 = conv(sq, s, e, 3, 1, nm + ".expand3x3");
        c = 2 * e;
        return b.op("Concat", {e1, e3}, {ai("axis", 1)}, nm + ".cat");
    };
    std::string x = b.input("input", kFloat, {-1, 3, image, image});
    x = pool(conv(x, 3, 64, 3, 2, "features.0"));
    x = fire(x, 16, 64, "features.3");
    x = pool(fire(x, 16, 64, "features.4"));
    x = fire(x, 32, 128, "features.6");
    x = pool(fire(x, 32, 128, "features.7"));
    x = fire(x, 48, 192, "features.9");
    x = fire(x, 48, 192, "features.10");
    x = fire(x, 64, 256, "features.11");
    x = fire(x, 64, 256, "features.12");
    x = conv(x, c, classes, 1, 1, "classifier.1");
    x = b.op("GlobalAveragePool", {x});
    b.output(b.op("Flatten", {x}, {ai("axis", 1)}), kFloat);
}

}  // namespace sfumato::graph::zoo
