// Conv / ConvTranspose geometry in ONNX semantics (see conv_shape.h).
#include "runtime/ref/conv_shape.h"

#include "sim/error.h"

namespace sfumato::ref {

std::vector<int64_t> ConvGeometry::out_shape() const {
    std::vector<int64_t> s{n, m};
    s.insert(s.end(), out.begin(), out.end());
    return s;
}

ConvGeometry conv_geometry(const std::string& node, const std::string& op_type, const Attrs& attrs,
                           const std::vector<int64_t>& x, const std::vector<int64_t>& w) {
    auto fail = [&](const std::string& what) {
        throw InputError("node '" + node + "' (" + op_type + "): " + what);
    };
    ConvGeometry g;
    g.transpose = op_type == "ConvTranspose";
    if (x.size() < 3) fail("X must be N x C x spatial..., got " + shape_str(x));
    if (w.size() != x.size()) fail("W " + shape_str(w) + " and X " + shape_str(x) + " differ in rank");
    const size_t r = x.size() - 2;
    g.n = x[0], g.c = x[1];
    g.group = attrs.get_int("group", 1);
    if (g.group < 1 || g.c % g.group)
        fail("group " + std::to_string(g.group) + " does not divide C = " + std::to_string(g.c));
    if (!g.transpose) {
        g.m = w[0];
        if (w[1] != g.c / g.group)
            fail("W " + shape_str(w) + " needs C / group = " + std::to_string(g.c / g.group) +
                 " input channels");
        if (g.m % g.group)
            fail("group " + std::to_string(g.group) + " does not divide M = " + std::to_string(g.m));
    } else {
        if (w[0] != g.c)
            fail("W " + shape_str(w) + " needs C = " + std::to_string(g.c) + " in its first dimension");
        g.m = w[1] * g.group;
    }
    g.in.assign(x.begin() + 2, x.end());
    g.kernel = attrs.get_ints("kernel_shape", std::vector<int64_t>(w.begin() + 2, w.end()));
    g.stride = attrs.get_ints("strides", std::vector<int64_t>(r, 1));
    g.dilation = attrs.get_ints("dilations", std::vector<int64_t>(r, 1));
    std::vector<int64_t> pads = attrs.get_ints("pads", std::vector<int64_t>(2 * r, 0));
    g.out_pad = attrs.get_ints("output_padding", std::vector<int64_t>(r, 0));
    if (g.kernel.size() != r || g.stride.size() != r || g.dilation.size() != r || pads.size() != 2 * r ||
        g.out_pad.size() != r)
        fail("kernel_shape, strides, dilations, output_padding need " + std::to_string(r) +
             " values and pads " + std::to_string(2 * r));
    for (size_t i = 0; i < r; ++i) {
        if (g.kernel[i] != w[i + 2]) fail("kernel_shape does not match W " + shape_str(w));
        if (g.stride[i] < 1 || g.dilation[i] < 1 || pads[i] < 0 || pads[i + r] < 0 || g.out_pad[i] < 0)
            fail("strides and dilations must be >= 1, pads and output_padding >= 0");
    }
    const std::string auto_pad = attrs.get_string("auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
        fail("auto_pad '" + auto_pad + "' (valid: NOTSET, VALID, SAME_UPPER, SAME_LOWER)");
    const bool same = auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
    g.pad_begin.assign(r, 0), g.pad_end.assign(r, 0), g.out.assign(r, 0);
    const std::vector<int64_t> out_shape = attrs.get_ints("output_shape", {});
    if (g.transpose && !out_shape.empty() && out_shape.size() != r && out_shape.size() != r + 2)
        fail("output_shape needs " + std::to_string(r) + " values");
    for (size_t i = 0; i < r; ++i) {
        const int64_t ext = (g.kernel[i] - 1) * g.dilation[i] + 1;  // dilated kernel extent
        if (!g.transpose) {
            if (same) {
                const int64_t o = (g.in[i] + g.stride[i] - 1) / g.stride[i];
                const int64_t need = std::max<int64_t>(0, (o - 1) * g.stride[i] + ext - g.in[i]);
                g.pad_begin[i] = auto_pad == "SAME_UPPER" ? need / 2 : need - need / 2;
                g.pad_end[i] = need - g.pad_begin[i];
            } else if (auto_pad == "NOTSET") {
                g.pad_begin[i] = pads[i], g.pad_end[i] = pads[i + r];
            }
            const int64_t span = g.in[i] + g.pad_begin[i] + g.pad_end[i] - ext;
            if (span < 0) fail("kernel larger than the padded input");
            g.out[i] = span / g.stride[i] + 1;
            continue;
        }
        const int64_t full = g.stride[i] * (g.in[i] - 1) + g.out_pad[i] + ext;
        if (!out_shape.empty() || same) {
            const int64_t target =
                !out_shape.empty() ? out_shape[out_shape.size() - r + i] : g.in[i] * g.stride[i];
            // A target beyond the full output (total < 0) pads with zeros, as ONNX's negative
            // total padding does (floor division: the extra rows go to the end).
            const int64_t total = full - target;
            const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
            if (target < 1) fail("output_shape leaves no output");
            g.pad_begin[i] = auto_pad == "SAME_UPPER" ? half : total - half;
            g.pad_end[i] = total - g.pad_begin[i];
            g.out[i] = target;
        } else {
            if (auto_pad == "NOTSET") g.pad_begin[i] = pads[i], g.pad_end[i] = pads[i + r];
            g.out[i] = full - g.pad_begin[i] - g.pad_end[i];
            if (g.out[i] < 1) fail("pads leave no output");
        }
    }
    return g;
}

}  // namespace sfumato::ref
