// The chip's memory system behind the cores: per-core NoC ports into a crossbar, a sliced
// memory-side L2 (set-associative, sectored lines, write-back/write-allocate, MSHRs merging
// misses to one line), and HBM pseudo-channel controllers (hbm_channel.h). Abstraction: one
// transaction per request (at most one L2 line); every bandwidth limit is a "free at" time per
// resource (core port read/write/GM, slice port, HBM data bus) and every latency is added
// arithmetically. One SC_METHOD drains a time-ordered event wheel, so nothing runs while the
// memory is idle. Internal events (slice lookups, controller decisions, fills) closer than the
// NoC latency ahead of SystemC time run early in the current activation, in (tick, sequence)
// order and each at its own tick: no submit can reach a slice sooner, so the outcome is the same
// as waking for each; only client callbacks wait for their own SystemC time (about one
// activation per request). A client that takes its time from the request rather than from
// SystemC (membench's traffic generator) can be the run-ahead client: its completions run early
// too, so the memory system wakes about once per NoC latency. With chip.mem.completions_ahead
// (default on) the activations themselves run ahead: at the end of an instant, until the next
// activity of any other process, the activations the process would have run meanwhile run at
// once, each as it would have run, delivering the completions a pipe takes without waking
// (IMemClient::takes_ahead) and the run-ahead client's; one stops at its tick where it would be
// seen (another client's completion, the write-back that ends a flush), and the process goes on
// with it then (instant_over). A miss marks its fill's sectors
// valid when it reserves the way (the line is in the host cache then); lookups discount them
// while the MSHR is busy. The request that allocated the MSHR brought the line from HBM: its data
// returns through its core's GM port (chip.noc.core_gm_bytes_per_cycle, the per-core rate of data
// from HBM); requests merged into the fill (other cores reading the same line, or the same core
// again) issued no HBM access and are served from the slice as hits when the line lands.
// Write-back: a dirty eviction becomes an HBM write in its pseudo-channel's bounded write queue;
// while that queue is full the eviction waits (in arrival order, per channel) and so does the
// access that caused it (a write completes, a read miss issues its fill, only once the write-back
// is queued), so writers are back-pressured to the HBM's write rate.
// Simplified: the crossbar has no internal links (contention shows at core ports, slice ports
// and HBM channels); L2 writes complete at the slice (write-back); no coherence; a request merged
// into a pending fill that needs sectors the fill does not bring retries its lookup at the fill.
#pragma once
#include <array>
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <systemc>
#include <vector>

#include "models/mem/bulk_channel.h"
#include "models/mem/event_wheel.h"
#include "models/mem/fast_div.h"
#include "models/mem/hbm_channel.h"
#include "models/mem/l2_tags.h"
#include "models/mem/mem_params.h"
#include "sim/config.h"
#include "sim/mem_if.h"
#include "sim/stats.h"
#include "sim/submit_order.h"
#include "sim/traffic_replay.h"
#include "sim/sc_time_util.h"
#include "sim/trace.h"

namespace sfumato::mem {

class MemorySystem : public sc_core::sc_module, public IMemTarget, public ITrafficReplay {
public:
    SC_HAS_PROCESS(MemorySystem);
    // `ports`: memory ports (cores and engines); MemRequest::port indexes them.
    MemorySystem(sc_core::sc_module_name name, const MemSysParams& p, StatGroup* parent_stats, TraceHub* trace,
                 ClockDomain core_clock, uint32_t ports);
    ~MemorySystem() override;

    void submit(MemRequest& req) override;
    // The bulk service takes bursts (MemRequest::burst): their requests served one by one as the
    // client's slots allow, one completion per burst (memory_system_bulk.cpp).
    bool takes_bursts() const override { return m_bulk; }
    // The read-latency histogram: 5 ns buckets from 0 (a request's bucket: its latency in ps
    // divided by kLatencyBucketPs, the last bucket taking the rest).
    static constexpr uint64_t kLatencyBucketPs = 5000, kLatencyBuckets = 4000;

    // Lets `client`'s completions run ahead of SystemC time, like internal events: its
    // mem_done(r) may be called while SystemC time is still before r.done_tick (by less than the
    // NoC latency), in the same (tick, sequence) order as otherwise. The client must take the
    // time from r.done_tick, not from SystemC, and submit only from within mem_done (a submit
    // made there is timed at r.done_tick). Results are bit-identical; the memory system wakes
    // about once per NoC latency instead of once per completion tick. nullptr: none.
    void set_runahead_client(IMemClient* client) { m_runahead_client = client; }

