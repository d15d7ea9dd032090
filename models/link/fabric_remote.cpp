// The fabric split by chip over window-synchronised ranks (Fabric::distribute, sim/window_sync.h).
// Each chip's part holds the channels it sends on (a switch downlink: the receiving chip's), its
// flows' state at the source (window, credits, engine) and proxies for other chips' flows whose
// packets cross its channels or land in its memory. A packet leaving a part for another travels
// as a message stamped with its arrival (after the channel's serialisation and latency), and so
// do the credit returned after the destination's write, notifies, and a pull's request and
// completion. Every hand-off between two chips goes this way on one rank as on many, so the run
// does not depend on how the chips are spread over ranks.
#include "models/link/fabric.h"

#include <cstring>

#include "sim/error.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato {

uint64_t Fabric::lookahead_ps(const Topology& t) {
    uint64_t m = ~uint64_t(0);
    for (const ChannelSpec& c : t.channels) m = std::min(m, c.latency_ps);
    return m;
}

void Fabric::distribute(WindowSync& sync) {
    if (sync.endpoints() != m_chips.size())
        throw ModelError(name(), "a window sync of " + std::to_string(sync.endpoints()) + " endpoints for " +
                                     std::to_string(m_chips.size()) + " chips");
    if (lookahead_ps(m_topo) < sync.lookahead_ps())
        throw ModelError(name(), "a window longer than the smallest link latency");
    m_sync = &sync;
    m_port.f = this;
    m_port_id = sync.bind(&m_port);
    m_next_uid.assign(m_chips.size(), 0);
}

uint32_t Fabric::channel_owner(uint32_t ch) const {
    const ChannelSpec& c = m_ch[ch].spec;
    return c.kind == ChannelSpec::Kind::NicDown ? c.dst : c.src;
}

uint32_t Fabric::stage_owner(const Flow* f, uint32_t hop) const {
    return hop < f->route->size() ? channel_owner((*f->route)[hop]) : f->dst;
}

void Fabric::post(uint64_t tick, uint32_t from, uint32_t to, Msg kind, std::vector<uint64_t> words) {
    RemoteMsg m;
    m.tick = tick;
    m.src = from;
    m.dst = to;
    m.port = m_port_id;
    m.kind = kind;
    m.words = std::move(words);
    m_sync->post(std::move(m));
}

// A flow's bytes leave this part (handed on, or written and acknowledged): a proxy whose bytes
// have all left is done here.
void Fabric::pass_bytes(Flow* f, uint64_t bytes) {
    if (!f->proxy) return;
    f->passed += bytes;
    if (f->passed < f->copy.bytes) return;
    m_proxies.erase({f->at, f->src, f->uid});
    m_free_flows.push_back(f);
}

// The packet sent on channel ch arrives at arrive_tick; when the next stage is another chip's,
// it goes there as a message (true) instead of a local event.
bool Fabric::handoff(Packet* p, uint32_t ch, uint64_t arrive_tick) {
    Flow* f = p->flow;
    const uint32_t here = channel_owner(ch), next = stage_owner(f, p->hop + 1);
    if (next == here) return false;
    std::vector<uint64_t> w = {f->src,           f->dst, f->uid, f->copy.bytes, f->copy.dev_dst, f->copy.reduce_op,
                               f->copy.reduce_dtype, p->off, p->bytes, p->hop + 1u};
    if (!p->data.empty()) {  // functional: the bytes, eight to a word
        w.resize(10 + (p->data.size() + 7) / 8, 0);
        std::memcpy(w.data() + 10, p->data.data(), p->data.size());
    }
    post(arrive_tick, here, next, kMsgPacket, std::move(w));
    pass_bytes(f, p->bytes);
    free_packet(p);
    return true;
}

// Functional mode: the packet's bytes as its read from the source completes.
void Fabric::carry_data(Packet* p) {
    const IBackingStore* gm = m_chips[p->flow->src].gm;
    if (!gm) return;
    p->data.resize(p->bytes);
    gm->read(p->flow->copy.dev_src + p->off, p->data.data(), p->bytes);
}

// Written at the destination (always another chip's part than the source's): functional mode
// stores (or reduces) the packet's bytes now; the credit goes back one route latency later.
void Fabric::remote_written(Packet* p) {
    Flow* f = p->flow;
    if (IBackingStore* gm = m_chips[f->dst].gm; gm && !p->data.empty()) {
        if (f->copy.reduce_op != 0) {
            std::vector<uint8_t> old(p->data.size());
            gm->read(f->copy.dev_dst + p->off, old.data(), old.size());
            reduce_into(p->data, old, f->copy.reduce_op, static_cast<isa::DType>(f->copy.reduce_dtype));
        }
        gm->write(f->copy.dev_dst + p->off, p->data.data(), p->data.size());
    }
    post(now_tick().v + f->ack_ps, f->dst, f->src, kMsgAck, {f->uid, p->bytes});
    pass_bytes(f, p->bytes);
    free_packet(p);
}

