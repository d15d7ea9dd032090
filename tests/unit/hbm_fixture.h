// One HBM pseudo-channel controller without SystemC, for the controller unit tests: a small
// one-stack geometry (1 channel, 256 MiB, 8192 rows) plus `chip.hbm.*` overrides, requests
// decoded by the configured address map, and a driver that runs the controller until every
// queued request is scheduled.
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/mem/hbm_channel.h"
#include "sim/config.h"

namespace sfumato::test {

struct HbmRig {
    using KV = std::vector<std::pair<std::string, std::string>>;
    Config cfg;
    mem::HbmParams p;
    std::unique_ptr<mem::IHbmScheduler> sched;
    std::unique_ptr<mem::IAddressMap> map;
    std::unique_ptr<mem::HbmChannel> ch;
    std::vector<mem::HbmReq*> out;
    std::vector<std::unique_ptr<mem::HbmReq>> reqs;

    explicit HbmRig(const KV& overrides = {}) {
        cfg.set_raw("chip.hbm.channels_per_stack", "1", "test");
        cfg.set_raw("chip.hbm.capacity_mib", "256", "test");
        cfg.set_raw("chip.hbm.rows", "8192", "test");
        for (const auto& [k, v] : overrides) cfg.set_raw("chip.hbm." + k, v, "test");
        p = mem::read_hbm_params(ParamScope(cfg, "chip.hbm"));
        sched = mem::make_hbm_scheduler(p.scheduler, "chip.hbm.scheduler");
        map = mem::make_address_map(p, "chip.hbm.address_map");
        ch = std::make_unique<mem::HbmChannel>(p, *sched, 0);
    }
    // Bytes between consecutive rows of one bank.
    uint64_t row_stride() const { return uint64_t(p.total_pcs()) * p.banks() * p.row_bytes; }
    uint64_t ck(uint64_t c) const { return c * p.t.tck_ps; }
    // A decoded request (owned by the rig), arriving at 0 unless submit_run() says otherwise.
    mem::HbmReq* req(uint64_t a, uint32_t bytes, bool write = false) {
        auto r = std::make_unique<mem::HbmReq>();
        r->addr = a;
        r->bytes = bytes;
        r->write = write;
        r->da = map->decode(a);
        r->bank_index = r->da.bg * p.banks_per_group + r->da.bank;
        r->arrive = Tick(0);
        reqs.push_back(std::move(r));
        return reqs.back().get();
    }
    // Submits at `at` and runs the controller until everything queued is scheduled.
    void submit_run(mem::HbmReq* r, uint64_t at) {
        r->arrive = Tick(at);
        ch->enqueue(r);
        drain(at);
    }
    void drain(uint64_t at) {
        uint64_t t = at;
        while (ch->queued()) {
            const uint64_t next = ch->run(Tick(t), out);
            if (next == mem::HbmChannel::kNever) break;
            t = next;
        }
    }
};

}  // namespace sfumato::test
