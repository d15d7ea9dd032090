// Records a host program's runtime calls as a workload file, as issued: streams with their
// priorities; every device allocation and free as alloc/free tasks on named buffers (with the
// recorded address); memcpy between those buffers (sync or async, pinned or not); kernel
// launches as the operator-library call (`op` + `args`) and/or the graph node with its operand
// tensors in named buffers (`node`), with each launch's shape (kind, block_dim, roofline
// figures); event record/wait; stream, event and device synchronisation. Each task carries the
// host time since the previous recorded call returned (`gap_ns`: the program's own work and the
// calls that are not replayed, such as stream creation), so a replay on the same chip issues
// every call at the same time. With instructions on, every kernel block's issued instruction
// stream is kept too (traces/instr_record.h) and written to an HDF5 file beside the workload.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/rt/context.h"
#include "traces/instr_record.h"
#include "traces/workload.h"

namespace sfumato::workload {

class Recorder {
public:
    // Attach before the program's first call.
    Recorder(rt::Context& ctx, bool instructions);
    // The workload so far; throws InputError when a kernel can be replayed neither by name nor
    // by its instructions. `recorded_on` describes the chip.
    Workload workload(const nlohmann::json& recorded_on) const;
    // Writes path (JSON) and, with instructions, path's stem + ".instr.h5" beside it.
    void write(const std::string& path, const nlohmann::json& recorded_on) const;

private:
    rt::Context& m_ctx;
    bool m_instr;
    std::vector<std::shared_ptr<KernelStreams>> m_kernels;  // per launch, in launch order
};

// The instruction file written beside a workload file: "dir/w.json" -> "dir/w.instr.h5".
std::string instr_file_for(const std::string& workload_path);

}  // namespace sfumato::workload
