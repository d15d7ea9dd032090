// Recorded instruction streams: what each block of a kernel issued (instructions and scalar
// cycle charges, in issue order), captured by wrapping the kernel body's instruction sink, kept
// per launch, written to and read from an HDF5 file (/kernels/<key>: `instrs`, the raw
// instruction records, and `index`, one row per block stream: core kind, block, sub-block,
// first record, count), and replayed into a core's sink without the kernel code. A replay
// issues the same calls in the same order, so on the same chip it takes the same cycles; GM
// operand addresses are relocated from the recorded buffers to the replay's.
// Simplified: records are the in-memory Instr layout (the file stores its size and refuses a
// build with another); scalar charges are SCALAR records marked as charges.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "isa/instr.h"
#include "isa/instr_sink.h"
#include "sim/device_if.h"

namespace sfumato::workload {

struct BlockStream {
    isa::CoreKind core = isa::CoreKind::Coupled;
    uint32_t block = 0, sub = 0;
    std::vector<isa::Instr> instrs;
};

struct KernelStreams {
    std::string key;  // dataset group name, e.g. "k12"
    std::vector<std::unique_ptr<BlockStream>> streams;
    const BlockStream* find(isa::CoreKind core, uint32_t block, uint32_t sub) const;
};

// Wraps k.body so every block's issue stream is appended to `into` (the body's behaviour and
// timing are unchanged).
void record_instructions(KernelDesc& k, std::shared_ptr<KernelStreams> into);

// Writes every kernel's streams (atomically). Throws SimError on I/O failure.
void write_instr_h5(const std::string& path, const std::vector<std::shared_ptr<KernelStreams>>& kernels);
// Reads the named kernels' streams; throws InputError naming the file and key.
std::map<std::string, std::shared_ptr<const KernelStreams>> read_instr_h5(const std::string& path);

// Maps a recorded GM address into the replay's memory (identity when not inside a recorded
// buffer).
using Relocate = std::function<uint64_t(uint64_t)>;

// What a target chip must offer to hold a recorded kernel: empty when it can, else the reason.
std::string check_streams_fit(const KernelStreams& k, KernelKind kind, uint32_t block_dim, const DeviceInfo& dev);

// A kernel body that replays the streams (each core finds its own by kind, block and sub-block).
std::function<void(isa::IInstrSink&)> replay_body(std::shared_ptr<const KernelStreams> k, Relocate reloc);

}  // namespace sfumato::workload
