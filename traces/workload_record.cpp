#include "traces/workload_record.h"

#include <set>

#include "sim/error.h"

namespace sfumato::workload {

Workload record_workload(const rt::Context& ctx) {
    Workload w;
    std::set<uint32_t> streams;
    for (const rt::TaskRecord& r : ctx.tasks()) streams.insert(r.stream);
    for (uint32_t s : streams) w.streams.push_back({s, ctx.stream_priority(s)});
    for (const rt::TaskRecord& r : ctx.tasks()) {
        const sfumato::Task& t = *r.task;
        workload::Task x;
        x.index = w.tasks.size();
        x.stream = r.stream;
        switch (t.kind) {
            case TaskKind::Memcpy:
                x.kind = Kind::Memcpy;
                x.dir = t.copy.dir;
                x.bytes = t.copy.bytes;
                x.pinned = t.copy.pinned;
                break;
            case TaskKind::Kernel:
                if (t.kernel.op.empty())
                    throw InputError("cannot record kernel '" + t.kernel.name + "': it was not launched from the operator library");
                x.kind = Kind::Kernel;
                x.op = t.kernel.op;
                x.args = t.kernel.op_args;
                x.args.erase("block_dim");
                x.block_dim = t.kernel.block_dim;
                break;
            case TaskKind::EventRecord:
                x.kind = Kind::Record;
                x.event = "e" + std::to_string(t.event);
                break;
            case TaskKind::EventWait:
                x.kind = Kind::Wait;
                x.event = "e" + std::to_string(t.event);
                break;
            default:
                continue;  // host callbacks have no replayable form
        }
        w.tasks.push_back(std::move(x));
    }
    return w;
}

}  // namespace sfumato::workload