    const HbmParams& hbm() const { return m_hbm; }
    const L2Params& l2() const { return m_l2; }
    const NocParams& noc() const { return m_noc; }
    double peak_gbps() const { return hbm_peak_gbps(m_hbm); }
    StatGroup& stats() { return m_stats; }
    // Totals for reports.
    HbmChannelStats hbm_totals() const;
    double row_hit_rate() const;
    uint64_t l2_hits() const;
    uint64_t l2_misses() const;
    double l2_hit_rate() const;
    const Histogram& read_latency() const { return m_read_latency; }
    // Written bytes not yet handed to the HBM: dirty in L2, or waiting in / for a write queue.
    // (Walks the tag arrays: for end-of-run reports, not hot paths.)
    uint64_t unwritten_bytes() const;
    uint64_t writeback_stalls() const { return m_wb_stalls.value(); }
    // Times the memory system's process ran (wake-ups; for speed tests).
    uint64_t activations() const { return m_activations; }
    // Runs of activations ahead of SystemC time from the end of an instant (instant_over; for
    // speed tests).
    uint64_t ahead_batches() const { return m_ahead_batches; }
    // Off: every activation runs at its SystemC time (the reference running ahead must equal).
    // From chip.mem.completions_ahead; the bulk service never runs ahead.
    void set_clients_ahead(bool on) { m_clients_ahead = on; }
    // Cache flush: every dirty L2 line is written back (into the HBM write queues, as evictions
    // are) and every line invalidated, now. Call while no request is outstanding (the device is
    // idle); throws ModelError otherwise. The write-backs drain in simulated time:
    // writebacks_pending() counts those not yet written to HBM, and writebacks_drained() is
    // notified when it reaches 0.
    void flush_l2();
    uint64_t writebacks_pending() const { return m_wb_pending; }
    const sc_core::sc_event& writebacks_drained() const { return m_wb_drained; }
    // The traffic of kernels that were not simulated (timing re-use stand-ins), applied to the
    // tags at once and untimed (memory_system_replay.cpp); the HBM bytes it implies go to the
    // standin_* counters, not to the channels.
    void replay_traffic(const std::vector<GmRange>& ranges) override;
    // Applies replayed traffic line by line, in range order within each slice, however the policy
    // keeps its state: the reference the set-by-set path must equal (for tests).
    void set_replay_per_line(bool on) { m_replay_per_line = on; }
    // Off: every part of a request spanning several L2 lines waits for its SystemC time, as a
    // client's completion does (the reference the run-ahead parts must equal; for tests).
    void set_parts_run_ahead(bool on) { m_parts_run_ahead = on; }
    // chip.mem.service = bulk (memory_system_bulk.cpp): each request served at once.
    bool bulk() const { return m_bulk; }
    // Emits the last partial trace window (call at the end of a run).
    void flush_trace();
    // chip.mem.threads (memory_system_mt.cpp): whether the HBM controllers run on a second host
    // thread (the same cycles either way), and whether they do now (they go back to one thread
    // for good at the first write-back or state query).
    bool two_threads() const { return m_mt; }
    // Whether it started with two (1 or 2: the host threads the run began with).
    uint32_t threads_at_start() const { return m_mtx ? 2 : 1; }
    uint64_t mt_handoffs() const { return m_mt_handoffs; }

private:
    // FillDone carries the Mshr whose fill the HBM returned, WbDone a written-back HbmReq.
    // ClientDone waits for SystemC time to reach its tick; RunaheadDone (a completion for the
    // run-ahead client) does not. PartDone completes one line of a request spanning several:
    // only the last of them to complete calls the client (it waits for its tick); the others
    // just count down, so they run early like internal events.
    // BulkDrained: the bulk service's flush write-backs have all been written.
    // BurstSpan: the bulk service issues a burst's next span (a MemRequest carrying the burst).
    // Arrival: a request reaches its slice (its first L2 lookup); pushed late (event_wheel.h), it
    // goes after the other events of its tick, whenever it was accepted (in the callback that
    // submitted it, or at the end of its instant).
    enum class Ev : uint8_t {
        L2Access,
        CtrlWake,
        FillDone,
        WbDone,
        ClientDone,
        RunaheadDone,
        PartDone,
        BulkDrained,
        BurstSpan,
        Arrival
    };
    struct Port {
        uint64_t rd_free = 0, wr_free = 0, gm_free = 0;
    };
    // What a fill's completion reads (fill_done) sits in the first host cache line; the HBM
    // request follows (the channel reads and writes it while queued and scheduled).
    struct alignas(64) Mshr {
        uint64_t line_addr = 0;
        uint64_t fetch_mask = 0;
        uint64_t valid_after = 0;  // the line's valid sectors once the fill lands
        MemRequest* head = nullptr;
        MemRequest* tail = nullptr;
        uint32_t slot = 0;   // the way reserved for the line
        uint32_t slice = 0;
        uint32_t index = 0;  // in its slice's mshrs
        bool stolen = false;  // the reserved way was evicted before the fill landed
        alignas(64) HbmReq fill;
    };
    // Line-aligned. The tags are held in place (set once, at construction), not behind a pointer:
    // every request's lookup starts with their first host line (L2Tags), and a pointer to load
    // first was a second host-cache miss in a row (submit_line's prefetch, then l2_access). What
    // else every request reads (submit_line: free; l2_access and fill_done: the free stack, the
    // blocked list, the MSHR lines) follows in one host line, the rest after.
    struct alignas(64) Slice {
        std::optional<L2Tags> tags;
        alignas(64) uint64_t free = 0;
        std::vector<Mshr*> free_mshrs;  // stack; the lowest index on top at the start
        MemRequest* blocked_head = nullptr;
        MemRequest* blocked_tail = nullptr;
        std::vector<uint64_t> mshr_line;  // per MSHR: its line while busy, else kNoLine (a compact scan)
        std::vector<Mshr> mshrs;
        static constexpr uint32_t kHash = 256;
        std::array<uint32_t, kHash> busy_hash{};  // busy MSHRs per line-address hash (a filter before the scan)
    };
    struct ReqStats {
        ReqStats(StatGroup* parent, const char* name);
        StatGroup g;
        Counter accesses, hits, misses, evictions, bytes, merges;
    };
    enum : uint32_t { kFill = 1, kWriteback = 2 };
    static constexpr uint64_t kNoLine = ~uint64_t(0);
    // A request spanning several L2 lines runs as one child request per line; the parent
    // completes with its last child. Children and their bookkeeping are pooled.
    struct Split : IMemClient {
        MemorySystem* sys = nullptr;
        MemRequest* parent = nullptr;
        uint32_t remaining = 0;
        std::vector<MemRequest> children;
        void mem_done(MemRequest& child) override;
    };
    // A request of one line accepted at `now` (submit_line(r): at the run-ahead client's tick
    // in its callbacks, else at SystemC time).
    void submit_line(MemRequest& r, uint64_t now);
    void submit_line(MemRequest& r) { submit_line(r, m_in_runahead_cb ? m_cb_tick : now_tick().v); }
    // Whether `r` lies within one L2 line (accept: then submit_line, else accept_split).
    bool one_line(const MemRequest& r) const {
        const uint32_t line = m_l2.g.line_bytes;
        return (r.addr & (line - 1)) + r.bytes <= line;  // line: a power of two
    }
    // submit()'s cases but the common one (a request to check, a burst, the bulk service, a
    // request submitted in an instant or staged after another).
    [[gnu::noinline]] void submit_other(MemRequest& r);
    // A request check_request() must look at (one it may reject, or a burst): submit()'s and
    // submit_other()'s one test.
    bool needs_check(const MemRequest& r) const {
        return r.port >= m_ports_n || r.bytes == 0 || r.addr + r.bytes > m_hbm.capacity_bytes || r.burst;
    }
    // The request entry proper: submit() checks a request and hands it to m_order, which passes
    // the requests of one instant here in an order of their own (sim/submit_order.h).
    void accept(MemRequest& r);
    // A request spanning several lines, as children (out of line: accept() stays a leaf's size).
    [[gnu::noinline]] void accept_split(MemRequest& r);
    // submit()'s checks of a request that may be bad (or a burst): throws ModelError naming it.
    [[gnu::cold, gnu::noinline]] void check_request(const MemRequest& r) const;
    // Hands the run-ahead client's staged requests over (at m_cb_tick). The common case inline
    // (one request of one line, the exact service); the rest out of line.
    void flush_runahead();
    [[gnu::noinline]] void flush_runahead_other();
    // The request in m_cb_one, if any, goes to m_order's batch of staged requests.
    void stage_one();
    Split* get_split();
    std::deque<Split> m_split_pool;
    std::vector<Split*> m_split_free;

