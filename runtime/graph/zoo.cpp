// Zoo registry and spec parsing (see zoo.h).
#include "runtime/graph/zoo.h"

#include <cstring>
#include <functional>

#include "runtime/graph/onnx_import.h"
#include "runtime/graph/zoo/builder.h"
#include "sim/error.h"

namespace sfumato::graph {

namespace {

struct Entry {
    ZooInfo info;
    std::function<void(zoo::Builder&, const zoo::Params&)> build;
};

const std::vector<Entry>& entries() {
    static const std::vector<Entry> e = {
        {{"mlp",
          "3-layer perceptron (Gemm + Relu), softmax output",
          {{"in", 784}, {"hidden", 512}, {"layers", 3}, {"classes", 10}}},
         zoo::build_mlp},
        {{"resnet18",
          "ResNet-18, basic blocks, 224x224",
          {{"depth", 18}, {"image", 224}, {"classes", 1000}, {"width", 64}}},
         zoo::build_resnet},
        {{"resnet50",
          "ResNet-50, bottleneck blocks, 224x224",
          {{"depth", 50}, {"image", 224}, {"classes", 1000}, {"width", 64}}},
         zoo::build_resnet},
        {{"mobilenet_v2",
          "MobileNetV2, inverted residuals with depthwise convolutions",
          {{"image", 224}, {"classes", 1000}, {"width_pct", 100}, {"fresh", 0}}},
         zoo::build_mobilenet_v2},
        {{"squeezenet",
          "SqueezeNet 1.1: fire modules with parallel expand branches",
          {{"image", 224}, {"classes", 1000}}},
         zoo::build_squeezenet},
        {{"bert_base",
          "BERT-base encoder, sequence 128",
          {{"layers", 12}, {"hidden", 768}, {"heads", 12}, {"seq", 128}, {"vocab", 30522}}},
         zoo::build_bert},
        {{"bert_large",
          "BERT-large encoder (24 layers, hidden 1024, 16 heads), sequence 128",
          {{"layers", 24}, {"hidden", 1024}, {"heads", 16}, {"seq", 128}, {"vocab", 30522}}},
         zoo::build_bert},
        {{"gpt2_small",
          "GPT-2 small decoder with LM head, sequence 128",
          {{"layers", 12}, {"hidden", 768}, {"heads", 12}, {"seq", 128}, {"vocab", 50257}}},
         zoo::build_gpt2},
    };
    return e;
}

std::unique_ptr<onnx::ModelProto> build(const std::string& spec, std::string* name_out,
                                        DeferredInitializers* deferred = nullptr) {
    const size_t q = spec.find('?');
    const std::string name = spec.substr(0, q);
    const Entry* e = nullptr;
    for (const Entry& x : entries())
        if (x.info.name == name) e = &x;
    if (!e) {
        std::string known;
        for (const Entry& x : entries()) known += " " + x.info.name;
        throw InputError("zoo: unknown model '" + name + "' (known:" + known + ")");
    }
    zoo::Params p = e->info.params;
    if (q != std::string::npos) {
        std::string rest = spec.substr(q + 1);
        size_t pos = 0;
        while (pos < rest.size()) {
            const size_t amp = rest.find('&', pos);
            const std::string kv = rest.substr(pos, amp == std::string::npos ? std::string::npos : amp - pos);
            pos = amp == std::string::npos ? rest.size() : amp + 1;
            const size_t eq = kv.find('=');
            const std::string k = kv.substr(0, eq);
            if (eq == std::string::npos || !p.count(k))
                throw InputError("zoo: model '" + name + "' has no parameter '" + k + "'");
            char* end = nullptr;
            const long long v = std::strtoll(kv.c_str() + eq + 1, &end, 10);
            if (!end || *end || v <= 0 || v > (1ll << 24))
                throw InputError("zoo: parameter '" + k + "' must be a positive integer");
            p[k] = v;
        }
    }
    if (name == "bert_base" || name == "bert_large" || name == "gpt2_small") {
        if (p["hidden"] % p["heads"] != 0) throw InputError("zoo: hidden must be a multiple of heads");
    }
    auto b = std::make_unique<zoo::Builder>(name, 13, 20240601u);
    if (deferred) b->defer_weights();
    e->build(*b, p);
    if (deferred)
        for (const auto& [nm, gen] : b->deferred())
            (*deferred)[nm] = [gen = gen]() {
                const std::vector<float> v = gen.values();
                RawTensor r;
                r.type = ref::ElemType::Float;
                r.shape = gen.dims;
                r.bytes.resize(v.size() * 4);
                std::memcpy(r.bytes.data(), v.data(), r.bytes.size());
                return r;
            };
    if (name_out) *name_out = name;
    return std::make_unique<onnx::ModelProto>(std::move(b->model()));
}

}  // namespace

std::vector<ZooInfo> zoo_list() {
    std::vector<ZooInfo> v;
    for (const Entry& e : entries()) v.push_back(e.info);
    return v;
}

std::string zoo_model_bytes(const std::string& spec) {
    auto m = build(spec, nullptr);
    std::string s;
    if (!m->SerializeToString(&s))
        throw InputError("zoo: model '" + spec + "' does not serialise (over 2 GiB?)");
    return s;
}

Graph zoo_graph(const std::string& spec) {
    std::string name;
    DeferredInitializers deferred;  // the weights are generated when first asked for
    auto m = build(spec, &name, &deferred);
    return import_model(*m, "zoo:" + spec, &deferred);
}

}  // namespace sfumato::graph
