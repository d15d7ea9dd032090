// ONNX import, validation, shape inference with symbolic dimensions, opset
// upgrades and tensor files (runtime/graph), on models written with the zoo's
// protobuf builder.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "runtime/graph/infer.h"
#include "runtime/graph/onnx_import.h"
#include "runtime/graph/ref_interp.h"
#include "runtime/graph/tensor_io.h"
#include "runtime/graph/zoo.h"
#include "runtime/graph/zoo/builder.h"

using namespace sfumato;
using namespace sfumato::graph;
using zoo::ai;
using zoo::ais;

namespace {

constexpr int kF = onnx::TensorProto::FLOAT;

std::string bytes_of(zoo::Builder& b) { return b.model().SerializeAsString(); }

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

Graph imported(zoo::Builder& b) { return import_onnx_bytes(bytes_of(b), "test"); }

}  // namespace

TEST_CASE("graph import: symbolic batch dimension propagates through a CNN") {
    Graph g = zoo_graph("resnet18?image=64&classes=10");
    infer_shapes(g);
    const Value& out = g.val(g.outputs[0]);
    REQUIRE(out.has_shape);
    CHECK(shape_str(out.shape) == "[N,10]");
    // Every activation keeps N as its first dimension.
    for (const Node& n : g.nodes)
        if (n.op_type == "Conv") CHECK(g.val(n.outputs[0]).shape[0].str() == "N");
}

TEST_CASE("graph import: conv and pool output sizes, including ceil mode") {
    zoo::Builder b("t", 13, 1);
    std::string x = b.input("x", kF, {1, 3, 17, 17});
    x = b.op("Conv", {x, b.weight("w", {8, 3, 3, 3})},
             {ais("kernel_shape", {3, 3}), ais("strides", {2, 2}), ais("pads", {1, 1, 1, 1})});
    const std::string p =
        b.op("MaxPool", {x}, {ai("ceil_mode", 1), ais("kernel_shape", {3, 3}), ais("strides", {2, 2})});
    const std::string q = b.op("AveragePool", {x}, {ais("kernel_shape", {3, 3}), ais("strides", {2, 2})});
    b.output(p, kF);
    b.output(q, kF);
    Graph g = imported(b);
    infer_shapes(g);
    CHECK(shape_str(g.val(g.find_value(x)).shape) == "[1,8,9,9]");  // floor((17+2-3)/2)+1
    CHECK(shape_str(g.val(g.outputs[0]).shape) == "[1,8,4,4]");     // ceil((9-3)/2)+1
    CHECK(shape_str(g.val(g.outputs[1]).shape) == "[1,8,4,4]");
}

TEST_CASE("graph import: shape arithmetic is evaluated at plan time") {
    zoo::Builder b("t", 13, 1);
    const std::string x = b.input("x", kF, {-1, 4, 6}, {"B"});
    const std::string s = b.op("Shape", {x});
    const std::string r = b.op("Reshape", {x, s});  // a constant shape once B is bound
    b.output(r, kF);
    Graph g = imported(b);
    g.val(g.inputs[0]).shape = make_shape({2, 4, 6});
    infer_shapes(g);
    const Value& sv = g.val(g.find_value(s));
    REQUIRE(sv.constant);
    CHECK(sv.constant->host()->data == std::vector<double>{2, 4, 6});
    CHECK(shape_str(g.val(g.outputs[0]).shape) == "[2,4,6]");
}

