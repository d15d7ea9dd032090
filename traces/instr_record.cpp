#include "traces/instr_record.h"

#include <H5Cpp.h>

#include <algorithm>

#include "isa/semantics.h"
#include "sim/error.h"
#include "traces/atomic_file.h"

namespace sfumato::workload {

namespace {

// A SCALAR record with this seq is a scalar() charge, not an issued SCALAR instruction.
constexpr uint32_t kChargeMark = 0xffffffffu;

class RecordingSink : public isa::IInstrSink {
public:
    RecordingSink(isa::IInstrSink& inner, BlockStream& out) : m_in(inner), m_out(out) {}
    void issue(const isa::Instr& in) override {
        m_out.instrs.push_back(in);
        m_in.issue(in);
    }
    // A scalar load records like any instruction and returns what the core read.
    uint64_t load(const isa::Instr& in) override {
        m_out.instrs.push_back(in);
        return m_in.load(in);
    }
    void scalar(uint32_t cycles) override {
        isa::Instr c = isa::make_instr(isa::Opcode::SCALAR);
        c.sc.cycles = cycles;
        c.seq = kChargeMark;
        m_out.instrs.push_back(c);
        m_in.scalar(cycles);
    }
    uint32_t block_idx() const override { return m_in.block_idx(); }
    uint32_t block_num() const override { return m_in.block_num(); }
    uint32_t sub_block_idx() const override { return m_in.sub_block_idx(); }
    isa::CoreKind core_kind() const override { return m_in.core_kind(); }
    uint64_t buffer_size(isa::Pos pos) const override { return m_in.buffer_size(pos); }
    uint32_t event_ids() const override { return m_in.event_ids(); }

private:
    isa::IInstrSink& m_in;
    BlockStream& m_out;
};

const char* core_name(isa::CoreKind k) {
    return k == isa::CoreKind::Coupled ? "coupled cores" : k == isa::CoreKind::Cube ? "cube cores (AIC)" : "vector cores (AIV)";
}

}  // namespace

const BlockStream* KernelStreams::find(isa::CoreKind core, uint32_t block, uint32_t sub) const {
    for (const auto& s : streams) {
        if (s->core == core && s->block == block && s->sub == sub) return s.get();
    }
    return nullptr;
}

void record_instructions(KernelDesc& k, std::shared_ptr<KernelStreams> into) {
    auto body = std::move(k.body);
    k.body = [body = std::move(body), into](isa::IInstrSink& s) {
        auto bs = std::make_unique<BlockStream>();
        bs->core = s.core_kind();
        bs->block = s.block_idx();
        bs->sub = s.sub_block_idx();
        BlockStream& ref = *bs;
        into->streams.push_back(std::move(bs));
        RecordingSink rec(s, ref);
        body(rec);
    };
}

void write_instr_h5(const std::string& path, const std::vector<std::shared_ptr<KernelStreams>>& kernels) {
    write_atomically(path, [&](const std::string& tmp) {
        try {
            H5::Exception::dontPrint();
            H5::H5File file(tmp, H5F_ACC_TRUNC);
            const uint64_t isz = sizeof(isa::Instr);
            H5::Attribute a = file.openGroup("/").createAttribute("instr_size", H5::PredType::NATIVE_UINT64, H5::DataSpace(H5S_SCALAR));
            a.write(H5::PredType::NATIVE_UINT64, &isz);
            H5::Group root = file.createGroup("/kernels");
            for (const auto& k : kernels) {
                H5::Group g = root.createGroup(k->key);
                std::vector<uint64_t> index;
                std::vector<uint8_t> bytes;
                uint64_t first = 0;
                for (const auto& s : k->streams) {
                    index.insert(index.end(), {static_cast<uint64_t>(s->core), s->block, s->sub, first, s->instrs.size()});
                    const auto* p = reinterpret_cast<const uint8_t*>(s->instrs.data());
                    bytes.insert(bytes.end(), p, p + s->instrs.size() * isz);
                    first += s->instrs.size();
                }
                const hsize_t idims[2] = {k->streams.size(), 5};
                H5::DataSet di = g.createDataSet("index", H5::PredType::NATIVE_UINT64, H5::DataSpace(2, idims));
                if (!index.empty()) di.write(index.data(), H5::PredType::NATIVE_UINT64);
                const hsize_t bdims[1] = {bytes.size()};
                H5::DataSet db = g.createDataSet("instrs", H5::PredType::NATIVE_UINT8, H5::DataSpace(1, bdims));
                if (!bytes.empty()) db.write(bytes.data(), H5::PredType::NATIVE_UINT8);
            }
        } catch (const H5::Exception& e) {
            throw SimError(kExitFailure, "cannot write '" + tmp + "': " + e.getDetailMsg());
        }
    });
}

std::map<std::string, std::shared_ptr<const KernelStreams>> read_instr_h5(const std::string& path) {
    std::map<std::string, std::shared_ptr<const KernelStreams>> out;
    try {
        H5::Exception::dontPrint();
        H5::H5File file(path, H5F_ACC_RDONLY);
        uint64_t isz = 0;
        file.openGroup("/").openAttribute("instr_size").read(H5::PredType::NATIVE_UINT64, &isz);
        if (isz != sizeof(isa::Instr))
            throw InputError("instruction file '" + path + "': records of " + std::to_string(isz) +
                             " bytes were written by another build of sfumato (this one uses " +
                             std::to_string(sizeof(isa::Instr)) + ")");
        H5::Group root = file.openGroup("/kernels");
        for (hsize_t i = 0; i < root.getNumObjs(); ++i) {
            const std::string key = root.getObjnameByIdx(i);
            H5::Group g = root.openGroup(key);
            H5::DataSet di = g.openDataSet("index");
            hsize_t idims[2] = {0, 0};
            di.getSpace().getSimpleExtentDims(idims);
            if (idims[1] != 5) throw InputError("instruction file '" + path + "': kernel " + key + ": bad index");
            std::vector<uint64_t> index(idims[0] * 5);
            if (!index.empty()) di.read(index.data(), H5::PredType::NATIVE_UINT64);
            H5::DataSet db = g.openDataSet("instrs");
            hsize_t bdims[1] = {0};
            db.getSpace().getSimpleExtentDims(bdims);
            std::vector<uint8_t> bytes(bdims[0]);
            if (!bytes.empty()) db.read(bytes.data(), H5::PredType::NATIVE_UINT8);
            auto k = std::make_shared<KernelStreams>();
            k->key = key;
            for (hsize_t r = 0; r < idims[0]; ++r) {
                const uint64_t* row = &index[r * 5];
                if (row[0] > 2 || (row[3] + row[4]) * isz > bytes.size())
                    throw InputError("instruction file '" + path + "': kernel " + key + ": index row " +
                                     std::to_string(r) + " is out of range");
                auto s = std::make_unique<BlockStream>();
                s->core = static_cast<isa::CoreKind>(row[0]);
                s->block = static_cast<uint32_t>(row[1]);
                s->sub = static_cast<uint32_t>(row[2]);
                s->instrs.resize(row[4]);
                std::copy_n(bytes.data() + row[3] * isz, row[4] * isz, reinterpret_cast<uint8_t*>(s->instrs.data()));
                k->streams.push_back(std::move(s));
            }
            out.emplace(key, std::move(k));
        }
    } catch (const H5::Exception& e) {
        throw InputError("instruction file '" + path + "' cannot be read: " + e.getDetailMsg());
    }
    return out;
}

std::string check_streams_fit(const KernelStreams& k, KernelKind kind, uint32_t block_dim, const DeviceInfo& dev) {
    const bool split = dev.arch == "split";
    bool cross = false;
    uint32_t max_sub = 0;
    uint64_t need[static_cast<int>(isa::Pos::kCount)] = {};
    for (const auto& s : k.streams) {
        if ((s->core == isa::CoreKind::Coupled) == split)
            return std::string("its streams ran on ") + core_name(s->core) + "; the target chip has " +
                   (split ? "split cube and vector cores" : "coupled cores");
        if (s->core == isa::CoreKind::Vector) max_sub = std::max(max_sub, s->sub);
        for (const isa::Instr& in : s->instrs) {
            if (in.op == isa::Opcode::SET_CROSS_FLAG || in.op == isa::Opcode::WAIT_CROSS_FLAG) cross = true;
            isa::Extent ex[isa::kMaxExtents];
            const int n = isa::footprint(in, ex);
            for (int i = 0; i < n; ++i) {
                uint64_t& m = need[static_cast<int>(ex[i].pos)];
                m = std::max(m, ex[i].hi);
            }
        }
    }
    const std::pair<isa::Pos, uint64_t> caps[] = {{isa::Pos::UB, dev.ub_bytes},   {isa::Pos::L1, dev.l1_bytes},
                                                  {isa::Pos::L0A, dev.l0a_bytes}, {isa::Pos::L0B, dev.l0b_bytes},
                                                  {isa::Pos::L0C, dev.l0c_bytes}};
    for (const auto& [pos, cap] : caps) {
        const uint64_t n = need[static_cast<int>(pos)];
        if (n > cap)
            return std::string("its blocks use ") + std::to_string(n) + " bytes of " + isa::pos_name(pos) +
                   "; the target chip's " + isa::pos_name(pos) + " holds " + std::to_string(cap);
    }
    if (kind == KernelKind::Mix && split && max_sub + 1 != dev.aiv_per_aic)
        return "its blocks pair one cube core with " + std::to_string(max_sub + 1) +
               " vector cores; the target chip pairs " + std::to_string(dev.aiv_per_aic);
    const uint32_t cores = kind == KernelKind::Vector ? dev.vector_cores : dev.cube_cores;
    if (cross && block_dim > cores)
        return "its " + std::to_string(block_dim) + " blocks synchronise across cores and must all be resident; "
               "the target chip has " + std::to_string(cores) + " cores of that kind";
    return {};
}

std::function<void(isa::IInstrSink&)> replay_body(std::shared_ptr<const KernelStreams> k, Relocate reloc) {
    return [k, reloc](isa::IInstrSink& s) {
        const BlockStream* bs = k->find(s.core_kind(), s.block_idx(), s.sub_block_idx());
        if (!bs) return;  // a core the recording never ran (checked before launch)
        for (const isa::Instr& rec : bs->instrs) {
            if (rec.op == isa::Opcode::SCALAR && rec.seq == kChargeMark) {
                s.scalar(rec.sc.cycles);
                continue;
            }
            isa::Instr in = rec;
            for (isa::Addr* a : {&in.dst, &in.src0, &in.src1, &in.src2}) {
                if (a->pos == isa::Pos::GM) a->addr = reloc(a->addr);
            }
            s.issue(in);
        }
    };
}

}  // namespace sfumato::workload
