#include "models/link/fabric.h"

#include <algorithm>
#include <cstring>

#include "isa/dtype.h"
#include "sim/error.h"
#include "sim/failure.h"
#include "sim/progress.h"
#include "sim/sc_time_util.h"

namespace sfumato {

namespace {
std::string stat_name(const ChannelSpec& c) {
    std::string s;
    for (char ch : c.name) {
        if (ch == '>') continue;
        s += ch == '.' ? '-' : ch;
    }
    return s;
}
}  // namespace

Fabric::Fabric(sc_core::sc_module_name name, const SystemParams& p, Topology topo, StatGroup& parent, TraceHub* trace)
    : sc_core::sc_module(name),
      m_p(p),
      m_topo(std::move(topo)),
      m_trace(trace),
      m_chips(m_topo.chips),
      m_ch(m_topo.channels.size()),
      m_stats(&parent, basename()),
      m_copies(m_stats, "copies", "copy", "peer copies completed"),
      m_bytes(m_stats, "bytes", "B", "bytes moved by peer copies"),
      m_notifies(m_stats, "notifies", "notify", "notifies delivered") {
    for (size_t i = 0; i < m_ch.size(); ++i) {
        Channel& c = m_ch[i];
        c.spec = m_topo.channels[i];
        c.ps_per_byte = 1000.0 / c.spec.gbps;
        c.stats = std::make_unique<StatGroup>(&m_stats, stat_name(c.spec));
        c.payload = std::make_unique<Counter>(*c.stats, "bytes", "B", "payload bytes carried");
        c.wire = std::make_unique<Counter>(*c.stats, "wire_bytes", "B", "bytes on the wire (payload + packet headers)");
        c.packets = std::make_unique<Counter>(*c.stats, "packets", "packet", "packets sent");
        c.busy_ps = std::make_unique<Counter>(*c.stats, "busy_ps", "ps", "time spent sending packets");
        Counter* busy = c.busy_ps.get();
        c.utilisation = std::make_unique<Formula>(*c.stats, "utilisation", "ratio", "busy time / simulated time", [busy] {
            const uint64_t now = now_tick().v;
            return now ? static_cast<double>(busy->value()) / static_cast<double>(now) : 0.0;
        });
        if (m_trace && m_trace->on(TraceLevel::Task)) c.track = m_trace->sink()->track("links", c.spec.name, static_cast<int>(i));
    }
    SC_METHOD(process);
    sensitive << m_wake;
    dont_initialize();
}

Fabric::~Fabric() = default;

void Fabric::attach(uint32_t chip, IMemTarget& mem, uint32_t first_port, uint32_t ports, uint32_t line_bytes,
                    IBackingStore* gm, INotifySink& notify) {
    ChipEnd& e = m_chips.at(chip);
    e.mem = &mem;
    e.first_port = first_port;
    e.ports = ports;
    e.line = line_bytes;
    e.gm = gm;
    e.notify = &notify;
    e.free_engines.clear();
    for (uint32_t i = m_p.dma_engines; i-- > 0;) e.free_engines.push_back(i);
}

Fabric::ChannelCounters Fabric::counters(size_t i) const {
    const Channel& c = m_ch[i];
    return {c.payload->value(), c.wire->value(), c.packets->value(), c.busy_ps->value()};
}

void Fabric::push(uint64_t tick, Ev kind, void* ptr, uint32_t arg) {
    m_events.push(tick, ptr, arg, kind);
    if (!m_in_process && tick < m_scheduled) {
        m_scheduled = tick;
        const uint64_t now = now_tick().v;
        m_wake.notify(to_sc_time(Tick(tick > now ? tick - now : 0)));
    }
}

Fabric::Packet* Fabric::new_packet() {
    if (m_free_packets) {
        Packet* p = m_free_packets;
        m_free_packets = p->next;
        p->next = nullptr;
        return p;
    }
    m_packet_store.emplace_back();
    return &m_packet_store.back();
}

void Fabric::free_packet(Packet* p) {
    p->data.clear();
    p->next = m_free_packets;
    m_free_packets = p;
}

Fabric::Flow* Fabric::new_flow() {
    Flow* f;
    if (m_free_flows.empty()) {
        m_flows.push_back(std::make_unique<Flow>());
        f = m_flows.back().get();
    } else {
        f = m_free_flows.back();
        m_free_flows.pop_back();
    }
    *f = Flow{};
    return f;
}

void Fabric::start_peer_copy(uint32_t src, const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) {
    if (src >= m_chips.size() || copy.peer >= m_chips.size())
        throw ModelError(name(), "peer copy between chips " + std::to_string(src) + " and " + std::to_string(copy.peer) +
                                     " of a " + std::to_string(m_chips.size()) + "-chip system");
    if (copy.peer == src) throw ModelError(name(), "peer copy from chip " + std::to_string(src) + " to itself");
    if (m_sync && copy.pull) {
        start_remote_pull(src, copy, client, cookie);
        return;
    }
    Flow* f = new_flow();
    f->src = src;
    f->dst = copy.peer;
    f->copy = copy;
    f->client = &client;
    f->cookie = cookie;
    launch(f);
}

// The flow starts at its source: queued for an engine or begun.
void Fabric::launch(Flow* f) {
    f->route = &m_topo.route(f->src, f->dst);
    f->ack_ps = m_topo.route_latency_ps(f->src, f->dst);
    f->hops.assign(f->route->size(), Hop{});
    if (m_sync) {
        f->uid = m_next_uid[f->src]++;
        m_by_uid[(uint64_t(f->src) << 40) | f->uid] = f;
    }
    work_begin();  // a long transfer is progress for the deadlock detector
    ChipEnd& e = m_chips[f->src];
    if (e.free_engines.empty()) {
        e.waiting.push_back(f);
        return;
    }
    begin_flow(f);
}

void Fabric::begin_flow(Flow* f) {
    ChipEnd& e = m_chips[f->src];
    f->engine = e.free_engines.back();
    e.free_engines.pop_back();
    e.active.push_back(f);
    if (f->copy.bytes == 0) {
        push(now_tick().v + f->ack_ps, kFlowDone, f, 0);
        return;
    }
    pump(f);
}

// Reads the flow's next packets from the source memory while its window allows.
void Fabric::pump(Flow* f) {
    const ChipEnd& e = m_chips[f->src];
    const uint64_t window = m_p.dma_window_bytes;
    const uint64_t now = now_tick().v;
    const ChannelSpec& first = m_ch[f->route->front()].spec;
    while (f->next_off < f->copy.bytes) {
        const uint64_t addr = f->copy.dev_src + f->next_off;
        const uint32_t len = static_cast<uint32_t>(std::min<uint64_t>(f->copy.bytes - f->next_off, e.line - addr % e.line));
        if (f->inflight > 0 && f->inflight + len > window) break;
        Packet* p = new_packet();
        p->flow = f;
        p->off = f->next_off;
        p->bytes = len;
        p->wire = len + (len + first.packet_bytes - 1) / first.packet_bytes * first.header_bytes;
        p->hop = 0;
        f->next_off += len;
        f->inflight += len;
        MemRequest& r = p->req;
        r = MemRequest{};
        r.addr = addr;
        r.bytes = len;
        r.write = false;
        r.who = Requester::SDMA;
        r.port = static_cast<uint16_t>(e.first_port + f->engine % e.ports);
        r.client = this;
        r.tag = reinterpret_cast<uintptr_t>(p);
        r.issue_tick = Tick(now);
        e.mem->submit(r);
    }
}

void Fabric::mem_done(MemRequest& r) {
    Packet* p = reinterpret_cast<Packet*>(static_cast<uintptr_t>(r.tag));
    if (!r.write) {
        if (m_sync) carry_data(p);
        enqueue(p);  // read from the source: onto the first channel
        return;
    }
    if (m_sync) {
        remote_written(p);
        return;
    }
    // Written at the destination: the credit returns to the source one route latency later.
    push(now_tick().v + p->flow->ack_ps, kAck, p, 0);
}

void Fabric::enqueue(Packet* p) {
    Flow* f = p->flow;
    const uint32_t ch = (*f->route)[p->hop];
    Hop& h = f->hops[p->hop];
    p->next = nullptr;
    if (h.tail) h.tail->next = p;
    else h.head = p;
    h.tail = p;
    Channel& c = m_ch[ch];
    if (!h.in_rr) {
        h.in_rr = true;
        c.rr.emplace_back(f, p->hop);
    }
    if (!c.busy) start_tx(ch);
}

void Fabric::start_tx(uint32_t ch) {
    Channel& c = m_ch[ch];
    const uint64_t now = now_tick().v;
    auto [f, hop] = c.rr.front();
    c.rr.pop_front();
    Hop& h = f->hops[hop];
    Packet* p = h.head;
    h.head = p->next;
    if (!h.head) h.tail = nullptr;
    if (h.head) c.rr.emplace_back(f, hop);  // take turns with the other flows
    else h.in_rr = false;
    // The wire size on this channel (its own packet size and header).
    const uint32_t wire = p->bytes + (p->bytes + c.spec.packet_bytes - 1) / c.spec.packet_bytes * c.spec.header_bytes;
    const uint64_t dur = static_cast<uint64_t>(static_cast<double>(wire) * c.ps_per_byte + 0.5);
    if (!c.busy) {
        c.busy = true;
        c.busy_since = now;
        c.period_bytes = 0;
    }
    c.period_bytes += p->bytes;
    *c.payload += p->bytes;
    *c.wire += wire;
    ++*c.packets;
    *c.busy_ps += dur;
    push(now + dur, kTxDone, nullptr, ch);
    if (m_sync && handoff(p, ch, now + dur + c.spec.latency_ps)) return;
    push(now + dur + c.spec.latency_ps, kArrive, p, 0);
}

void Fabric::tx_done(uint32_t ch) {
    Channel& c = m_ch[ch];
    if (!c.rr.empty()) {
        c.busy = false;  // start_tx reopens the period without a gap
        const uint64_t since = c.busy_since, bytes = c.period_bytes;
        start_tx(ch);
        c.busy_since = since;
        c.period_bytes += bytes;
        return;
    }
    c.busy = false;
    if (m_trace && m_trace->on(TraceLevel::Task)) {
        const TraceArg args[] = {{"bytes", static_cast<int64_t>(c.period_bytes)}};
        m_trace->sink()->slice(c.track, "busy", Tick(c.busy_since), now_tick(), args, 1);
    }
}

void Fabric::arrive(Packet* p) {
    Flow* f = p->flow;
    if (++p->hop < f->route->size()) {
        enqueue(p);
        return;
    }
    const ChipEnd& d = m_chips[f->dst];
    MemRequest& r = p->req;
    r = MemRequest{};
    r.addr = f->copy.dev_dst + p->off;
    r.bytes = p->bytes;
    r.write = true;
    r.atomic_add = f->copy.reduce_op != 0;  // an inline reduction: the L2 reads, combines, writes
    r.who = Requester::SDMA;
    r.port = static_cast<uint16_t>(d.first_port + f->src % d.ports);
    r.client = this;
    r.tag = reinterpret_cast<uintptr_t>(p);
    r.issue_tick = now_tick();
    d.mem->submit(r);
}

void Fabric::ack(Packet* p) {
    Flow* f = p->flow;
    f->inflight -= p->bytes;
    f->done += p->bytes;
    free_packet(p);
    if (f->done == f->copy.bytes) finish_flow(f);
    else pump(f);
}

namespace {
float load_elem(const uint8_t* p, isa::DType t) {
    if (t == isa::DType::FP32) {
        float v;
        std::memcpy(&v, p, 4);
        return v;
    }
    uint16_t h;
    std::memcpy(&h, p, 2);
    return t == isa::DType::BF16 ? isa::bf16_to_f32(h) : isa::f16_to_f32(h);
}
void store_elem(uint8_t* p, isa::DType t, float v) {
    if (t == isa::DType::FP32) {
        std::memcpy(p, &v, 4);
        return;
    }
    const uint16_t h = t == isa::DType::BF16 ? isa::f32_to_bf16(v) : isa::f32_to_f16(v);
    std::memcpy(p, &h, 2);
}
}  // namespace

// data[i] = data[i] op old[i] per element, rounded once to the type (fp16/bf16 sums in fp32, as
// the engine's adder, then one rounding).
void Fabric::reduce_into(std::vector<uint8_t>& data, const std::vector<uint8_t>& old, uint8_t op, isa::DType t) {
    const uint32_t es = isa::dtype_size(t);
    for (size_t i = 0; i + es <= data.size(); i += es) {
        const float a = load_elem(old.data() + i, t), b = load_elem(data.data() + i, t);
        const float v = op == 1 ? a + b : op == 2 ? std::max(a, b) : std::min(a, b);
        store_elem(data.data() + i, t, v);
    }
}

void Fabric::finish_flow(Flow* f) {
    const uint32_t e_src = f->src;
    ChipEnd& e = m_chips[f->src];
    const ChipEnd& d = m_chips[f->dst];
    if (e.gm && d.gm && f->copy.bytes && !m_sync) {  // (split: packet by packet, carry_data)
        std::vector<uint8_t> buf(f->copy.bytes);  // once per copy, not per packet
        e.gm->read(f->copy.dev_src, buf.data(), f->copy.bytes);
        if (f->copy.reduce_op != 0) {
            std::vector<uint8_t> old(f->copy.bytes);
            d.gm->read(f->copy.dev_dst, old.data(), f->copy.bytes);
            reduce_into(buf, old, f->copy.reduce_op, static_cast<isa::DType>(f->copy.reduce_dtype));
        }
        d.gm->write(f->copy.dev_dst, buf.data(), f->copy.bytes);
    }
    ++m_copies;
    m_bytes += f->copy.bytes;
    const uint32_t issuer = f->pull_issuer;
    const uint64_t pull_id = f->pull_id;
    if (m_sync) m_by_uid.erase((uint64_t(f->src) << 40) | f->uid);
    e.active.erase(std::find(e.active.begin(), e.active.end(), f));
    e.free_engines.push_back(f->engine);
    IDmaClient* client = f->client;
    const uint64_t cookie = f->cookie;
    m_free_flows.push_back(f);
    work_end();
    if (!e.waiting.empty()) {
        Flow* next = e.waiting.front();
        e.waiting.pop_front();
        begin_flow(next);
    }
    if (issuer != ~0u) {  // a pull: its issuer learns one route latency later
        post(now_tick().v + m_topo.route_latency_ps(e_src, issuer), e_src, issuer, kMsgPullDone, {pull_id});
        return;
    }
    client->dma_done(cookie);
}

void Fabric::send_notify(uint32_t src, uint32_t dst, uint32_t slot) {
    if (src >= m_chips.size() || dst >= m_chips.size() || src == dst)
        throw ModelError(name(), "notify from chip " + std::to_string(src) + " to chip " + std::to_string(dst) + " of a " +
                                     std::to_string(m_chips.size()) + "-chip system");
    if (m_sync) {
        post(now_tick().v + m_topo.route_latency_ps(src, dst), src, dst, kMsgNotify, {slot});
        return;
    }
    push(now_tick().v + m_topo.route_latency_ps(src, dst), kNotify, reinterpret_cast<void*>(static_cast<uintptr_t>(slot)), dst);
}

void Fabric::process() {
    try {
        m_in_process = true;
        const uint64_t now = now_tick().v;
        mem::WheelItem it;
        while (m_events.pop_due(now, it)) {
            switch (static_cast<Ev>(it.kind)) {
                case kTxDone: tx_done(it.arg); break;
                case kArrive: arrive(static_cast<Packet*>(it.ptr)); break;
                case kAck: ack(static_cast<Packet*>(it.ptr)); break;
                case kNotify:
                    ++m_notifies;
                    m_chips[it.arg].notify->notify_arrived(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(it.ptr)));
                    break;
                case kFlowDone: finish_flow(static_cast<Flow*>(it.ptr)); break;
                case kPullStart: launch(static_cast<Flow*>(it.ptr)); break;
                case kPullDone: pull_done(reinterpret_cast<uintptr_t>(it.ptr)); break;
            }
        }
        m_in_process = false;
        m_scheduled = m_events.next_tick();
        if (m_scheduled != mem::EventWheel::kEmpty) m_wake.notify(to_sc_time(Tick(m_scheduled - now)));
    } catch (...) {
        m_in_process = false;
        record_failure(std::current_exception());
    }
}

std::vector<std::string> Fabric::pending() const {
    std::vector<std::string> out;
    for (uint32_t c = 0; c < m_chips.size(); ++c) {
        for (const Flow* f : m_chips[c].active)
            out.push_back("peer copy chip " + std::to_string(f->src) + " -> chip " + std::to_string(f->dst) + ": " +
                          std::to_string(f->done) + " of " + std::to_string(f->copy.bytes) + " bytes done");
        for (const Flow* f : m_chips[c].waiting)
            out.push_back("peer copy chip " + std::to_string(f->src) + " -> chip " + std::to_string(f->dst) +
                          ": waits for a peer DMA engine");
    }
    return out;
}

}  // namespace sfumato