    void process();
    // One activation's events, from `now` (process()'s SystemC time; Ahead: an activation's tick
    // run from instant_over, before SystemC time gets there) to now + m_runahead_ps - 1; returns
    // the tick of the wheel's next item. Ahead: `blocked` when it stopped at an item that needs
    // SystemC time to be `now` (instant_over).
    // MT: the two-thread mode's loop (its checks compiled out of the one-thread loop; the mode
    // never starts within a loop: mt_decide() at the first activation).
    template <bool Ahead, bool MT>
    uint64_t run_window(uint64_t now, bool& blocked);
    template <bool Ahead>
    uint64_t run_window(uint64_t now, bool& blocked) {
        return m_mt ? run_window<Ahead, true>(now, blocked) : run_window<Ahead, false>(now, blocked);
    }
    // The end-of-instant hook (SubmitOrder::set_end_hook): runs a batch ahead when it can.
    void instant_over();
    void push(uint64_t tick, Ev kind, void* ptr, uint32_t arg = 0);
    // push() from outside process() when the event is earlier than the wake-up scheduled.
    void push_waking(uint64_t tick, Ev kind, void* ptr, uint32_t arg);
    // The process's wake-up brought forward to `tick` (an event pushed from outside it).
    [[gnu::noinline]] void wake_for(uint64_t tick);
    void run_wake(const WheelItem& w, uint64_t t);
    // How a lookup came about: a request's first arrival, a retry after a fill that did not bring
    // all its sectors, or a blocked miss released by a freed MSHR (it carries that MSHR: if it
    // no longer needs one, it hands it on to the next blocked miss).
    enum : uint32_t { kFirstAccess = 0, kRetryAfterFill = 1, kReleased = 2 };
    void l2_access(MemRequest& r, uint64_t t, uint32_t how);
    // The same with the request's slice and its set there (the tags' set_of) known.
    void l2_access(MemRequest& r, uint64_t t, uint32_t how, uint32_t si, uint32_t set);
    // A request's first lookup (Ev::Arrival): its slice and set from the event's `arg`
    // (submit_line).
    void l2_arrival(MemRequest& r, uint64_t t, uint32_t arg) {
        l2_access(r, t, kFirstAccess, arg & m_arrival_slice_mask, arg >> m_arrival_shift);
    }
    // A freed MSHR (or one a released miss did not need) goes to the first blocked miss of `s`.
    void release_blocked(Slice& s, uint64_t t);
    void complete(MemRequest& r, uint64_t t);
    // Stamps a completing request and samples its read latency.
    void record_done(MemRequest& r, uint64_t t);
    void sample_read_latency(uint64_t ps);
    Mshr* find_mshr(Slice& s, uint64_t line);
    void note_eviction(Slice& s, const L2Tags::Victim& v);
    // An eviction counted and note_eviction()'d; whether its victim is dirty (to write back).
    bool evicted(Slice& s, ReqStats& st, const L2Tags::Victim& v);
    void finish_miss(MemRequest& r, uint64_t t);
    void hbm_enqueue(HbmReq& r, uint64_t t);
    void run_channel(uint32_t pc, uint64_t t);
    void fill_done(Mshr& m, uint64_t t);
    // fill_done() past its common case (the head alone, its way kept): every waiter in turn.
    [[gnu::noinline]] void fill_done_all(Mshr& m, Slice& s, uint64_t t);
    void wb_done(HbmReq& r, uint64_t t);
    enum : uint32_t { kWaitNone = 0, kWaitWrite = 1, kWaitFill = 2 };
    // Queues the write-back of `v`; returns false when it must wait for room in its channel's
    // write queue (then `waiter` is released when it is queued).
    bool write_back(const L2Tags::Victim& v, uint64_t t, void* waiter, uint32_t waiter_kind);
    // Moves waiting write-backs of channel `pc` into its write queue while there is room and
    // releases their waiters; true when any moved.
    bool release_writebacks(uint32_t pc, uint64_t t);
    void decode(HbmReq& r, uint64_t t);
    void wake_at(uint32_t pc, uint64_t t);
    // Serialisation time of `bytes` at a rate of whole bytes per core cycle.
    uint64_t ser(uint32_t bytes, const FastDiv32& bytes_per_cycle) const {
        return m_clk.ticks(bytes_per_cycle.div(bytes + bytes_per_cycle.divisor() - 1));
    }
    uint32_t slice_of(uint64_t line_addr) const {
        return m_slice_div.mod(line_addr ^ (line_addr >> 7) ^ (line_addr >> 13));
    }
    uint64_t line_of(uint64_t addr) const { return addr >> m_line_shift; }
    // L2Tags::sector_mask of the slices' geometry (m_l2.g), without reading a slice's tags object.
    uint64_t sector_mask(uint64_t addr, uint32_t bytes) const {
        return L2Tags::sector_mask(addr, bytes, m_l2.g.line_bytes, static_cast<uint32_t>(__builtin_ctz(m_l2.g.sector_bytes)));
    }
    static uint32_t mshr_hash(uint64_t line) { return static_cast<uint32_t>((line * 0x9e3779b97f4a7c15ull) >> 56); }
    void trace_tick(uint64_t t);
    void add_stat_formulas();

