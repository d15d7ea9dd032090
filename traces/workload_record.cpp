#include "traces/workload_record.h"

#include <filesystem>
#include <map>
#include <set>

#include "runtime/ops/node_launch.h"
#include "sim/error.h"
#include "traces/atomic_file.h"
#include "traces/node_json.h"

namespace sfumato::workload {

Recorder::Recorder(rt::Context& ctx, bool instructions) : m_ctx(ctx), m_instr(instructions) {
    ctx.set_api_log(true);
    if (m_instr) {
        ctx.set_launch_hook([this](KernelDesc& k) {
            auto ks = std::make_shared<KernelStreams>();
            ks->key = "k" + std::to_string(m_kernels.size());
            record_instructions(k, ks);
            m_kernels.push_back(std::move(ks));
        });
    }
}

std::string instr_file_for(const std::string& workload_path) {
    std::filesystem::path p(workload_path);
    p.replace_extension(".instr.h5");
    return p.string();
}

namespace {

struct Buf {
    std::string name;
    uint64_t bytes;
};

Launch launch_of(const KernelDesc& k, const std::string& instr) {
    Launch l;
    l.name = k.name;
    l.type = k.type;
    l.kind = k.kind;
    l.block_dim = k.block_dim;
    l.flops = k.flops;
    l.bytes = k.bytes;
    l.min_compute_cycles = k.min_compute_cycles;
    l.instr = instr;
    l.args_bytes = k.args_bytes;
    l.code_bytes = k.code_bytes;
    return l;
}

}  // namespace

Workload Recorder::workload(const nlohmann::json& recorded_on) const {
    Workload w;
    w.recorded_on = recorded_on;
    std::map<uint64_t, Buf> live;  // recorded address -> buffer
    size_t next_buf = 0, launches = 0;
    auto buffer_of = [&](uint64_t addr) -> std::optional<std::pair<std::string, uint64_t>> {
        auto it = live.upper_bound(addr);
        if (it == live.begin()) return std::nullopt;
        --it;
        if (addr >= it->first + it->second.bytes) return std::nullopt;
        return std::make_pair(it->second.name, addr - it->first);
    };
    std::set<uint32_t> streams;
    uint64_t prev_end = 0;
    const ops::NodeLaunch* prev_node = nullptr;
    for (const rt::ApiCall& c : m_ctx.api_log()) {
        Task x;
        x.gap_ns = (c.begin > prev_end ? c.begin - prev_end : 0) / 1000;
        x.at_us = static_cast<double>(c.begin) / 1e6;
        prev_end = c.end;
        const bool device_task = c.task != SIZE_MAX;
        if (device_task) {
            x.stream = c.stream;
            streams.insert(c.stream);
        }
        const ops::NodeLaunch* node = nullptr;
        switch (c.kind) {
            case rt::ApiCall::Kind::Malloc:
                x.kind = Kind::Alloc;
                x.buffer = "b" + std::to_string(next_buf++);
                x.bytes = c.bytes;
                x.addr = c.ptr;
                live[c.ptr] = Buf{x.buffer, c.bytes};
                break;
            case rt::ApiCall::Kind::Free: {
                auto it = live.find(c.ptr);
                if (it == live.end()) continue;  // not one of ours (an imported block)
                x.kind = Kind::Free;
                x.buffer = it->second.name;
                live.erase(it);
                break;
            }
            case rt::ApiCall::Kind::Memcpy: {
                x.kind = Kind::Memcpy;
                x.dir = c.dir;
                x.bytes = c.bytes;
                x.pinned = c.pinned;
                x.async = c.async;
                if (c.dir != CopyDir::D2H) {
                    if (auto b = buffer_of(c.ptr)) x.dst = b->first, x.dst_offset = b->second;
                }
                if (c.dir != CopyDir::H2D) {
                    if (auto b = buffer_of(c.src)) x.src = b->first, x.src_offset = b->second;
                }
                break;
            }
            case rt::ApiCall::Kind::Launch: {
                const KernelDesc& k = m_ctx.tasks().at(c.task).task->kernel;
                const std::string instr = m_instr && launches < m_kernels.size() ? m_kernels[launches]->key : "";
                ++launches;
                node = dynamic_cast<const ops::NodeLaunch*>(k.origin.get());
                // Later launches of the same node extend its task.
                if (node && k.origin_part > 0 && node == prev_node && !w.tasks.empty() &&
                    w.tasks.back().kind == Kind::Kernel && w.tasks.back().stream == c.stream) {
                    w.tasks.back().launches.push_back(launch_of(k, instr));
                    continue;
                }
                x.kind = Kind::Kernel;
                x.name = k.name;
                if (node) x.node = node_to_json(*node, buffer_of);
                if (!k.op.empty()) {
                    x.op = k.op;
                    x.args = k.op_args;
                    x.args.erase("block_dim");
                    x.block_dim = k.block_dim;
                }
                if (!node && k.op.empty() && instr.empty())
                    throw InputError("cannot record kernel '" + k.name +
                                     "' by name: it was launched neither from the operator library nor from a graph "
                                     "node (record its instructions with --record-level instructions)");
                x.launches.push_back(launch_of(k, instr));
                break;
            }
            case rt::ApiCall::Kind::EventRecord:
                x.kind = Kind::Record;
                x.event = "e" + std::to_string(c.event);
                break;
            case rt::ApiCall::Kind::StreamWait:
                x.kind = Kind::Wait;
                x.event = "e" + std::to_string(c.event);
                break;
            case rt::ApiCall::Kind::StreamSync:
                x.kind = Kind::Sync;
                x.stream = c.stream;
                streams.insert(c.stream);
                break;
            case rt::ApiCall::Kind::DeviceSync: x.kind = Kind::Sync; break;
            case rt::ApiCall::Kind::FlushCaches: x.kind = Kind::Flush; break;
            case rt::ApiCall::Kind::EventSync:
                x.kind = Kind::Sync;
                x.event = "e" + std::to_string(c.event);
                break;
            case rt::ApiCall::Kind::Other: continue;
        }
        prev_node = node;
        x.index = w.tasks.size();
        w.tasks.push_back(std::move(x));
    }
    for (uint32_t s : streams) w.streams.push_back({s, m_ctx.stream_priority(s)});
    return w;
}

void Recorder::write(const std::string& path, const nlohmann::json& recorded_on) const {
    Workload w = workload(recorded_on);
    if (m_instr) {
        const std::string h5 = instr_file_for(path);
        write_instr_h5(h5, m_kernels);
        w.instr_file = std::filesystem::path(h5).filename().string();
    }
    write_text_atomically(path, to_json(w) + "\n");
}

}  // namespace sfumato::workload
