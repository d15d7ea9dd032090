// The training step's own kernels through their standalone faces (`sfumato kernel
// conv2d_backprop_filter`, `sfumato kernel maxpool_grad`): the check against the host reference
// on odd sizes, stride 2, padding, every tiling form (one share of the images or several, load3d's
// column order kept or converted to OIHW, channels not a multiple of C0), split and coupled
// presets, fp16 and fp32; identical cycles in functional and timing mode; bad arguments exit 2.
// Also the stride-1 ConvTranspose (a Conv's data gradient) as a padded convolution.
#include <catch2/catch.hpp>

#include "tests/support.h"

using namespace sfumato::test;

namespace {

nlohmann::json run_ok(const std::string& op, const std::string& args, const std::string& preset, const std::string& tag,
                      const std::string& mode = "functional") {
    const std::string out = temp_dir("trk_" + tag);
    const CliResult r = run_cli("kernel " + op + " " + args + " --config " + config(preset) + " --trace off --mode " + mode +
                                " --out " + out);
    INFO(r.output);
    REQUIRE(r.code == 0);
    if (mode == "functional") CHECK(r.output.find("check: passed") != std::string::npos);
    return read_json(out + "/summary.json");
}

size_t count_kernels(const nlohmann::json& s, const std::string& name_part) {
    size_t n = 0;
    for (const auto& op : s["ops"])
        if (op["name"].get<std::string>().find(name_part) != std::string::npos) ++n;
    return n;
}

}  // namespace

TEST_CASE("conv2d_backprop_filter: dW matches the host reference in every tiling form", "[train]") {
    // 3x3, stride 2, pad 1, odd sizes, C not a multiple of C0: partial sums over several image
    // shares, summed, rounded and gathered to OIHW by one kernel after the cube's.
    auto s = run_ok("conv2d_backprop_filter", "--n 3 --c 5 --h 9 --w 11 --k 6 --stride 2", "ascend910b-like", "odd");
    CHECK(count_kernels(s, "/finish") == 1);
    CHECK(s["ops"].size() == 3);  // the NC1HWC0 conversion, the cube kernel, the finish
    // A row of 300 channels x 7 x 7 taps does not fit the tiny chip's UB: the Transpose and the
    // channel Slice instead.
    s = run_ok("conv2d_backprop_filter", "--n 1 --c 300 --h 9 --w 9 --k 16 --r 7 --s 7 --pad 3", "tiny", "big");
    CHECK(count_kernels(s, "/to_oihw") == 1);
    CHECK(count_kernels(s, "/channels") == 1);
    // 1x1 with C a multiple of C0 and one image: load3d's column order is OIHW, the cube writes dW.
    s = run_ok("conv2d_backprop_filter", "--n 1 --c 32 --h 7 --w 5 --k 40 --r 1 --s 1 --pad 0", "tiny", "direct");
    CHECK(s["ops"].size() == 2);  // the NC1HWC0 conversion and the cube kernel
    run_ok("conv2d_backprop_filter", "--n 2 --c 20 --h 13 --w 6 --k 24 --r 5 --s 3 --pad 2 --dtype fp32", "tiny", "fp32");
    run_ok("conv2d_backprop_filter", "--n 2 --c 16 --h 8 --w 8 --k 16 --stride 2 --pad 0 --dilation 2", "ascend910-like",
           "coupled");
    run_ok("conv2d_backprop_filter", "--n 2 --c 3 --h 20 --w 18 --k 8 --r 7 --s 7 --stride 2 --pad 3 --dtype bf16",
           "ascend910b-like", "stem");
}

TEST_CASE("conv2d_backprop_filter: dY in NC1HWC0 (transposed fractals into L0A) matches the host reference", "[train]") {
    // A training step keeps dY in NC1HWC0; in 2-byte types the kernel reads it as it is (no
    // conversion kernel before it). Chunks whose pixels are not a multiple of 16 (zeroed K
    // padding), output channels not a multiple of C0 (a partial last block), several output
    // tiles and image shares, several chunks of rows, split and coupled presets, fp16 and bf16.
    run_ok("conv2d_backprop_filter", "--n 3 --c 5 --h 9 --w 11 --k 6 --stride 2 --dy-format nc1hwc0", "ascend910b-like",
           "dy5_odd");
    run_ok("conv2d_backprop_filter", "--n 2 --c 20 --h 13 --w 6 --k 40 --r 5 --s 3 --pad 2 --dy-format nc1hwc0",
           "tiny", "dy5_tiles");
    run_ok("conv2d_backprop_filter", "--n 2 --c 16 --h 8 --w 8 --k 16 --stride 2 --pad 0 --dilation 2 --dy-format nc1hwc0",
           "ascend910-like", "dy5_coupled");
    run_ok("conv2d_backprop_filter",
           "--n 2 --c 3 --h 20 --w 18 --k 8 --r 7 --s 7 --stride 2 --pad 3 --dtype bf16 --dy-format nc1hwc0",
           "ascend910b-like", "dy5_bf16");
    // 1 x 1, many pixels: several chunks of rows per image in L1.
    run_ok("conv2d_backprop_filter", "--n 1 --c 32 --h 96 --w 90 --k 48 --r 1 --s 1 --pad 0 --dy-format nc1hwc0",
           "tiny", "dy5_rows");
}