    // The bulk service (chip.mem.service = bulk, memory_system_bulk.cpp). A request is served
    // whole when accepted: each of its lines takes the core port, the NoC, its slice's port and
    // tags (looked up and updated now, in acceptance order), an MSHR (the earliest free of its
    // slice) and on a miss its HBM pseudo-channel (HbmChannel::serve, in acceptance order) and
    // the core's GM port, each a "free at" time; the request completes with its last line, one
    // event. Dirty victims wait per channel and are written from write_high down to write_low
    // (all when the memory goes idle); an access whose victim finds write_queue_depth writes ahead of it
    // waits until the oldest of them has left the queue.
    struct BulkMshr {
        uint64_t line = kNoLine;
        uint64_t ready = 0;  // the fill's data in the slice
    };
    // A slice as the bulk service keeps it, all slices side by side (two to a host cache line):
    // its tags, when its port is free, and its MSHRs as a ring sorted by `ready` from mshr[first]
    // (a miss takes the earliest free and most fills end after all the others: O(1), where a heap
    // moved entries on five levels both ways).
    struct BulkSlice {
        L2Tags* tags = nullptr;
        uint64_t free = 0;
        BulkMshr* mshr = nullptr;  // chip.l2.mshrs of them, in m_bulk_mshr
        uint32_t first = 0;
    };
    struct BulkWrites {
        std::vector<HbmReq> waiting;  // dirty victims not yet given to the channel, in order
        std::vector<uint64_t> left;   // ring: when each of the last write_queue_depth writes left the queue
        uint64_t count = 0;           // write-backs so far
    };
    void bulk_accept(MemRequest& r);
    // A burst (sim/mem_if.h): queued on its chain; its spans are issued one after the other as
    // the chain's slots allow, each served at its issue time as bulk_accept serves a request
    // (an internal event per span: the service still meets the requests in time order), and it
    // completes once.
    void bulk_burst(MemRequest& r);
    // Schedules the next span of the burst at the head of r's chain (r: that burst).
    void bulk_burst_next(MemRequest& r, uint64_t after);
    // Issues the next span of burst r at tick t.
    void bulk_span(MemRequest& r, uint64_t t);
    // The service's time is `now` (calendar entries long before it are dropped).
    void bulk_begin(uint32_t port, uint64_t now);
    // Serves bytes at addr of r's kind, issued at `issue`: each line through the core's port and
    // the NoC to its slice and bulk_line; returns when the last line is done.
    uint64_t bulk_request(MemRequest& r, uint64_t addr, uint32_t bytes, uint64_t issue);
    // One line of a request, reaching its slice s at `at`; returns when its data is back (a read)
    // or it is done (a write).
    uint64_t bulk_line(MemRequest& r, BulkSlice& s, uint64_t addr, uint32_t bytes, uint64_t at);
    // Queues a dirty victim's write-back at `t`; returns the earliest time the access that evicted
    // it may go on (room in the write queue).
    uint64_t bulk_write_back(const L2Tags::Victim& v, uint64_t t);
    // Serves the waiting write-backs of channel `pc` (each at its own arrival or later) but the
    // last `keep`; returns the end of the last served.
    uint64_t bulk_drain(uint32_t pc, size_t keep = 0);
    // Serves the fill `h` (decoded) arriving at t on its pseudo-channel; returns its data's end.
    uint64_t bulk_hbm(HbmReq& h, uint64_t t);
    HbmReq m_bulk_fill;  // bulk_line's fill (a scratch: served at once)
    bool m_bulk = false;
    uint64_t m_bulk_waiting = 0;  // write-backs waiting over all channels
    std::vector<BulkSlice> m_bulk_slice;             // per slice
    // ser() of a whole line at the write and read port, slice and GM rates (the divides, once;
    // the exact service's whole-line requests take them too: submit_line, finish_miss).
    uint64_t m_bulk_line_wr = 0, m_bulk_line_rd = 0, m_bulk_line_slice = 0, m_bulk_line_gm = 0;
    std::vector<BulkMshr> m_bulk_mshr;               // the slices' MSHR rings, one after the other
    std::vector<BulkWrites> m_bulk_wr;               // per channel
    std::vector<BusyCalendar> m_bulk_gm;             // per port: its GM (miss data) return path
    std::vector<BulkChannel> m_bulk_ch;              // per pseudo-channel (m_channels stay idle)
    uint64_t m_bulk_now = 0;                         // the tick of the request being served
    uint64_t m_bulk_floor = 0;                       // no request is served before it (calendars)
    uint64_t m_bulk_write_end = 0;                   // the end of the last batch bulk_drain served
    // A replayed line access: the line (bit 63: a write) and its sector mask.
    struct ReplayLine {
        uint64_t line_w = 0, mask = 0;
    };
    void replay_range(uint64_t addr, uint64_t bytes, bool write);
    void replay_line(Slice& s, uint64_t line, uint64_t mask, bool write);
    // The tail of replay_traffic's ranges from range `first` (less its first `skip_in_first`
    // bytes), grouped by set and applied set by set (memory_system_replay.cpp).
    void replay_by_set(const std::vector<GmRange>& ranges, size_t first, uint64_t skip_in_first);

