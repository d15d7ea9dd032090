// The links between chips and the peer DMA that moves data over them. Abstraction: a peer copy
// is a flow of packets, one per source L2 line (payload up to the line, plus a per-packet header
// on the wire for every packet_bytes of payload). The source chip's peer DMA engine reads each
// packet from its memory system (its own memory port, so reads contend with the chip's cores
// for L2 and HBM), the packet crosses the route's channels one after the other, and the
// destination writes it into its memory system. A channel (one direction of a link, a NIC uplink
// or a switch downlink) sends one packet at a time at its wire bandwidth and delivers it one
// latency later; flows with packets waiting at a channel take turns packet by packet (round
// robin), so concurrent transfers share a link fairly. Each flow keeps at most window_bytes in
// flight, returned as credits one route latency after a packet is written (end-to-end flow
// control), and a chip runs at most `engines` flows at once (more wait in order). Notifies
// travel a route's latency with no bandwidth. Per channel: payload and wire bytes, packets, busy
// time (stats), and its busy periods as slices on a track of the "links" process (trace).
// A copy may reduce into its destination (MemcpyDesc::reduce_op, the SDMA's inline reduction):
// its packets are written as atomic adds, which the destination's L2 serves as a read-modify-write,
// and the data is combined element by element when the copy completes. A pull (MemcpyDesc::pull,
// issued by the destination chip) runs as a flow from the source chip; simplified: it takes an
// engine of the source chip and its read request's trip over the link is not charged.
// Functional data moves when a copy completes, so timing mode costs the same cycles.
// Simplified: store-and-forward per packet at intermediate chips and the switch, no packet loss
// or retransmission, no link-level credit stalls (buffers deep enough for the windows).
#pragma once
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <systemc>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "isa/dtype.h"
#include "models/link/i_fabric.h"
#include "models/link/system_params.h"
#include "models/link/topology.h"
#include "models/mem/event_wheel.h"
#include "sim/mem_if.h"
#include "sim/stats.h"
#include "sim/trace.h"
#include "sim/window_sync.h"

namespace sfumato {

class Fabric : public sc_core::sc_module, public IFabric, public IMemClient {
public:
    SC_HAS_PROCESS(Fabric);
    Fabric(sc_core::sc_module_name name, const SystemParams& p, Topology topo, StatGroup& parent, TraceHub* trace);
    ~Fabric() override;

    // Chip `chip`'s side: its memory (memory ports [first_port, first_port + ports) are the
    // fabric's), the L2 line size packets follow, its backing store (null in timing mode) and
    // where its notifies arrive.
    void attach(uint32_t chip, IMemTarget& mem, uint32_t first_port, uint32_t ports, uint32_t line_bytes,
                IBackingStore* gm, INotifySink& notify);

    void start_peer_copy(uint32_t src, const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie) override;
    void send_notify(uint32_t src, uint32_t dst, uint32_t slot) override;
    void mem_done(MemRequest& r) override;

    // Splits the fabric by chip over the ranks of `sync` (sim/window_sync.h; fabric_remote.cpp):
    // every hand-off from one chip's part to another's becomes a message that takes effect a
    // latency later (a packet onto a channel another chip sends on, or into its destination's
    // memory; a credit back to the source; a notify; a pull's request and its completion), on one
    // rank or several alike. A channel is its sending chip's (a switch downlink: the receiving
    // chip's). Unlike the one-process fabric, a pull's request travels the route's latency to the
    // source and its completion back. In functional mode a packet carries its bytes, read from the
    // source when its read completes and written (or reduced) into the destination with it,
    // instead of the whole copy at its end. Before the simulation starts.
    void distribute(WindowSync& sync);
    // The smallest latency between two chips' parts: every channel's one-way latency.
    static uint64_t lookahead_ps(const Topology& t);