TEST_CASE("maxpool_grad: dX matches the host reference, ties included", "[train]") {
    run_ok("maxpool_grad", "--n 2 --c 3 --h 13 --w 17 --k 3 --stride 2 --pad 1", "ascend910b-like", "mp3");
    run_ok("maxpool_grad", "--n 1 --c 4 --h 9 --w 8 --k 2 --stride 2 --pad 0 --dtype fp32", "tiny", "mp2");
    run_ok("maxpool_grad", "--n 1 --c 2 --h 11 --w 10 --k 3 --stride 1 --pad 1", "ascend910-like", "mp1");
    run_ok("maxpool_grad", "--n 1 --c 2 --h 40 --w 37 --k 5 --stride 3 --pad 2", "ascend910b-like", "mp5");
    // Several bands of rows with no padding (SqueezeNet's pools): a band's first rows take the
    // gradient of windows that start in the band before.
    run_ok("maxpool_grad", "--n 2 --c 4 --h 23 --w 23 --k 3 --stride 2 --pad 0 --dtype fp32", "tiny", "mpband");
    run_ok("maxpool_grad", "--n 1 --c 3 --h 31 --w 19 --k 3 --stride 2 --pad 0", "tiny", "mpband16");
}

TEST_CASE("conv_transpose2d: stride 1 and, in NC1HWC0, stride 2 (a Conv's data gradient) run without the spread", "[train]") {
    // The borders of the equivalent convolution are load3d's pads: no zero fill of a spread grid.
    auto s = run_ok("conv_transpose2d", "--n 2 --c 20 --h 9 --w 7 --k 12 --stride 1 --pad 1", "ascend910b-like", "ct1");
    CHECK(count_kernels(s, "/zero") == 0);
    s = run_ok("conv_transpose2d", "--c 8 --h 6 --w 5 --k 8 --r 3 --s 2 --stride 1 --pad 0 --dilation 2 --dtype fp32",
               "tiny", "ct1d");
    CHECK(count_kernels(s, "/zero") == 0);
    // Stride 2 with ND operands still spreads the input over a zeroed grid.
    s = run_ok("conv_transpose2d", "--c 8 --h 5 --w 5 --k 6 --stride 2 --output-padding 1", "tiny", "ct2");
    CHECK(count_kernels(s, "/zero") == 1);
    // In NC1HWC0 (a training step's dZ and dX): one stride-1 convolution per phase, merged; a
    // 1 x 1 stride-2 kernel reaches one phase of four (the merge writes the others as zeros).
    for (const char* preset : {"tiny", "ascend910-like"}) {
        s = run_ok("conv_transpose2d", "--n 2 --c 24 --h 5 --w 6 --k 20 --stride 2 --output-padding 1 --format nc1hwc0",
                   preset, std::string("ct2p_") + preset);
        CHECK(count_kernels(s, "/zero") == 0);
        CHECK(count_kernels(s, "/merge_phases") == 1);
        s = run_ok("conv_transpose2d",
                   "--c 16 --h 4 --w 3 --k 32 --r 1 --s 1 --pad 0 --stride 2 --output-padding 1 --bias 0 --format nc1hwc0",
                   preset, std::string("ct2p1_") + preset);
        CHECK(count_kernels(s, "/merge_phases") == 1);
    }
}

TEST_CASE("train kernels: timing mode takes the cycles of functional mode", "[train]") {
    for (const auto& [op, args] : std::vector<std::pair<std::string, std::string>>{
             {"conv2d_backprop_filter", "--n 3 --c 20 --h 9 --w 9 --k 12 --stride 2"},
             {"conv2d_backprop_filter", "--n 3 --c 20 --h 9 --w 9 --k 12 --stride 2 --dy-format nc1hwc0"},
             {"conv_transpose2d", "--n 2 --c 24 --h 5 --w 6 --k 20 --stride 2 --output-padding 1 --format nc1hwc0"},
             {"maxpool_grad", "--n 2 --c 4 --h 15 --w 15"}}) {
        INFO(op);
        const auto f = run_ok(op, args, "ascend910b-like", op + "_f");
        const auto t = run_ok(op, args, "ascend910b-like", op + "_t", "timing");
        REQUIRE(f["ops"].size() == t["ops"].size());
        for (size_t i = 0; i < f["ops"].size(); ++i) CHECK(f["ops"][i]["cycles"] == t["ops"][i]["cycles"]);
    }
}

TEST_CASE("train kernels: bad arguments exit 2 naming the argument", "[train]") {
    const std::string cfg = " --config " + config("tiny") + " --out " + temp_dir("trk_bad");
    CliResult r = run_cli("kernel maxpool_grad --c 2 --h 8 --w 8 --dtype bf16" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("dtype") != std::string::npos);
    r = run_cli("kernel maxpool_grad --c 2 --h 8 --w 8 --k 2 --pad 2" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("pad") != std::string::npos);
    r = run_cli("kernel conv2d_backprop_filter --c 2 --h 2 --w 8 --k 4 --r 5 --pad 0" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("kernel") != std::string::npos);
    r = run_cli("kernel conv2d_backprop_filter --c 2 --h 8 --w 8 --k 4 --dy-format nz" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("dy_format") != std::string::npos);
    // fp32's C0 (8) is half a fractal: dY in NC1HWC0 is refused, naming the reason.
    r = run_cli("kernel conv2d_backprop_filter --c 2 --h 8 --w 8 --k 4 --dtype fp32 --dy-format nc1hwc0" + cfg);
    CHECK(r.code == 2);
    CHECK(r.output.find("dY in NC1HWC0 needs a 2-byte type") != std::string::npos);
}