    HbmParams m_hbm;
    L2Params m_l2;
    NocParams m_noc;
    ClockDomain m_clk;
    uint32_t m_ports_n;
    TraceHub* m_trace;
    uint64_t m_frontend_ps;
    uint64_t m_noc_ps, m_hit_ps;
    uint64_t m_atomic_ps = 0;  // an atomic add's read-modify-write beyond a hit  // NoC latency and L2 hit latency in ps
    uint64_t m_runahead_ps;  // the earliest a submit can reach a slice: internal events this close run early
    uint32_t m_line_shift;
    // An arrival's `arg`: the slice in the low m_arrival_shift bits (m_arrival_slice_mask), the
    // set above them (the constructor checks that every pair fits).
    uint32_t m_arrival_shift = 0, m_arrival_slice_mask = 0;
    // sector_mask() of a whole line (its requests are aligned), from m_l2 (declared before it).
    uint64_t m_line_mask = sector_mask(0, m_l2.g.line_bytes);
    FastDiv32 m_slice_div, m_wr_rate, m_rd_rate, m_slice_rate, m_gm_rate;

    std::unique_ptr<IAddressMap> m_map;
    std::unique_ptr<IHbmScheduler> m_sched;
    std::vector<HbmChannel> m_channels;
    std::vector<uint64_t> m_wake;  // pending wake tick per channel (0: none)
    std::deque<HbmReq> m_wb_pool;
    std::vector<HbmReq*> m_wb_free;
    struct WbWait {
        HbmReq* head = nullptr;
        HbmReq* tail = nullptr;
    };
    std::vector<WbWait> m_wb_wait;  // per channel: write-backs waiting for write-queue room
    uint64_t m_wb_waiting = 0;      // over all channels (skips the per-channel check while none wait)
    uint64_t m_wb_pending = 0;      // write-backs not yet written to HBM (waiting, queued or in flight)
    sc_core::sc_event m_wb_drained;
    std::vector<Port> m_port;
    std::vector<Slice> m_slices;

