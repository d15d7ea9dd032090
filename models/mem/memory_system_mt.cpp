// The memory system's HBM side on a second host thread (chip.mem.threads; docs/mem_two_thread.md).
//
// What moves: the HBM controllers (address decode, channel queues, decisions, wake-ups). The L2
// thread (the SystemC thread) hands each miss's fill over through a ring (SpscRing) instead of
// calling hbm_enqueue(); the HBM thread runs it and its channel wake-ups (CtrlWake, kept in a
// wheel of its own) and sends each fill's completion (FillDone) back through a second ring. A
// fill completes at least frontend_latency after the HBM side took it (L below), so the L2 side
// may run up to L ahead of where the HBM side has got to (T_H, published by the HBM thread); the
// HBM side runs what lies before the L2 side's published horizon (H_L: no hand-off earlier than it
// can still come).
//
// Exactness: the events leave the L2 side's wheel, and the HBM side runs its own items, in the
// order one thread runs them. One thread pops in (tick, lateness, push order). Push order is
// replaced by `ord` (memory_system.h): an L2-side push of a non-arrival event is the n-th such push
// and gets 2n + 1; an HBM-side push gets 2n, n being the number of L2-side pushes made before what
// caused it (a hand-off carries n; a CtrlWake's handler takes n after the L2 events before it:
// the L2 side writes a mark (its event's key and n) to the ring after every event whose handler
// pushed, so the HBM thread, which merges the ring's entries and its wake-ups by key, knows n at
// every point), and ties among HBM-side pushes go by their sequence (m_hs). Arrivals (late) are
// ordered among themselves only and are pushed by the L2 side alone, in push order. With one
// thread this numbering is push order (the same pops as before it existed); with two, every
// event gets the same number, so both pop the same events in the same order, each at its tick.
//
// What stays on one thread: a write-back (the L2 side asks whether the write queue has room)
// and any look at the HBM side's state (unwritten_bytes(), statistics) first bring the HBM side
// up to the L2 event being handled (or, between activations, to where one thread would be) and
// end the second thread for the rest of the run (mt_stop). Two threads are used only where they
// pay (mt_decide).
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "models/mem/memory_system.h"
#include "models/mem/memory_system_hbm_inl.h"
#include "models/mem/spsc_ring.h"
#include "sim/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SFUMATO_PAUSE() _mm_pause()
#else
#define SFUMATO_PAUSE() ((void)0)
#endif

