// Fuzz target `onnx`: the ONNX loader (runtime/graph/onnx_import.h) the way `sfumato run` uses
// it: import from bytes, default input shapes at batch 1, then the whole compilation (shape
// inference, passes, lowering to the operator library's node ops, tiling, memory plan and
// streams) for the tiny preset, without simulating. Properties: in a compiled plan every step
// that launches kernels has its operator, and every tensor a step reads or writes exists.
#include "models/chip/chip_params.h"
#include "runtime/graph/onnx_import.h"
#include "runtime/graph/plan.h"
#include "sim/config.h"
#include "tests/fuzz/fuzz_target.h"

using namespace sfumato;

namespace {
const DeviceInfo& tiny() {
    static const DeviceInfo info = [] {
        Config c;
        c.load_ini(std::string(SFUMATO_SOURCE_DIR) + "/configs/tiny.ini");
        ChipParams p(c);
        return device_info(p, false);
    }();
    return info;
}
}  // namespace

SFUMATO_FUZZ_TARGET(onnx) {
    graph::Model model(graph::import_onnx_bytes(std::string(fuzz::as_text(data, size)), "fuzz.onnx"));
    const auto shapes = graph::default_input_shapes(model.graph(), 1);
    // Inputs of absurd size are legal ONNX; planning them would only be slow.
    for (const auto& s : shapes) {
        uint64_t n = 1;
        for (int64_t d : s) n = d > 0 && n <= (uint64_t{1} << 24) ? n * static_cast<uint64_t>(d) : n;
        if (n > (uint64_t{1} << 24)) return;
    }
    const graph::Plan& plan = model.plan(shapes, tiny(), graph::CompileOptions{});
    for (const graph::PlanStep& st : plan.steps) {
        if (!st.view && st.kernels > 0 && !st.op) fuzz::fail("step '" + st.name + "' launches kernels without an operator");
        for (const auto* v : {&st.in, &st.out})
            for (int t : *v)
                if (t < -1 || t >= static_cast<int>(plan.tensors.size()))
                    fuzz::fail("step '" + st.name + "' names plan tensor " + std::to_string(t));
    }
}