    // Every timed event, requests on their way to a slice (Ev::Arrival) included.
    EventWheel m_events;
    // Order of events of one tick and lateness (event_wheel.h's `ord`), kept the same with one
    // thread and two (memory_system_mt.cpp): an event the L2 side pushes (not an arrival) gets
    // 2n + 1, n counting them; one the HBM side pushes gets 2n, n the count when what made it
    // happened, and its side's push count (m_hs) as the wheel's tie-break. With one thread that is
    // push order, as before.
    // Two threads (memory_system_mt.cpp). Read by both threads, written only while one runs (a
    // host cache line of its own: nothing the L2 side writes as it goes shares it).
    struct Mt;
    alignas(64) Mt* m_mtx = nullptr;  // owned (mt_end deletes it)
    bool m_mt = false;           // the HBM side runs on its thread now
    uint32_t m_threads = 0;      // chip.mem.threads: 0 auto, 1, 2
    bool m_mt_decided = false;
    // The L2 side's (its own host lines). m_hs is the HBM side's push count with one thread (Mt
    // keeps it with two).
    alignas(64) uint64_t m_n = 0;
    uint32_t m_hs = 0;
    uint64_t m_safe = ~uint64_t(0);  // L2 side: every event before this tick is on the wheel
    uint64_t m_floor = 0;        // L2 side: the earliest tick a request from outside can reach a slice
    uint64_t m_mt_handoffs = 0;
    // The L2 event being handled (2 threads: the hand-offs carry it) and what the HBM side knows.
    uint64_t m_cur_tk = 0, m_cur_ord = 0;
    uint32_t m_cur_hs = 0;
    uint64_t m_marked_n = 0;
    uint64_t m_pub_next = 0;
    bool m_in_loop = false;
    // Where one thread's loop would have stopped at the end of the last window (the key of the
    // first event it would not have popped): mt_stop() from outside the loop.
    uint64_t m_stop_tk = 0, m_stop_ord = 0;
    uint32_t m_stop_hs = 0;
    uint64_t m_next_ev = ~uint64_t(0);  // the next event's tick, 2 threads (instant_over's loop)
    alignas(64) int m_mt_end_of_l2_block = 0;  // (what follows starts a host line of its own)
    static void mt_count(int d);
    void mt_configure(uint32_t threads);
    void mt_decide();
    void mt_start();
    void mt_end();
    void mt_join();  // ends the HBM thread (if it runs) and forgets it
    static void mt_end_all();  // at process exit
    void mt_publish_at(uint64_t head);
    void mt_wait_window(uint64_t next);
    uint64_t mt_next(uint64_t head);
    // Back to one thread, the HBM side having done everything before the L2 event being handled
    // (or, outside the loop, before where the loop stopped).
    void mt_stop();
    void mt_settle() const;
    void mt_thread();
    void mt_loop();
    void mt_check();
    // Before an L2 event's handler (2 threads): the event before's mark, this one's key, H_L now
    // and then.
    void mt_begin(const WheelItem& it) {
        if (m_n != m_marked_n) mt_mark();
        m_cur_tk = it.tick << 1 | (it.kind == static_cast<uint8_t>(Ev::Arrival) ? 1 : 0);
        m_cur_ord = it.seq;
        m_cur_hs = it.arg;
        if (it.tick >= m_pub_next) mt_publish_tick(it.tick);
    }
    [[gnu::noinline]] void mt_publish_tick(uint64_t tick);
    [[gnu::noinline]] void mt_mark();
    void mt_handoff(HbmReq& r, uint64_t t);
    void mt_in(uint64_t tk, uint64_t oh, uint64_t n, uintptr_t req);  // one entry to the HBM thread
    void mt_drain();
    [[gnu::noinline]] void mt_out(uint64_t tick, Ev kind, void* ptr, uint32_t pc);
    void mt_wakes_below(uint64_t tk, uint64_t ord, uint32_t hs);
    bool mt_wakes_before(uint64_t tick);
    // A push by the HBM side (FillDone, WbDone, CtrlWake, a released write's completion).
    void push_hbm(uint64_t tick, Ev kind, void* ptr, uint32_t pc = 0);
    bool m_runahead_staged = false;  // the run-ahead client's requests of tick m_cb_tick wait (m_cb_one or m_order)
    MemRequest* m_cb_one = nullptr;  // the only one so far (not yet in m_order)
    uint64_t m_scheduled = ~uint64_t(0);
    bool m_in_process = false;
    uint64_t m_activations = 0;
    uint64_t m_ahead_batches = 0;
    bool m_wake_deferred = false;  // process() left scheduling m_wake_ev (at m_scheduled) to instant_over()
    bool m_clients_ahead = false;
    IMemClient* m_runahead_client = nullptr;
    bool m_in_runahead_cb = false;  // inside the run-ahead client's mem_done: submits are timed at m_cb_tick
    uint64_t m_cb_tick = 0;
    uint64_t m_last_runahead = 0;   // tick of the latest run-ahead completion (SystemC time is moved up to it)
    sc_core::sc_event m_wake_ev;
    SubmitOrder m_order;