    const Topology& topology() const { return m_topo; }
    StatGroup& stats() { return m_stats; }
    struct ChannelCounters {
        uint64_t payload_bytes = 0, wire_bytes = 0, packets = 0, busy_ps = 0;
    };
    ChannelCounters counters(size_t channel) const;
    // Peer copies started and not finished, one line each (deadlock reports).
    std::vector<std::string> pending() const;

private:
    struct Flow;
    struct Packet {
        MemRequest req;
        Flow* flow = nullptr;
        uint64_t off = 0;
        uint32_t bytes = 0, wire = 0;
        uint32_t hop = 0;
        Packet* next = nullptr;
        std::vector<uint8_t> data;  // distributed functional mode: the bytes it carries
    };
    struct Hop {
        Packet* head = nullptr;
        Packet* tail = nullptr;
        bool in_rr = false;
    };
    struct Flow {
        uint32_t src = 0, dst = 0, engine = 0;
        MemcpyDesc copy;
        IDmaClient* client = nullptr;
        uint64_t cookie = 0;
        const std::vector<uint32_t>* route = nullptr;
        uint64_t ack_ps = 0;
        uint64_t next_off = 0, inflight = 0, done = 0;
        std::vector<Hop> hops;
        // Distributed (fabric_remote.cpp): the source's id of the flow; a proxy stands for a
        // flow of another chip's part at chip `at` and counts the bytes it has handed on.
        uint64_t uid = 0;
        bool proxy = false;
        uint32_t at = 0;
        uint64_t passed = 0;
        uint32_t pull_issuer = ~0u;  // a pull whose issuer is told by message
        uint64_t pull_id = 0;
    };
    struct ChipEnd {
        IMemTarget* mem = nullptr;
        uint32_t first_port = 0, ports = 1, line = 512;
        IBackingStore* gm = nullptr;
        INotifySink* notify = nullptr;
        std::vector<uint32_t> free_engines;
        std::deque<Flow*> waiting;
        std::vector<Flow*> active;
    };
    struct Channel {
        ChannelSpec spec;
        double ps_per_byte = 0;
        std::deque<std::pair<Flow*, uint32_t>> rr;  // (flow, hop) with packets waiting here
        bool busy = false;
        uint64_t busy_since = 0, period_bytes = 0;
        TrackId track = 0;
        std::unique_ptr<StatGroup> stats;
        std::unique_ptr<Counter> payload, wire, packets, busy_ps;
        std::unique_ptr<Formula> utilisation;
    };
    enum Ev : uint8_t { kTxDone, kArrive, kAck, kNotify, kFlowDone, kPullStart, kPullDone };
    enum Msg : uint16_t { kMsgPacket, kMsgAck, kMsgNotify, kMsgPullStart, kMsgPullDone };
    struct Port : IRemotePort {
        Fabric* f = nullptr;
        void deliver(const RemoteMsg& m) override { f->deliver(m); }
    };

    void process();
    void push(uint64_t tick, Ev kind, void* ptr, uint32_t arg);
    void begin_flow(Flow* f);
    void pump(Flow* f);
    void enqueue(Packet* p);
    void start_tx(uint32_t ch);
    void tx_done(uint32_t ch);
    void arrive(Packet* p);
    void ack(Packet* p);
    void finish_flow(Flow* f);
    static void reduce_into(std::vector<uint8_t>& data, const std::vector<uint8_t>& old, uint8_t op, isa::DType t);
    Packet* new_packet();
    void free_packet(Packet* p);
    Flow* new_flow();
    // Distributed (fabric_remote.cpp).
    uint32_t channel_owner(uint32_t ch) const;
    uint32_t stage_owner(const Flow* f, uint32_t hop) const;  // hop == route size: the write
    void deliver(const RemoteMsg& m);
    void post(uint64_t tick, uint32_t from, uint32_t to, Msg kind, std::vector<uint64_t> words);
    bool handoff(Packet* p, uint32_t ch, uint64_t arrive_tick);
    void remote_written(Packet* p);
    void carry_data(Packet* p);
    void start_remote_pull(uint32_t src, const MemcpyDesc& copy, IDmaClient& client, uint64_t cookie);
    void launch(Flow* f);
    void pass_bytes(Flow* f, uint64_t bytes);
    Flow* proxy(uint32_t at, uint32_t src, uint32_t dst, uint64_t uid, const std::vector<uint64_t>& w);
    void pull_done(uint64_t id);

    const SystemParams& m_p;
    Topology m_topo;
    TraceHub* m_trace;
    std::vector<ChipEnd> m_chips;
    std::vector<Channel> m_ch;
    std::deque<Packet> m_packet_store;
    Packet* m_free_packets = nullptr;
    std::vector<std::unique_ptr<Flow>> m_flows;
    std::vector<Flow*> m_free_flows;
    mem::EventWheel m_events;
    sc_core::sc_event m_wake;
    uint64_t m_scheduled = ~uint64_t(0);
    bool m_in_process = false;
    StatGroup m_stats;
    Counter m_copies, m_bytes, m_notifies;
    WindowSync* m_sync = nullptr;
    Port m_port;
    uint16_t m_port_id = 0;
    std::vector<uint64_t> m_next_uid;                                   // per source chip
    std::unordered_map<uint64_t, Flow*> m_by_uid;                       // (source, uid) -> flow
    std::map<std::tuple<uint32_t, uint32_t, uint64_t>, Flow*> m_proxies;  // (at, source, uid)
    std::unordered_map<uint64_t, std::pair<IDmaClient*, uint64_t>> m_pulls;  // id -> issuer's client
    uint64_t m_next_pull = 0;
};

}  // namespace sfumato
