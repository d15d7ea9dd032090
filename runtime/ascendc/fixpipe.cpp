// The FixPipe's per-channel quantisation in the Ascend C layer (Atlas A2, split cube cores): the
// 64-bit quantisation words, one per output column, move from L1 (C1) into the FixPipe buffer
// (C2PIPE2GM) with copy_l1_to_fb, an instruction of the FIX pipe; the fixpipe instruction with
// quant VECTOR reads them from there (isa::FixpipeParams gives the word's format). Two ways in,
// as in the reference:
// - DataCopy(C2PIPE2GM <- C1) + SetFixPipeConfig(fb tensor) (the FPC register's QuantPreAddr),
//   then Fixpipe/DataCopy with a V* quantPre reads the words at that address;
// - Fixpipe(dst, src, cbufWorkspace, params): the words stay in L1 and each call moves them to the
//   buffer itself, at most 256 columns at once (fb0 holds 256 words) and, past 256, in chunks of
//   128 alternating between the buffer's halves (the vendor's public tiling of this call), one
//   copy_l1_to_fb and one fixpipe per chunk.
#include <algorithm>

#include "isa/layout.h"

#include "runtime/ascendc/core_run.h"
#include "sfumato_ascendc/cube.h"
#include "sfumato_ascendc/data_copy.h"
#include "sfumato_ascendc/fixpipe_more.h"

namespace sfumato::ascendc {

namespace {
constexpr uint64_t kWord = 8;        // bytes of one quantisation word
constexpr uint32_t kFbUnit = 128;    // copy_l1_to_fb moves whole 128-byte units (the reference)
constexpr uint32_t kFbWords = 256;   // words one fixpipe reads at most (fb0: 2048 bytes)
constexpr uint32_t kFbChunk = 128;   // columns per fixpipe past kFbWords (half the buffer each)
uint64_t round_fb(uint64_t n) { return (n + kFbUnit - 1) / kFbUnit * kFbUnit; }
}  // namespace

void copy_l1_to_fb(AscendC::TPosition src_pos, uint32_t src, uint32_t dst, isa::CopyParams c, uint64_t src_len,
                   uint64_t dst_len) {
    CoreState& st = *g_current;
    if (physical(src_pos) != isa::Pos::L1) fail("DataCopy into C2PIPE2GM (the FixPipe buffer): the source must be in C1 (L1)");
    if (c.nburst == 0 || c.len_bytes == 0) fail("DataCopy C1 -> C2PIPE2GM: blockCount and blockLen must be at least 1");
    if (c.src_gap || c.dst_gap) fail("DataCopy C1 -> C2PIPE2GM with srcStride or dstStride other than 0: not modelled");
    const uint64_t bytes = uint64_t{c.nburst} * c.len_bytes;
    // The move is in 128-byte units: a tensor's last unit may extend past its length.
    if (bytes > round_fb(src_len) || bytes > round_fb(dst_len))
        fail("DataCopy C1 -> C2PIPE2GM: " + std::to_string(bytes) + " bytes (blockLen counts 128 bytes) exceed a tensor of " +
             std::to_string(std::min(src_len, dst_len)) + " bytes");
    kernel::detail::copy_local(*st.ctx, isa::DType::UINT8, {dst, isa::Pos::FB}, {src, isa::Pos::L1}, c);
}

void set_fixpipe_config(AscendC::TPosition pos, uint32_t addr) {
    // The chip takes FPC[15:8] = the address in 128-byte units, whatever the tensor; the reference
    // admits a C2PIPE2GM or a CO1 tensor.
    if (pos != AscendC::TPosition::C2PIPE2GM && pos != AscendC::TPosition::CO1)
        fail("SetFixPipeConfig: the tensor must be in C2PIPE2GM (the FixPipe buffer) or CO1");
    g_current->fix_fpc_quant = addr / kFbUnit * kFbUnit;
}

void fixpipe_fpc(isa::DType acc, isa::DType out, const isa::Addr& dst, const isa::Addr& src,
                 const kernel::FixpipeParams& k) {
    CoreState& st = *g_current;
    isa::Addr fb{0, isa::Pos::FB};
    if (k.quantPre == isa::QuantMode::VECTOR) {
        if (st.fix_fpc_quant < 0)
            fail("per-channel quantPre (VDEQF16, VQF322B8_PRE, VREQ8) needs SetFixPipeConfig first: no quantisation "
                 "words in C2PIPE2GM");
        fb.addr = static_cast<uint64_t>(st.fix_fpc_quant);
    }
    kernel::detail::fixpipe(*st.ctx, isa::Opcode::FIXPIPE, acc, out, dst, src,
                            k.quantPre == isa::QuantMode::VECTOR ? &fb : nullptr, k);
}

void fixpipe_workspace(isa::DType acc, isa::DType out, const isa::Addr& dst, bool nd, const isa::Addr& src,
                       AscendC::TPosition ws_pos, uint32_t ws, uint64_t ws_len, const AscendC::FixpipeParamsV220& p) {
    CoreState& st = *g_current;
    const kernel::FixpipeParams k = kfixpipe(p, nd);
    if (k.quantPre != isa::QuantMode::VECTOR) {  // the tensor is read only by the per-channel modes
        kernel::detail::fixpipe(*st.ctx, isa::Opcode::FIXPIPE, acc, out, dst, src, nullptr, k);
        return;
    }
    if (physical(ws_pos) != isa::Pos::L1) fail("Fixpipe: the quantisation tensor (cbufWorkspace) must be in C1 (L1)");
    const uint32_t n = k.nSize;
    if (n * kWord > ws_len)
        fail("Fixpipe: " + std::to_string(n) + " columns need " + std::to_string(n * kWord) +
             " bytes of quantisation words; cbufWorkspace has " + std::to_string(ws_len));
    const uint32_t chunk = n <= kFbWords ? n : kFbChunk;
    if (chunk != n && k.unitFlag) fail("Fixpipe: a unit flag with per-channel quantisation of more than 256 columns is not modelled");
    kernel::FixpipeParams kc = k;
    if (!kc.srcStride) kc.srcStride = static_cast<uint16_t>(isa::round_up16(k.mSize));
    if (!kc.dstStride) kc.dstStride = nd ? n : k.mSize;  // the whole matrix's, not a chunk's
    const uint32_t eo = isa::dtype_size(out);
    const bool split = k.channelSplit && !nd && out == isa::DType::FP32;
    const uint32_t c0 = eo == 4 && !split ? 16u : 32u / eo;  // NZ column group (isa::fix_nz_c0)
    for (uint32_t j0 = 0, i = 0; j0 < n; j0 += chunk, ++i) {
        kc.nSize = static_cast<uint16_t>(std::min(chunk, n - j0));
        const uint32_t fb = chunk == n ? 0 : (i % 2) * kFbChunk * kWord;
        const uint32_t bytes = static_cast<uint32_t>(round_fb(kc.nSize * kWord));
        kernel::detail::copy_local(*st.ctx, isa::DType::UINT8, {fb, isa::Pos::FB}, {ws + j0 * kWord, isa::Pos::L1},
                                   {1, bytes, 0, 0});
        isa::Addr s = src, d = dst;
        s.addr += uint64_t{j0 / 16} * kc.srcStride * 64;
        d.addr += nd ? uint64_t{j0} * eo : uint64_t{j0 / c0} * kc.dstStride * 32;
        const isa::Addr f{fb, isa::Pos::FB};
        kernel::detail::fixpipe(*st.ctx, isa::Opcode::FIXPIPE, acc, out, d, s, &f, kc);
    }
}

}  // namespace sfumato::ascendc