    StatGroup m_stats;
    StatGroup m_l2_stats;
    StatGroup m_hbm_stats;
    std::array<std::unique_ptr<ReqStats>, static_cast<size_t>(Requester::kCount)> m_req;
    Counter m_writebacks;
    Counter m_wb_stalls;
    Counter m_flushes, m_flushed_lines;
    Counter m_standin_lines, m_standin_read, m_standin_written;
    std::vector<std::vector<ReplayLine>> m_replay_by_slice;  // replay_traffic's per-slice order
    bool m_replay_per_line = false;
    bool m_parts_run_ahead = true;
    // replay_by_set's buffers (kept: a decode step hands over an L2's worth of lines many times).
    std::vector<std::vector<L2Tags::ReplayAccess>> m_rp_slice;
    std::vector<L2Tags::ReplayAccess> m_rp_sorted;
    std::vector<uint32_t> m_rp_start, m_rp_fill;
    std::vector<uint64_t> m_rp_evicted;
    Histogram m_read_latency;
    Average m_read_latency_avg;  // mirrors m_read_latency (sample_read_latency)
    uint64_t m_read_max_ps = 0;  // the largest read latency sampled
    std::vector<std::unique_ptr<Formula>> m_formulas;

    // Trace: bytes per HBM channel and L2 hits/accesses within the current window.
    uint64_t m_trace_window_ps = 0;
    uint64_t m_trace_window_end = 0;
    std::vector<uint64_t> m_trace_bytes;
    uint64_t m_trace_hits = 0, m_trace_accesses = 0;
    std::vector<TrackId> m_trace_tracks;
    TrackId m_trace_l2 = 0;
    bool m_trace_ready = false;
};

// Hot helpers used by every part of the memory system (memory_system*.cpp): inline here.
// Inlined where called (a call's register saves were a third of its cost); the wake-up from
// outside process() and the wheel's uncommon cases are calls out of line.
[[gnu::always_inline]] inline void MemorySystem::push(uint64_t tick, Ev kind, void* ptr, uint32_t arg) {
    if (__builtin_expect(!m_in_process && tick < m_scheduled, 0)) return push_waking(tick, kind, ptr, arg);
    if (kind == Ev::Arrival) return m_events.push(tick, ptr, arg, static_cast<uint8_t>(kind), true, 1);
    m_events.push(tick, ptr, arg, static_cast<uint8_t>(kind), false, 2 * m_n++ + 1);
}

[[gnu::always_inline]] inline void MemorySystem::push_hbm(uint64_t tick, Ev kind, void* ptr, uint32_t pc) {
    if (m_mt) return mt_out(tick, kind, ptr, pc);
    if (kind == Ev::CtrlWake) ptr = reinterpret_cast<void*>(static_cast<uintptr_t>(pc));
    const uint32_t hs = m_hs++;
    if (__builtin_expect(!m_in_process && tick < m_scheduled, 0)) {
        m_events.push(tick, ptr, hs, static_cast<uint8_t>(kind), false, 2 * m_n);
        return wake_for(tick);
    }
    m_events.push(tick, ptr, hs, static_cast<uint8_t>(kind), false, 2 * m_n);
}

// A channel's wake-up `w` (ptr: its channel) at time t, unless a later one replaced it.
inline void MemorySystem::run_wake(const WheelItem& w, uint64_t t) {
    const auto pc = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(w.ptr));
    if (m_wake[pc] != w.tick) return;
    m_wake[pc] = 0;
    run_channel(pc, t);
}