TEST_CASE("graph import: bad models are errors naming the node and input") {
    SECTION("dangling input") {
        zoo::Builder b("t", 13, 1);
        const std::string x = b.input("x", kF, {2, 3});
        b.output(b.op("Add", {x, "nowhere"}, {}, "the_add"), kF);
        const std::string e = error_of([&] { imported(b); });
        CHECK(e.find("the_add") != std::string::npos);
        CHECK(e.find("'nowhere'") != std::string::npos);
    }
    SECTION("missing initializer") {
        zoo::Builder b("t", 13, 1);
        const std::string x = b.input("x", kF, {1, 3, 8, 8});
        b.output(b.op("Conv", {x, "conv.weight"}, {}, "conv1"), kF);
        const std::string e = error_of([&] { imported(b); });
        CHECK(e.find("conv1") != std::string::npos);
        CHECK(e.find("conv.weight") != std::string::npos);
    }
    SECTION("unsupported operator") {
        zoo::Builder b("t", 13, 1);
        const std::string x = b.input("x", kF, {2});
        b.output(b.op("FancyOp", {x}, {}, "fancy"), kF);
        Graph g = imported(b);
        try {
            infer_shapes(g);
            FAIL("no error");
        } catch (const UnsupportedOp& e) {
            CHECK(e.op_type() == "FancyOp");
            CHECK(std::string(e.what()).find("fancy") != std::string::npos);
        }
    }
    SECTION("type mismatch") {
        zoo::Builder b("t", 13, 1);
        const std::string x = b.input("x", kF, {2});
        const std::string y = b.input("y", onnx::TensorProto::INT64, {2});
        b.output(b.op("Add", {x, y}, {}, "mixed_add"), kF);
        Graph g = imported(b);
        const std::string e = error_of([&] { infer_shapes(g); });
        CHECK(e.find("mixed_add") != std::string::npos);
        CHECK(e.find("int64") != std::string::npos);
    }
    SECTION("shapes that do not broadcast") {
        zoo::Builder b("t", 13, 1);
        const std::string x = b.input("x", kF, {2, 3});
        const std::string y = b.input("y", kF, {4});
        b.output(b.op("Mul", {x, y}, {}, "bad_mul"), kF);
        Graph g = imported(b);
        CHECK(error_of([&] { infer_shapes(g); }).find("bad_mul") != std::string::npos);
    }
    SECTION("an output whose size overflows 64 bits") {
        zoo::Builder b("t", 13, 1);
        const std::string x = b.input("x", kF, {1});
        const std::string s = b.ints("shape", {122, int64_t{8065139892971110400}});
        b.output(b.op("Relu", {b.op("Expand", {x, s}, {}, "huge_expand")}, {}, "relu"), kF);
        Graph g = imported(b);
        const std::string e = error_of([&] { infer_shapes(g); });
        CHECK(e.find("huge_expand") != std::string::npos);
        CHECK(e.find("64-bit") != std::string::npos);
    }
    SECTION("an initializer whose element count wraps 64 bits") {
        zoo::Builder b("t", 13, 1);
        const std::string x = b.input("x", kF, {1});
        onnx::TensorProto* w = b.model().mutable_graph()->add_initializer();
        w->set_name("w");
        w->set_data_type(kF);
        w->add_dims(int64_t{1} << 32);
        w->add_dims(int64_t{1} << 32);  // 2^64 elements: 0 after wrapping, like its empty data
        b.output(b.op("Add", {x, "w"}, {}, "add"), kF);
        const std::string e = error_of([&] { imported(b); });
        CHECK(e.find("'w'") != std::string::npos);
        CHECK(e.find("64 bits") != std::string::npos);
    }
    SECTION("ReduceSum at opset 13 with the attribute 'axes' (its axes are an input from there)") {
        // Read as the opset-13 form, the node has no axes input: it would reduce to a scalar.
        zoo::Builder b("t", 13, 1);
        const std::string x = b.input("x", kF, {2, 3, 4});
        b.output(b.op("ReduceSum", {x}, {ais("axes", {1}), ai("keepdims", 1)}, "sum_c"), kF);
        Graph g = imported(b);
        const std::string e = error_of([&] { infer_shapes(g); });
        CHECK(e.find("sum_c") != std::string::npos);
        CHECK(e.find("'axes'") != std::string::npos);
        CHECK(e.find("opset 13") != std::string::npos);
        // The same attribute at opset 11, and ReduceMean's at 13 (an input only from 18), are read.
        for (const auto& [op, opset] : std::vector<std::pair<std::string, int>>{{"ReduceSum", 11}, {"ReduceMean", 13}}) {
            zoo::Builder ok("t", opset, 1);
            const std::string y = ok.input("x", kF, {2, 3, 4});
            ok.output(ok.op(op, {y}, {ais("axes", {1}), ai("keepdims", 1)}, "r"), kF);
            Graph h = imported(ok);
            CHECK(error_of([&] { infer_shapes(h); }) == "");
        }
    }
    SECTION("truncated file") {
        const std::string full = zoo_model_bytes("mlp?in=16&hidden=8&layers=2&classes=4");
        const std::string e =
            error_of([&] { import_onnx_bytes(full.substr(0, full.size() / 2), "cut.onnx"); });
        CHECK(e.find("cut.onnx") != std::string::npos);
    }
    SECTION("empty file") {
        CHECK(error_of([&] { import_onnx_bytes("", "empty.onnx"); }).find("empty.onnx") != std::string::npos);
    }
}

