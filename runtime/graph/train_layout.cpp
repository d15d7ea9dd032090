// Layout of a training step's backward (train.h, train_builder.h): the forward's layout pass
// (pass_layout.cpp, training mode) keeps activations in NC1HWC0 through convolutions, batch
// norms, ReLUs, residual adds and pooling; the backward sends gradients through the same chains
// in the same layout. A gradient has its forward tensor's format. Elementwise kernels (ReluGrad,
// ClipGrad, Add, Neg) take NC1HWC0 operands as they are (zeros map to zeros, so padding channels
// stay zero). Kernels that work per channel (the BatchNorm backward's reductions and channel
// broadcasts, GlobalAveragePool's spread, a bias gradient) run as ND kernels over the storage
// viewed as [N, C1, spatial..., C0] when C fills whole C0 blocks (phys). Where a kernel needs
// ND (MaxPoolGrad, the weight gradient's dY), one TransData item per tensor converts it; those
// are counted in TrainPlan::layout. Also the host side of these views (host_alias).
#include "runtime/graph/train_builder.h"

namespace sfumato::graph {

namespace detail {

int Builder::relabel(int of, ops::TensorRef like) {
    TrainTensor t;
    t.kind = TrainTensor::Kind::Alias;
    like.strides.clear();
    like.addr = 0;
    t.ref = std::move(like);
    t.alias = of;
    return add_tensor(std::move(t));
}

Shape Builder::phys_shape(const ops::TensorRef& r) const {
    const int64_t cb = 32 / static_cast<int64_t>(isa::dtype_size(r.dtype));
    Shape s = r.shape;
    s[1] = (s[1] + cb - 1) / cb;
    s.push_back(cb);
    return s;
}

int Builder::phys(int tt) {
    const ops::TensorRef& r = m_tp.tensors[static_cast<size_t>(tt)].ref;
    if (r.format != ops::Format::NC1HWC0 || r.shape.size() < 3) return -1;
    const int64_t cb = 32 / static_cast<int64_t>(isa::dtype_size(r.dtype));
    if (r.shape[1] % cb != 0) return -1;
    ops::TensorRef p = r;
    p.format = ops::Format::ND;
    p.shape = phys_shape(r);
    return relabel(tt, p);
}

int Builder::transdata(int tt, ops::Format f, const std::string& name) {
    const auto key = std::make_pair(tt, static_cast<int>(f));
    auto it = m_converted.find(key);
    if (it != m_converted.end()) return it->second;
    const ref::Attrs a = attrs_of({{"dst_format", ref::Attr::of_string(ops::format_name(f))}});
    const int out = emit(name + "/to_" + ops::format_name(f), "TransData", 1, a, {tt});
    ++m_tp.layout.transdata;
    m_converted[key] = out;
    return out;
}

int Builder::nd(int tt, const std::string& name) {
    const ops::TensorRef& r = m_tp.tensors[static_cast<size_t>(tt)].ref;
    if (r.format == ops::Format::ND) return tt;
    ops::TensorRef like = r;
    like.format = ops::Format::ND;
    return as_layout(tt, like, name);
}

int Builder::as_layout(int g, const ops::TensorRef& like, const std::string& name) {
    const ops::TensorRef& r = m_tp.tensors[static_cast<size_t>(g)].ref;
    if (r.format == like.format && r.shape == like.shape) return g;
    if (r.format == like.format) return relabel(g, like);
    // An ND [N, C1, spatial..., C0] storage view (phys) of an NC1HWC0 tensor: back by a label.
    if (r.format == ops::Format::ND && like.format == ops::Format::NC1HWC0 && r.shape == phys_shape(like))
        return relabel(g, like);
    // One pixel per channel and whole C0 blocks: the two layouts hold the same bytes.
    const bool one_pixel = r.numel() == like.numel() && like.shape.size() >= 2 &&
                           static_cast<uint64_t>(like.shape[0] * like.shape[1]) == like.numel() &&
                           like.shape[1] % (32 / static_cast<int64_t>(isa::dtype_size(like.dtype))) == 0;
    if (one_pixel) return relabel(g, like);
    int t = g;
    if (r.shape != like.shape) {  // an ND gradient of another shape (a view's): to like's first
        ops::TensorRef s = r;
        s.shape = like.shape;
        t = relabel(g, s);
    }
    return transdata(t, like.format, name);
}

void Builder::accumulate(int t, int g, const std::string& name) {
    const PlanTensor& pt = m_p.tensors[static_cast<size_t>(t)];
    // A view the layout pass made (an NC1HWC0 tensor read as ND where the bytes agree): no
    // step produced it, its gradient is its base's.
    if (pt.kind == PlanTensor::Kind::View && m_producer[static_cast<size_t>(t)] < 0 && pt.base >= 0 &&
        pt.view_offset == 0 && pt.value < 0)
        return accumulate(pt.base, g, name);
    if (!needs(t) || is_weight(t)) return;
    ops::TensorRef like = pref(t);
    like.strides.clear();
    g = as_layout(g, like, name);
    auto it = m_grad.find(t);
    if (it == m_grad.end()) {
        m_grad[t] = g;
        return;
    }
    m_grad[t] = emit(name + "/sum", "Add", 14, {}, {it->second, g});
}

// GlobalAveragePool: dX = dY (N, C, 1, 1) times a constant (1, 1, H, W) of 1/(H W), broadcast;
// in NC1HWC0 over the storage view (N, C1, 1, 1, C0) x (1, 1, H, W, 1).
void Builder::global_average_pool(const PlanStep& st, int gy) {
    const int x = st.in[0];
    const Shape& xs = pref(x).shape;
    if (xs.size() != 4) refuse(st, "4-D input only");
    const int gp = c0(gy) ? phys(gy) : -1;
    Shape ks = {1, 1, xs[2], xs[3]};
    if (gp >= 0) ks.push_back(1);
    ref::HostTensor k(pref(x).elem, ks);
    for (double& v : k.data) v = 1.0 / static_cast<double>(xs[2] * xs[3]);
    ref::round_to_type(k);
    if (gp >= 0) ++m_tp.layout.kept;
    accumulate(x, emit(st.name + "/grad", "Mul", 14, {}, {gp >= 0 ? gp : nd(gy, st.name), constant(k)}),
               st.name);
}

}  // namespace detail

namespace {

// A host copy of a strided view (TensorRef strides, in elements) of src's contiguous data.
std::shared_ptr<ref::HostTensor> view_of(const ref::HostTensor& src, const ops::TensorRef& v) {
    auto out = std::make_shared<ref::HostTensor>(src.type, v.shape);
    if (v.strides.empty()) {
        out->data = src.data;
        return out;
    }
    const size_t r = v.shape.size();
    std::vector<int64_t> idx(r, 0);
    for (size_t k = 0; k < out->data.size(); ++k) {
        int64_t off = 0;
        for (size_t d = 0; d < r; ++d) off += idx[d] * v.strides[d];
        out->data[k] = src.data.at(static_cast<size_t>(off));
        for (size_t d = r; d-- > 0;) {
            if (++idx[d] < v.shape[d]) break;
            idx[d] = 0;
        }
    }
    return out;
}

// Between an NC1HWC0 tensor's values (the host keeps them in logical NCHW order) and its storage
// view [N, C1, spatial..., C0] (rank + 1): the permutation of the elements, zeros for padding.
bool storage_view(const ops::TensorRef& from, const ops::TensorRef& to) {
    return from.format != to.format && (from.shape.size() + 1 == to.shape.size() ||
                                        to.shape.size() + 1 == from.shape.size());
}

std::shared_ptr<ref::HostTensor> restore(const ref::HostTensor& src, const ops::TensorRef& from,
                                         const ops::TensorRef& to) {
    const bool to_phys = to.shape.size() == from.shape.size() + 1;
    const std::vector<int64_t>& logical = to_phys ? from.shape : to.shape;
    const std::vector<int64_t>& storage = to_phys ? to.shape : from.shape;
    const int64_t n = logical[0], c = logical[1], c0 = storage.back(), c1 = storage[1];
    int64_t pix = 1;
    for (size_t d = 2; d < logical.size(); ++d) pix *= logical[d];
    auto out = std::make_shared<ref::HostTensor>(src.type, to.shape);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t ch = 0; ch < c1 * c0; ++ch)
            for (int64_t p = 0; p < pix; ++p) {
                const int64_t s = ((i * c1 + ch / c0) * pix + p) * c0 + ch % c0;  // storage index
                if (ch >= c) continue;  // padding: zero in the storage
                const int64_t l = (i * c + ch) * pix + p;
                if (to_phys)
                    out->data[static_cast<size_t>(s)] = src.data[static_cast<size_t>(l)];
                else
                    out->data[static_cast<size_t>(l)] = src.data[static_cast<size_t>(s)];
            }
    return out;
}

}  // namespace