namespace sfumato::mem {

namespace {
std::atomic<int> g_systems{0};  // memory systems alive in the process (two threads for one only)
// Memory systems whose HBM thread runs: joined at process exit (the process may end without
// destroying its modules, and a thread still running then upsets exit-time checks such as
// LeakSanitizer's, which stops every thread).
std::mutex g_live_mutex;
std::vector<MemorySystem*> g_live;

// Tasks running or waiting for a CPU on the machine now (/proc/loadavg's fourth field, "R/T");
// a large number when unknown.
int runnable_tasks() {
    std::FILE* f = std::fopen("/proc/loadavg", "r");
    if (!f) return 1 << 20;
    double a, b, c;
    int r = 0, t = 0;
    const int n = std::fscanf(f, "%lf %lf %lf %d/%d", &a, &b, &c, &r, &t);
    std::fclose(f);
    return n == 5 ? r : 1 << 20;
}

// A wait for the other thread: spin (about 11 ns a pause on this project's CI machine) for some
// 50 us, then give the CPU up, then sleep in short steps (the other thread is elsewhere: SystemC
// between activations, or descheduled).
void backoff(uint32_t& idle) {
    if (idle < 4096) SFUMATO_PAUSE();
    else if (idle < 4096 + 256) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
    ++idle;
}
}  // namespace

struct alignas(64) MemorySystem::Mt {
    // L2 -> HBM (32 B, two to a host line): a hand-off (req set) or a mark, at the L2 event of key
    // (tk, ord, hs); n the L2 side's push count there. `oh` is ord << 24 | the low 24 bits of hs
    // (ties between even ords compare hs modulo 2^24: such events are pushes of one n, close in
    // sequence); ord stays below 2^40 (mt_publish_at ends two threads before). A hand-off timed
    // later than its event (a late activation: t = SystemC time) sets req's bit 0 and the next
    // entry carries t in tk.
    struct In {
        uint64_t tk, oh, n;
        uintptr_t req;
    };
    static constexpr uint64_t kOrdLimit = uint64_t(1) << 40;
    // HBM -> L2: an event for the L2 side's wheel.
    struct Out {
        uint64_t tick, ord;
        void* ptr;
        uint32_t hs;
        uint8_t kind;
    };
    SpscRing<In> in{1 << 11};
    SpscRing<Out> out{1 << 11};
    alignas(64) std::atomic<uint64_t> hl{0};  // H_L (L2 publishes)
    alignas(64) std::atomic<uint64_t> th{0};  // T_H (HBM publishes), with nh: its next item's tick
    std::atomic<uint64_t> nh{~uint64_t(0)};
    alignas(64) std::atomic<uint32_t> cmd{0};  // 1: run everything before q_* and end; 2: end now
    uint64_t q_tk = 0, q_ord = 0;
    uint32_t q_hs = 0;
    std::atomic<uint32_t> done{0};
    std::atomic<uint32_t> failed{0};  // the HBM thread ended with `error`
    std::exception_ptr error;
    // The HBM thread's own.
    alignas(64) EventWheel wakes;  // the HBM side's CtrlWakes (ptr: the channel, arg: hs, seq: ord)
    uint64_t hn = 0;               // the n its pushes take
    uint32_t hs = 0;               // its push count (m_hs with one thread)
    bool head_ok = false;          // wakes' earliest item is (w_tick, w_ord, w_hs); none: w_tick = ~0
    uint64_t w_tick = 0, w_ord = 0;
    uint32_t w_hs = 0;
    uint64_t th_pub = 0, nh_pub = ~uint64_t(0);
    // The earliest wake-up (refreshed after a pop).
    void head() {
        if (head_ok) return;
        WheelItem w;
        bool late;
        if (wakes.peek(w, late)) {
            w_tick = w.tick;
            w_ord = w.seq;
            w_hs = w.arg;
        } else {
            w_tick = ~uint64_t(0);
        }
        head_ok = true;
    }
    // T_H: every item before it done, its outputs published.
    void publish_th(uint64_t th) {
        out.publish();
        head();
        th = std::min(th, w_tick);
        if (th != th_pub || w_tick != nh_pub) {
            nh.store(w_tick, std::memory_order_relaxed);
            this->th.store(th, std::memory_order_release);
            th_pub = th;
            nh_pub = w_tick;
        }
    }
    // The L2 thread's own.
    alignas(64) uint64_t th_seen = 0;  // the last T_H read
    std::thread thread;
};

void MemorySystem::mt_count(int d) { g_systems.fetch_add(d, std::memory_order_relaxed); }

// The key order of the wheel (event_wheel.h's Node::before, strict): (tk, ord) then, for an even
// ord (HBM-side pushes), the sequence (modulo 2^24: see Mt::In).
static inline bool key_less(uint64_t atk, uint64_t aord, uint32_t ahs, uint64_t btk, uint64_t bord, uint32_t bhs) {
    if (atk != btk) return atk < btk;
    if (aord != bord) return aord < bord;
    return !(aord & 1) && static_cast<int32_t>((ahs - bhs) << 8) < 0;
}

void MemorySystem::mt_configure(uint32_t threads) {
    // At construction, so that a bad setting is a configuration error before anything runs.
    m_threads = threads;  // 0 auto
    if (const char* e = std::getenv("SFUMATO_MEM_THREADS")) {
        if (!std::strcmp(e, "1")) m_threads = 1;
        else if (!std::strcmp(e, "2")) m_threads = 2;
        else if (!std::strcmp(e, "auto")) m_threads = 0;
        else throw ConfigError("SFUMATO_MEM_THREADS", std::string("'") + e + "' is not 1, 2 or auto (it overrides chip.mem.threads)");
    }
    if (m_threads == 2 && !m_bulk && (m_frontend_ps == 0 || m_noc_ps == 0))
        throw ConfigError("chip.mem.threads", "2 needs chip.hbm.frontend_latency_ns and chip.noc.latency above 0 "
                                              "(the HBM side's lead over the L2 side)");
    mt_count(+1);
}

void MemorySystem::mt_decide() {
    m_mt_decided = true;
    const uint32_t want = m_threads;
    // The HBM side must start on its thread with nothing of its own yet (no push of it so far:
    // nothing queued, no wake-up or write-back on the wheel; a flush before the first activation
    // makes some).
    if (want == 1 || m_bulk || m_hs != 0) return;
    const bool traced = m_trace && (m_trace->on(TraceLevel::Mem) || m_trace->on(TraceLevel::Instr));
    if (want == 2) {
        if (traced) return;  // the Mem trace reads the HBM side's requests at fills: one thread
        mt_start();
        return;
    }
    // auto: where a second thread pays and finds a CPU of its own. A run-ahead client (membench's
    // generator) keeps the memory system busy for long stretches alone; full-chip runs hand over
    // a few events per activation, each of which would end waiting for the other thread.
    if (!m_runahead_client || traced || m_frontend_ps == 0 || m_noc_ps == 0) return;
    if (g_systems.load(std::memory_order_relaxed) != 1) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 2) return;
    // A busy machine (a test suite on every CPU) deschedules one of the two threads, and each then
    // waits for the other: slower than one thread. So two only while a CPU is free (the tasks
    // running or runnable, this one included, from /proc/loadavg) in most of five looks a
    // millisecond apart: a task passing by (a kernel thread) does not decide it. The load decides
    // only the speed, never the result.
    int free_looks = 0;
    for (int i = 0; i < 5; ++i) {
        if (i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
        free_looks += runnable_tasks() <= CPU_COUNT(&set) - 1;
    }
    if (free_looks < 3) return;
    mt_start();
}

void MemorySystem::mt_start() {
    m_mtx = new Mt();
    m_mtx->hs = m_hs;
    m_mtx->hn = m_n;
    m_mt = true;
    m_marked_n = m_n;
    m_safe = m_frontend_ps;  // T_H starts at 0
    m_pub_next = 0;
    Mt& x = *m_mtx;
    // The HBM thread takes no signal (SIGINT stays with the SystemC thread, sim/failure.h).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    x.thread = std::thread([this] { mt_thread(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    static const bool at_exit = [] { return std::atexit(&MemorySystem::mt_end_all) == 0; }();
    (void)at_exit;
    const std::lock_guard<std::mutex> lock(g_live_mutex);
    g_live.push_back(this);
}

void MemorySystem::mt_thread() {
    // Nothing on the HBM side throws today but running out of memory; whatever it is goes to the
    // L2 thread, which rethrows it where it next waits for this one (mt_check).
    try {
        mt_loop();
    } catch (...) {
        m_mtx->error = std::current_exception();
        m_mtx->failed.store(1, std::memory_order_release);
    }
}

void MemorySystem::mt_check() {
    if (m_mtx->failed.load(std::memory_order_acquire)) {
        mt_join();
        m_mt = false;
        std::rethrow_exception(m_mtx->error);
    }
}

void MemorySystem::mt_loop() {
    Mt& x = *m_mtx;
    uint32_t idle = 0;
    for (;;) {
        const uint32_t cmd = x.cmd.load(std::memory_order_acquire);
        const uint64_t hl = x.hl.load(std::memory_order_acquire);
        bool did = false;
        // Every entry the L2 side published, after the wake-ups before it. Past an entry of
        // tick t, every item before t is done (hand-offs come in tick order): T_H moves on
        // with them while the L2 side keeps handing over.
        uint32_t k = 0;
        while (const Mt::In* e = x.in.front()) {
            // The next entries' host lines and a later hand-off's request (written by the L2 side).
            // (Entries 12 on: their lines; entry 4 on, whose line came 8 entries ago: its request,
            // for writing: the decode writes it.)
            if (const Mt::In* a = x.in.ahead(12)) __builtin_prefetch(a);
            if (const Mt::In* a = x.in.ahead(4); a && a->req > 1)
                __builtin_prefetch(reinterpret_cast<const void*>(a->req & ~uintptr_t(1)), 1);
            const uint64_t tk = e->tk;
            mt_wakes_below(tk, e->oh >> 24, static_cast<uint32_t>(e->oh & 0xffffff));
            x.hn = e->n;
            const uintptr_t req = e->req;
            const uint64_t t = tk >> 1;
            x.in.pop();
            if (req & 1) {  // its tick in the next entry (committed right after it)
                const Mt::In* f;
                uint32_t spin = 0;
                while (!(f = x.in.front())) backoff(spin);
                hbm_enqueue(*reinterpret_cast<HbmReq*>(req & ~uintptr_t(1)), f->tk);
                x.in.pop();
            } else if (req) {
                hbm_enqueue(*reinterpret_cast<HbmReq*>(req), t);
            }
            did = true;
            if ((++k & 31) == 0 && !cmd) x.publish_th(t);  // entries after it are at t or later
        }
        if (cmd) {
            if (cmd == 1) mt_wakes_below(x.q_tk, x.q_ord, x.q_hs);
            x.in.release();
            x.out.publish();
            x.done.store(1, std::memory_order_release);
            return;
        }
        // The wake-ups before H_L: every hand-off before it is in (published before H_L).
        did |= mt_wakes_before(hl);
        if (did) x.in.release();
        x.publish_th(hl);
        if (did) idle = 0;
        else backoff(idle);
    }
}

void MemorySystem::mt_wakes_below(uint64_t tk, uint64_t ord, uint32_t hs) {
    Mt& x = *m_mtx;
    WheelItem w;
    for (;;) {
        x.head();
        if (!key_less(x.w_tick << 1, x.w_ord, x.w_hs, tk, ord, hs) || x.w_tick == ~uint64_t(0)) break;
        x.wakes.pop_due(x.w_tick, w);
        x.head_ok = false;
        run_wake(w, w.tick);
    }
}

bool MemorySystem::mt_wakes_before(uint64_t tick) {
    Mt& x = *m_mtx;
    WheelItem w;
    bool did = false;
    for (;;) {
        x.head();
        if (x.w_tick >= tick) break;
        x.wakes.pop_due(x.w_tick, w);
        x.head_ok = false;
        did = true;
        run_wake(w, w.tick);
    }
    return did;
}

void MemorySystem::mt_out(uint64_t tick, Ev kind, void* ptr, uint32_t pc) {
    Mt& x = *m_mtx;
    const uint32_t hs = x.hs++;
    if (kind == Ev::CtrlWake) {
        x.wakes.push(tick, reinterpret_cast<void*>(static_cast<uintptr_t>(pc)), hs, static_cast<uint8_t>(kind), false,
                     2 * x.hn);
        // The earliest stays known if this one is not before it.
        if (x.head_ok && key_less(tick << 1, 2 * x.hn, hs, x.w_tick << 1, x.w_ord, x.w_hs)) x.head_ok = false;
        return;
    }
    Mt::Out* o;
    uint32_t idle = 0;
    while (!(o = x.out.slot())) {  // the L2 side drains it while it waits for anything
        x.out.publish();
        if (x.cmd.load(std::memory_order_relaxed) == 2) return;  // the end (destruction): dropped
        backoff(idle);
    }
    *o = Mt::Out{tick, 2 * x.hn, ptr, hs, static_cast<uint8_t>(kind)};
    x.out.commit();
}

// L2 side ---------------------------------------------------------------------------------------

void MemorySystem::mt_in(uint64_t tk, uint64_t oh, uint64_t n, uintptr_t req) {
    Mt& x = *m_mtx;
    Mt::In* e;
    uint32_t idle = 0;
    while (!(e = x.in.slot())) {  // the HBM thread may be waiting for room to send: drain meanwhile
        x.in.publish();
        mt_drain();
        mt_check();
        backoff(idle);
    }
    *e = Mt::In{tk, oh, n, req};
    x.in.commit();
}

void MemorySystem::mt_mark() {
    mt_in(m_cur_tk, m_cur_ord << 24 | (m_cur_hs & 0xffffff), m_n, 0);
    m_marked_n = m_n;
}

void MemorySystem::mt_handoff(HbmReq& r, uint64_t t) {
    const bool own_t = t != m_cur_tk >> 1;
    mt_in(m_cur_tk, m_cur_ord << 24 | (m_cur_hs & 0xffffff), m_n, reinterpret_cast<uintptr_t>(&r) | own_t);
    if (own_t) {  // the HBM thread waits for this second entry once it has seen the first
        mt_in(t, 0, 0, 0);
        m_mtx->in.publish();
    }
    m_marked_n = m_n;
    ++m_mt_handoffs;
}

void MemorySystem::mt_publish_tick(uint64_t tick) {
    m_pub_next = tick + std::max<uint64_t>(1, m_frontend_ps / 8);
    mt_publish_at(tick);
}

// H_L: no hand-off before it can still come. Hand-offs come from L2 events: those on the wheel
// (from `head`), the run-ahead client's staged requests (arriving a NoC latency after their
// tick), fills not yet drained (at m_safe or later) and requests from outside (m_floor).
void MemorySystem::mt_publish_at(uint64_t head) {
    Mt& x = *m_mtx;
    if (m_n != m_marked_n) mt_mark();
    if (m_n >= Mt::kOrdLimit / 4) return mt_stop();  // (after some 10^11 events) one thread goes on
    uint64_t h = std::min({head, m_floor, m_safe});
    if (m_runahead_staged) h = std::min(h, m_cb_tick + m_noc_ps);
    x.in.publish();
    x.hl.store(h, std::memory_order_release);
}

void MemorySystem::mt_drain() {
    Mt& x = *m_mtx;
    const uint64_t th = x.th.load(std::memory_order_acquire);
    while (const Mt::Out* o = x.out.front()) {
        if (const Mt::Out* a = x.out.ahead(8)) __builtin_prefetch(a);
        if (const Mt::Out* a = x.out.ahead(4)) m_events.prefetch(a->tick);
        // The fill's MSHR is read when it lands, a few hundred lines from now: into the host's
        // second-level cache meanwhile.
        __builtin_prefetch(o->ptr, 0, 2);
        m_events.push(o->tick, o->ptr, o->hs, o->kind, false, o->ord);
        x.out.pop();
    }
    x.out.release();
    x.th_seen = th;
    m_safe = th >= ~uint64_t(0) - m_frontend_ps ? ~uint64_t(0) : th + m_frontend_ps;
}

// The window's loop stopped at `next` (>= m_safe, <= its limit): fills the HBM side has yet to
// send may come first. Lets the HBM side go on and takes what it sent.
void MemorySystem::mt_wait_window(uint64_t next) {
    Mt& x = *m_mtx;
    // The staged requests go in before anything at m_safe or later, as they would at the next pop.
    if (m_runahead_staged) {
        flush_runahead();
        next = std::min(next, m_events.next_tick());
        if (next < m_safe) return;
    }
    mt_publish_at(next);
    const uint64_t th0 = x.th_seen;
    uint32_t idle = 0;
    // Draining as it waits: the HBM thread may be waiting for room in the ring to send.
    for (;;) {
        mt_drain();
        if (x.th_seen != th0) break;
        mt_check();
        backoff(idle);
    }
}

uint64_t MemorySystem::mt_next(uint64_t h0) {
    Mt& x = *m_mtx;
    // Every fill before m_safe is on the wheel already (drained with the T_H it came from): h0,
    // the wheel's earliest tick, is the next event's then.
    if (h0 < m_safe) return h0;
    for (;;) {
        mt_drain();
        const uint64_t h = m_events.next_tick();
        if (h < m_safe) return h;
        mt_publish_at(h);
        const uint64_t hl = x.hl.load(std::memory_order_relaxed);
        uint32_t idle = 0;
        uint64_t th;
        for (;;) {  // draining as it waits (see mt_wait_window)
            mt_drain();
            th = x.th_seen;
            if (th >= hl || th + m_frontend_ps > h) break;
            mt_check();
            backoff(idle);
        }
        const uint64_t nh = x.nh.load(std::memory_order_relaxed);
        const uint64_t h2 = m_events.next_tick();
        if (h2 < m_safe) return h2;
        // The HBM side has done everything before H_L: nothing of it comes before its next item
        // plus L.
        if (th >= hl) return std::min(h2, nh >= ~uint64_t(0) - m_frontend_ps ? ~uint64_t(0) : nh + m_frontend_ps);
    }
}

void MemorySystem::mt_stop() {
    if (!m_mt) return;
    Mt& x = *m_mtx;
    if (m_in_loop) {  // everything before the L2 event being handled
        x.q_tk = m_cur_tk;
        x.q_ord = m_cur_ord;
        x.q_hs = m_cur_hs;
    } else {  // everything one thread would have run by the end of the last window
        x.q_tk = m_stop_tk;
        x.q_ord = m_stop_ord;
        x.q_hs = m_stop_hs;
    }
    x.in.publish();
    x.cmd.store(1, std::memory_order_release);
    uint32_t idle = 0;
    while (!x.done.load(std::memory_order_acquire)) {
        mt_drain();
        mt_check();
        backoff(idle);
    }
    mt_join();  // (its loop has returned)
    m_hs = x.hs;
    mt_drain();
    // Its wake-ups join the wheel (in their order), and one thread goes on.
    WheelItem w;
    while (x.wakes.pop_due(~uint64_t(0) >> 2, w))
        m_events.push(w.tick, w.ptr, w.arg, static_cast<uint8_t>(Ev::CtrlWake), false, w.seq);
    m_mt = false;
    m_safe = ~uint64_t(0);
}

void MemorySystem::mt_settle() const {
    if (m_mt) const_cast<MemorySystem*>(this)->mt_stop();
}

void MemorySystem::mt_join() {
    if (m_mtx && m_mtx->thread.joinable()) {
        m_mtx->cmd.store(2, std::memory_order_release);
        m_mtx->thread.join();
    }
    const std::lock_guard<std::mutex> lock(g_live_mutex);
    g_live.erase(std::remove(g_live.begin(), g_live.end(), this), g_live.end());
}

void MemorySystem::mt_end_all() {
    std::vector<MemorySystem*> live;
    {
        const std::lock_guard<std::mutex> lock(g_live_mutex);
        live = g_live;
    }
    for (MemorySystem* m : live) m->mt_join();
}

void MemorySystem::mt_end() {
    if (!m_mtx) return;
    mt_join();
    delete m_mtx;
    m_mtx = nullptr;
}

}  // namespace sfumato::mem