TEST_CASE("graph import: opset 6 attributes become opset 11 inputs") {
    zoo::Builder b("t", 6, 1);
    const std::string x = b.input("x", kF, {1, 2, 3, 3});
    const std::string c = b.op("Clip", {x}, {zoo::af("min", -1.0), zoo::af("max", 2.0)}, "clip");
    const std::string p =
        b.op("Pad", {c}, {ais("pads", {0, 0, 1, 1, 0, 0, 1, 1}), zoo::af("value", 0.5)}, "pad");
    b.output(p, kF);
    Graph g = imported(b);
    infer_shapes(g);
    CHECK(shape_str(g.val(g.outputs[0]).shape) == "[1,2,5,5]");
    for (const Node& n : g.nodes) {
        CHECK(n.opset == 11);
        if (n.op_type == "Clip") {
            REQUIRE(n.inputs.size() == 3);
            CHECK(g.val(n.inputs[1]).constant->host()->data[0] == -1.0);
            CHECK(g.val(n.inputs[2]).constant->host()->data[0] == 2.0);
        }
        if (n.op_type == "Pad") {
            REQUIRE(n.inputs.size() == 3);
            CHECK(g.val(n.inputs[1]).constant->host()->data == std::vector<double>{0, 0, 1, 1, 0, 0, 1, 1});
            CHECK(g.val(n.inputs[2]).constant->host()->data[0] == 0.5);
        }
    }
}

TEST_CASE("graph import: zoo models infer to their published shapes") {
    Graph bert = zoo_graph("bert_base?layers=2&hidden=64&heads=4&seq=16&vocab=100");
    infer_shapes(bert);
    CHECK(shape_str(bert.val(bert.outputs[0]).shape) == "[N,16,64]");
    Graph gpt = zoo_graph("gpt2_small?layers=1&hidden=32&heads=2&seq=8&vocab=50");
    infer_shapes(gpt);
    CHECK(shape_str(gpt.val(gpt.outputs[0]).shape) == "[N,8,50]");
    Graph mb = zoo_graph("mobilenet_v2?image=32&classes=10");
    infer_shapes(mb);
    CHECK(shape_str(mb.val(mb.outputs[0]).shape) == "[N,10]");
    Graph sq = zoo_graph("squeezenet?image=64&classes=10");
    infer_shapes(sq);
    CHECK(shape_str(sq.val(sq.outputs[0]).shape) == "[N,10]");
    CHECK_THROWS_AS(zoo_graph("resnet18?colour=1"), InputError);
    CHECK_THROWS_AS(zoo_graph("alexnet"), InputError);
}

TEST_CASE("graph tensor files: npy and pb round trip, bad files are named") {
    ref::HostTensor t(ref::ElemType::Float, {2, 3});
    for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = 0.25 * static_cast<double>(i) - 0.5;
    const auto dir = std::filesystem::temp_directory_path() / ("sfumato_tio_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    {
        std::ofstream(dir / "a.npy", std::ios::binary) << npy_bytes(t);
        std::ofstream(dir / "a.pb", std::ios::binary) << pb_bytes(t, "x");
    }
    const ref::HostTensor n = read_tensor_file((dir / "a.npy").string());
    std::string name;
    const ref::HostTensor p = read_tensor_file((dir / "a.pb").string(), &name);
    CHECK(n.shape == t.shape);
    CHECK(n.data == t.data);
    CHECK(p.data == t.data);
    CHECK(name == "x");
    std::ofstream(dir / "bad.npy", std::ios::binary) << "not numpy";
    CHECK_THROWS_WITH(read_tensor_file((dir / "bad.npy").string()), Catch::Contains("bad.npy"));
    CHECK_THROWS_WITH(read_tensor_file((dir / "a.txt").string()), Catch::Contains("a.txt"));
    std::filesystem::remove_all(dir);
}

TEST_CASE(
    "graph reference interpreter: runs pass-through graphs and drops "
    "nothing it needs") {
    zoo::Builder b("t", 13, 1);
    const std::string x = b.input("x", kF, {2, 2});
    const std::string a = b.op("Identity", {x});
    const std::string c = b.op("Dropout", {a});
    b.output(c, kF);
    b.output(a, kF);
    Graph g = imported(b);
    infer_shapes(g);
    ref::HostTensor in(ref::ElemType::Float, {2, 2});
    in.data = {1, 2, 3, 4};
    const auto out = run_reference(g, {in});
    REQUIRE(out.size() == 2);
    CHECK(out[0].data == in.data);
    CHECK(out[1].data == in.data);
}