[[gnu::always_inline]] inline void MemorySystem::flush_runahead() {
    m_runahead_staged = false;
    MemRequest* r = m_cb_one;
    // accept(*r) inside the callback's time (m_in_runahead_cb), as below: submit_line at m_cb_tick.
    if (r && !m_bulk && one_line(*r)) [[likely]] {
        m_cb_one = nullptr;
        return submit_line(*r, m_cb_tick);
    }
    flush_runahead_other();
}

inline void MemorySystem::sample_read_latency(uint64_t ps) {
    const double ns = static_cast<double>(ps) / 1000.0;
    // The histogram's bucket by an integer division by a constant: the same as sample(ns)'s
    // floor(ns / 5.0) for every latency below 2e12 ns (tests/unit/mem_latency_bucket_test.cpp), without a floating divide.
    m_read_latency.sample_in(std::min<uint64_t>(ps / kLatencyBucketPs, kLatencyBuckets - 1), ns);
    // The average mirrors the histogram (its count and sum): only the maximum is kept apart.
    m_read_max_ps = std::max(m_read_max_ps, ps);
}

inline void MemorySystem::record_done(MemRequest& r, uint64_t t) {
    r.done_tick = Tick(t);
    if (r.write || r.burst) return;  // a burst's spans were sampled one by one (bulk_span)
    sample_read_latency(t - r.issue_tick.v);
}

inline void MemorySystem::complete(MemRequest& r, uint64_t t) {
    push(t,
         r.target_part                                          ? Ev::PartDone
         : m_runahead_client && r.client == m_runahead_client ? Ev::RunaheadDone
                                                                : Ev::ClientDone,
         &r);
}

}  // namespace sfumato::mem
