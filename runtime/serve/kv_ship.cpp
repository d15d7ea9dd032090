// Disaggregated prefill/decode (runtime/serve/cluster.h): the KV of each prompt moves to its
// decode instance layer by layer while the prefill steps compute it, as a layer-wise KV
// connector does. Before a prefill step runs, each prompt piece in it (tokens not yet sent) is
// noted, its decode instance picked at the request's first piece; in the step, once layer L's
// paged attention (which writes the piece's K and V into the cache) is issued, the prefill host
// program records an event behind it on the compute stream, makes its KV stream wait for it and
// posts the layer's copies, K and V of every piece's blocks, in one batched peer-copy call per
// decode chip (Context::memcpy_peer_batch: one host call, a copy task per block segment), so
// the copies of layer L run over the links while layers L+1.. compute. At the step's end a
// request whose prompt is done is handed off by a host callback behind its copies on the KV
// stream.
#include <algorithm>
#include <systemc>

#include "runtime/llm/step_graph.h"
#include "runtime/serve/cluster.h"
#include "runtime/serve/cluster_parts.h"
#include "sim/error.h"
#include "sim/sc_time_util.h"

namespace sfumato::serve {

// In the prefill instance's host thread, before the step's first launch.
void ServeCluster::step_starting(size_t from, const std::vector<StepItem>& items) {
    const size_t p = static_cast<size_t>(m_s.prefill_instances);
    std::vector<Piece>& pieces = m_pieces.at(from);
    pieces.clear();
    for (const StepItem& it : items) {
        const Request& q = m_trace.requests[it.request];
        if (!it.prefill || q.output_tokens < 2) continue;  // a one-token request finishes here
        KvTransfer& x = m_xfer[it.request];
        if (x.decode < 0) {
            const size_t d = pick_decode();
            x.decode = static_cast<int64_t>(p + d);
            m_dec_pending[d] += q.output_tokens - 1;
        }
        // Tokens before the piece not yet sent: a prefix-cache hit (taken, not computed); after
        // a preemption the recomputed tokens were sent already.
        const int64_t to = std::min(it.context + it.tokens, q.prompt_tokens);
        if (to <= x.shipped) continue;
        pieces.push_back(Piece{it.request, static_cast<size_t>(x.decode), x.shipped, to, it.blocks});
        x.shipped = to;
    }
}

// In the host thread of rank `rank` of the prefill instance, right after layer `layer`'s attention
// is issued: its KV shard of the layer (its KV heads) goes to the same rank of each decode
// instance, which holds the same heads (one TP size for every instance).
void ServeCluster::ship_layer(size_t from, uint32_t rank, int64_t layer, uint32_t compute_stream) {
    const std::vector<Piece>& pieces = m_pieces.at(from);
    if (pieces.empty()) return;
    rt::Context& ctx = *m_ctx[from].at(rank);
    const uint32_t kv = m_kv_stream[from].at(rank);
    auto check = [&](rt::Status st, const std::string& what) {
        if (st != rt::Status::Ok)
            throw SimError(kExitFailure, "serve: KV transfer (" + what + "): " + ctx.last_error());
    };
    check(ctx.event_record(m_layer_event[from][rank], compute_stream), "layer event");
    check(ctx.stream_wait_event(kv, m_layer_event[from][rank]), "layer wait");
    const llm::LlmRun& src = m_inst[from]->chip_engine(rank);
    const int64_t bs = m_s.sched.block_size;
    const uint64_t token_bytes = static_cast<uint64_t>(src.config().kv_size()) * 2;  // one of K, V (16-bit)
    const uint64_t region_block = static_cast<uint64_t>(bs) * token_bytes;
    // One call per decode chip, in the order the pieces name them.
    std::vector<size_t> dests;
    for (const Piece& pc : pieces)
        if (std::find(dests.begin(), dests.end(), pc.decode) == dests.end()) dests.push_back(pc.decode);
    for (size_t to : dests) {
        const llm::LlmRun& dst = m_inst[to]->chip_engine(rank);
        const int64_t dst_blocks = dst.memory().kv_blocks;
        std::vector<rt::Context::PeerSegment> segs;
        std::vector<size_t> owner;
        for (const Piece& pc : pieces) {
            if (pc.decode != to) continue;
            for (const char* kind : {"k_cache", "v_cache"}) {
                const uint64_t s0 = src.address(llm::layer_tensor(layer, kind));
                const uint64_t d0 = dst.address(llm::layer_tensor(layer, kind));
                for (int64_t t = pc.from; t < pc.to;) {
                    const int64_t b = t / bs, in = t % bs, n = std::min(bs - in, pc.to - t);
                    const uint64_t off = static_cast<uint64_t>(in) * token_bytes;
                    const uint64_t sb = static_cast<uint64_t>(pc.blocks.at(static_cast<size_t>(b)));
                    segs.push_back({d0 + (sb % static_cast<uint64_t>(dst_blocks)) * region_block + off,
                                    s0 + sb * region_block + off, static_cast<uint64_t>(n) * token_bytes});
                    owner.push_back(pc.id);
                    t += n;
                }
            }
        }
        check(ctx.memcpy_peer_batch(*m_dev[to].at(rank), segs, kv), "layer " + std::to_string(layer));
        ++m_copy_calls;
        const std::vector<rt::TaskRecord>& rec = ctx.tasks();
        for (size_t k = 0; k < segs.size(); ++k) {
            const std::shared_ptr<Task>& t = rec[rec.size() - segs.size() + k].task;
            KvTransfer& x = m_xfer[owner[k]];
            x.bytes += segs[k].bytes;
            ++x.copies;
            m_req_tasks[owner[k]].push_back(t);
            if (m_s.export_profile) m_copy_tasks.push_back(t);
        }
    }
    // A step's last layer: each follower rank reports its copies to rank 0's KV stream, which
    // waits for every report before the step's hand-offs (queued behind on it).
    if (layer + 1 != src.end_layer() || m_group[from].size() < 2) return;
    if (rank > 0) {
        check(ctx.notify_record(*m_dev[from][0], m_done_slot[from].at(rank), kv), "copies done");
        return;
    }
    for (size_t f = 1; f < m_group[from].size(); ++f)
        check(ctx.notify_wait(m_done_slot[from][f], kv), "ranks' copies");
}

// In the prefill instance's host thread, at the end of the step that computed the prompt: the
// hand-off waits on the KV stream behind the request's copies.
void ServeCluster::hand_off(size_t from, size_t id, double now_s, const RequestResult& so_far) {
    const size_t p = static_cast<size_t>(m_s.prefill_instances);
    KvTransfer& x = m_xfer[id];
    if (x.decode < 0 || x.shipped < m_trace.requests[id].prompt_tokens)
        throw SimError(kExitFailure,
                       "serve: request " + m_trace.requests[id].id + " prefilled with its KV not sent");
    const size_t d = static_cast<size_t>(x.decode) - p;
    m_carried[id] = so_far;
    x.issued_s = now_s;
    ++m_in_flight;
    rt::Context& ctx = *m_ctx[from][0];
    const rt::Status st = ctx.launch_host_func(m_kv_stream[from][0], [this, id, d] {
        KvTransfer& k = m_xfer[id];
        k.done_s = static_cast<double>(now_tick().v - m_origin_ps) * 1e-12;
        uint64_t b = UINT64_MAX, e = 0;
        for (const auto& t : m_req_tasks[id])
            b = std::min(b, t->start_tick.v), e = std::max(e, t->end_tick.v);
        if (e > 0) {
            k.copy_begin_s = static_cast<double>(b - m_origin_ps) * 1e-12;
            k.copy_end_s = static_cast<double>(e - m_origin_ps) * 1e-12;
        }
        m_req_tasks.erase(id);
        --m_in_flight;
        m_dports[d]->deliver(id);
        m_sh->delivered.notify(sc_core::SC_ZERO_TIME);
    });
    if (st != rt::Status::Ok)
        throw SimError(kExitFailure,
                       "serve: KV transfer of request " + m_trace.requests[id].id + ": " + ctx.last_error());
}

}  // namespace sfumato::serve