Fabric::Flow* Fabric::proxy(uint32_t at, uint32_t src, uint32_t dst, uint64_t uid, const std::vector<uint64_t>& w) {
    auto [it, fresh] = m_proxies.try_emplace({at, src, uid}, nullptr);
    if (!fresh) return it->second;
    Flow* f = new_flow();
    f->proxy = true;
    f->at = at;
    f->src = src;
    f->dst = dst;
    f->uid = uid;
    f->copy.peer = dst;
    f->copy.bytes = w[3];
    f->copy.dev_dst = w[4];
    f->copy.reduce_op = static_cast<uint8_t>(w[5]);
    f->copy.reduce_dtype = static_cast<uint8_t>(w[6]);
    f->route = &m_topo.route(src, dst);
    f->ack_ps = m_topo.route_latency_ps(src, dst);
    f->hops.assign(f->route->size(), Hop{});
    it->second = f;
    return f;
}

// A pull, issued by chip copy.peer: its request reaches the source chip one route latency later
// and the flow runs there; the issuer keeps its client until the completion comes back.
void Fabric::start_remote_pull(uint32_t src, const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) {
    const uint32_t issuer = copy.peer;
    const uint64_t id = m_next_pull++;
    m_pulls[id] = {&client, cookie};
    work_begin();
    post(now_tick().v + m_topo.route_latency_ps(issuer, src), issuer, src, kMsgPullStart,
         {id, copy.dev_src, copy.dev_dst, copy.bytes, copy.reduce_op, copy.reduce_dtype});
}

void Fabric::pull_done(uint64_t id) {
    auto it = m_pulls.find(id);
    if (it == m_pulls.end()) throw ModelError(name(), "the completion of an unknown pull");
    const auto [client, cookie] = it->second;
    m_pulls.erase(it);
    work_end();
    client->dma_done(cookie);
}

void Fabric::deliver(const RemoteMsg& m) {
    const auto& w = m.words;
    auto need = [&](size_t n) {
        if (w.size() != n) throw ModelError(name(), "a malformed message of kind " + std::to_string(m.kind));
    };
    switch (static_cast<Msg>(m.kind)) {
        case kMsgPacket: {
            if (w.size() < 10 || (w.size() > 10 && w.size() != 10 + (w[8] + 7) / 8)) need(10);
            Flow* f = proxy(m.dst, static_cast<uint32_t>(w[0]), static_cast<uint32_t>(w[1]), w[2], w);
            Packet* p = new_packet();
            p->flow = f;
            p->off = w[7];
            p->bytes = static_cast<uint32_t>(w[8]);
            p->data.resize(w.size() > 10 ? p->bytes : 0);
            if (w.size() > 10) std::memcpy(p->data.data(), w.data() + 10, p->bytes);
            p->hop = static_cast<uint32_t>(w[9]) - 1;  // arrive() steps it on
            push(m.tick, kArrive, p, 0);
            break;
        }
        case kMsgAck: {
            need(2);
            auto it = m_by_uid.find((uint64_t(m.dst) << 40) | w[0]);
            if (it == m_by_uid.end()) throw ModelError(name(), "a credit for an unknown flow of chip " + std::to_string(m.dst));
            Packet* p = new_packet();
            p->flow = it->second;
            p->bytes = static_cast<uint32_t>(w[1]);
            push(m.tick, kAck, p, 0);
            break;
        }
        case kMsgNotify:
            need(1);
            push(m.tick, kNotify, reinterpret_cast<void*>(static_cast<uintptr_t>(w[0])), m.dst);
            break;
        case kMsgPullStart: {
            need(6);
            Flow* f = new_flow();
            f->src = m.dst;
            f->dst = m.src;
            f->pull_issuer = m.src;
            f->pull_id = w[0];
            f->copy.dir = CopyDir::P2P;
            f->copy.pull = true;
            f->copy.peer = m.src;
            f->copy.dev_src = w[1];
            f->copy.dev_dst = w[2];
            f->copy.bytes = w[3];
            f->copy.reduce_op = static_cast<uint8_t>(w[4]);
            f->copy.reduce_dtype = static_cast<uint8_t>(w[5]);
            push(m.tick, kPullStart, f, 0);
            break;
        }
        case kMsgPullDone:
            need(1);
            push(m.tick, kPullDone, reinterpret_cast<void*>(static_cast<uintptr_t>(w[0])), 0);
            break;
        default: throw ModelError(name(), "a message of unknown kind " + std::to_string(m.kind));
    }
}

}  // namespace sfumato