const ref::HostTensor* host_alias(const TrainPlan& tp, std::vector<std::shared_ptr<ref::HostTensor>>& h, int id) {
    const TrainTensor& t = tp.tensors[static_cast<size_t>(id)];
    if (h[static_cast<size_t>(id)] || t.kind != TrainTensor::Kind::Alias) return h[static_cast<size_t>(id)].get();
    const TrainTensor& from = tp.tensors[static_cast<size_t>(t.alias)];
    // A contiguous piece of a materialised tensor (Builder::alias_at).
    if (t.offset || (t.ref.strides.empty() && t.ref.format == from.ref.format && t.ref.numel() < from.ref.numel())) {
        const ref::HostTensor* src = host_alias(tp, h, t.alias);
        if (!src) throw InputError("train-step check: tensor " + std::to_string(id) + " read before it is written");
        auto out = std::make_shared<ref::HostTensor>(src->type, t.ref.shape);
        const size_t at = static_cast<size_t>(t.offset / isa::dtype_size(t.ref.dtype));
        if (at + out->data.size() > src->data.size())
            throw InputError("train-step check: tensor " + std::to_string(id) + " reads past its base");
        std::copy_n(src->data.begin() + static_cast<std::ptrdiff_t>(at), out->data.size(), out->data.begin());
        h[static_cast<size_t>(id)] = out;
        return out.get();
    }
    if (storage_view(from.ref, t.ref)) {
        const ref::HostTensor* src = host_alias(tp, h, t.alias);
        if (!src) throw InputError("train-step check: tensor " + std::to_string(id) + " read before it is written");
        h[static_cast<size_t>(id)] = restore(*src, from.ref, t.ref);
        return h[static_cast<size_t>(id)].get();
    }
    // A chain of plain views: the strides apply to the first materialised tensor up the chain.
    int a = t.alias;
    while (tp.tensors[static_cast<size_t>(a)].kind == TrainTensor::Kind::Alias && !h[static_cast<size_t>(a)] &&
           !storage_view(tp.tensors[static_cast<size_t>(tp.tensors[static_cast<size_t>(a)].alias)].ref,
                         tp.tensors[static_cast<size_t>(a)].ref))
        a = tp.tensors[static_cast<size_t>(a)].alias;
    const ref::HostTensor* src = host_alias(tp, h, a);
    if (!src) throw InputError("train-step check: tensor " + std::to_string(id) + " read before it is written");
    h[static_cast<size_t>(id)] = view_of(*src, t.ref);
    return h[static_cast<size_t>(id)].get();
}

nlohmann::json train_layout_json(const Plan& p, const TrainPlan& tp) {
    nlohmann::json j;
    for (const PassReport& r : p.passes) {
        if (r.name != "layout") continue;
        j["enabled"] = r.enabled;
        auto get = [&](const char* k) {
            auto it = r.patterns.find(k);
            return it == r.patterns.end() ? 0 : it->second;
        };
        j["forward"] = {{"before", get("conversions before (each Conv's X)")},
                        {"after", get("conversions after")},
                        {"saved", get("conversions saved")},
                        {"notes", r.notes}};
    }
    const TrainLayout& l = tp.layout;
    const int after = l.transdata + l.in_kernel;
    j["backward"] = {{"before", l.before},     {"after", after},         {"saved", l.before - after},
                     {"transdata", l.transdata}, {"in_kernel", l.in_kernel}, {"items_in_nc1hwc0", l.kept}};
    return j;
}

}  // namespace sfumato::graph
