// The Ascend C layer's API families against host references: tests/ascendc/conformance.cpp runs one kernel
// per family on ascend910b-like and compares every output element with the host's computation of what the
// public API reference says the calls do. Functional and timing mode take the same cycles for each family's
// kernel.
#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support.h"

using namespace sfumato::test;
namespace fs = std::filesystem;

namespace {

CliResult sh(const std::string& cmd) { return run_shell(cmd); }

uint64_t cycles(const std::string& dir) {
    const nlohmann::json s = read_json(dir + "/summary.json");
    uint64_t c = 0;
    for (const auto& op : s["ops"]) c += op["cycles"].get<uint64_t>();
    return c;
}

void family(const std::string& name) {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    const std::string dir = temp_dir("ascendc_conf_" + name);
    const CliResult f =
        sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_OUT=" + dir + "/f " +
           prog + " " + name);
    INFO(f.output);
    REQUIRE(f.code == 0);
    CHECK_THAT(f.output, Catch::Contains(name + " ok"));
    const CliResult t = sh("cd " + dir +
                           " && SFUMATO_CONFIG=ascend910b-like "
                           "SFUMATO_MODE=timing SFUMATO_TRACE=off SFUMATO_OUT=" +
                           dir + "/t " + prog + " " + name);
    REQUIRE(t.code != 2);
    CHECK(cycles(dir + "/f") > 0);
    CHECK(cycles(dir + "/f") == cycles(dir + "/t"));
}

}  // namespace

TEST_CASE("ascendc conformance: Copy (masked and strided)") { family("copy"); }
TEST_CASE("ascendc conformance: LocalTensor operators (dst = a + b, -, *) over dst's size") { family("symbol"); }
TEST_CASE("ascendc conformance: ReduceRepeat sum/max/min with and without index") { family("reduce_repeat"); }
TEST_CASE(
    "ascendc conformance: ReduceDataBlock and BlockReduce (one result "
    "per block)") {
    family("reduce_block");
}
TEST_CASE(
    "ascendc conformance: the mask register's counter mode (isSetMask = "
    "false)") {
    family("counter");
}
TEST_CASE("ascendc conformance: sliced DataCopy GM -> UB over two dimensions") { family("slice"); }
TEST_CASE("ascendc conformance: DataCopyPad padding with the SetPadValue value") { family("pad"); }
TEST_CASE(
    "ascendc conformance: atomic max and min stores (SetAtomicMax/Min, "
    "DisableDmaAtomic)") {
    family("atomic");
}
TEST_CASE("ascendc conformance: scalar GM access bypassing the data cache, dcci") { family("cache"); }
TEST_CASE("ascendc conformance: blocks chained by IBSet/IBWait run in order") { family("ibsync"); }
TEST_CASE("ascendc conformance: InitDetermineComputeWorkspace/WaitPreBlock/NotifyNextBlock order the blocks") {
    family("determine");
}
TEST_CASE("ascendc conformance: InitOutput fills GM (MTE3), WaitPreTaskEnd/SetNextTaskStart") { family("init_output"); }
TEST_CASE("ascendc conformance: GroupBarrier waiters see both arrivals, over two rounds") { family("group"); }
TEST_CASE("ascendc conformance: TBufPool sub-pools, a shared range after Reset, a user-defined pool") {
    family("bufpool");
}
TEST_CASE("ascendc conformance: ReducePairElem, PairReduceSum (vcpadd): count, bit masks") { family("pair"); }
TEST_CASE("ascendc conformance: CreateVecIndex (vci), count and mask forms") { family("index"); }
TEST_CASE("ascendc conformance: GatherMask (vreducev2), fixed patterns, counter mode, bit tensor, rsvdCnt") {
    family("gathermask");
}
TEST_CASE(
    "ascendc conformance: Sort32 (vbitsort) and MrgSort (vmrgsort4): float and half, 2 to 4 lists, repeats, "
    "exhausted suspension, GetMrgSortResult, sortedNum") {
    family("sort");
}
TEST_CASE("ascendc conformance: Gatherb (vgatherb): byte offsets, dst block and repeat strides") {
    family("gatherb");
}
TEST_CASE("ascendc conformance: TransDataTo5HD (vnchwconv): its three forms, half, float and int8 halves, strides") {
    family("trans5hd");
}
TEST_CASE("ascendc conformance: Cast half <-> int4b_t (vconv), CEIL/RINT/FLOOR, mask, count and block-stride forms") {
    family("int4");
}
TEST_CASE("ascendc conformance: LoadData3DParamsV2::enTranspose into L0A and L0B (float, N padded to 16)") {
    family("load3d_t");
}
TEST_CASE("ascendc conformance: load3d through the FMATRIX register (SetFmatrix, IsResetLoad3dConfig false)") {
    family("load3d_fmatrix");
}
TEST_CASE(
    "ascendc conformance: Mmad with kDirectionAlign: float A transposed by load3d, k = 24 padded to 32 in "
    "L0A") {
    family("load3d_kalign");
}
TEST_CASE("ascendc conformance: int4b_t Mmad (K0 64): DataCopy Nd2Nz and LoadData 2D in bytes, int32 out") {
    family("int4_mmad");
}
TEST_CASE("ascendc conformance: ListTensorDesc: GetSize, GetDesc, GetDataPtr in GM") { family("list"); }
TEST_CASE(
    "ascendc conformance: Fixpipe to GM as NZ float (16-column fractals), with channel split, ND with ReLU") {
    family("fixpipe");
}
TEST_CASE(
    "ascendc conformance: DataCopy CO1 -> GM with DataCopyCO12DstParams, quantisation word, ReLU, NZ/ND") {
    family("co12");
}
TEST_CASE("ascendc conformance: Mmad without a bias tensor, C from the bias table (cmatrixSource)") { family("c2"); }
TEST_CASE("ascendc conformance: DataCopy of a half bias in L1 into the float bias table converts it") { family("c2h"); }
TEST_CASE("ascendc conformance: Mmad with m = 1 is a GEMV (A a contiguous row vector in L0A)") {
    family("gemv");
}
TEST_CASE(
    "ascendc conformance: CrossCoreSetFlag/WaitFlag modes 0, 1, 2 meet as the reference says (every AIV, "
    "both "
    "AIVs of a core, both AIVs before their AIC)") {
    family("xflags");
}
TEST_CASE("ascendc conformance: a block polling a GM word with GetValue sees another block's late store") {
    family("poll");
}
TEST_CASE(
    "ascendc conformance: Fixpipe with ndNum 3 drains three L0C matrices to strided ND matrices in GM") {
    family("fixpipe_nd");
}
TEST_CASE(
    "ascendc conformance: Mmad/Fixpipe unit flags order the cube and the FixPipe without M_FIX or FIX_M "
    "flags") {
    family("unitflag");
}
TEST_CASE(
    "ascendc conformance: per-channel quantisation (VQF322B8_PRE) from an L1 tensor in chunks, to NZ in L1 then "
    "GM, and through C2PIPE2GM with SetFixPipeConfig") {
    family("perchannel");
}
TEST_CASE(
    "ascendc conformance: the forms catlass uses (a TBuf in C2PIPE2GM, SetFixPipeConfig<T, setRelu>, SetHF32Mode(false), "
    "SetMMLayoutTransform) give the per-channel results") {
    family("perchannel_tbuf");
}
TEST_CASE(
    "ascendc conformance: LoadDataWithSparse and MmadWithSparse compute the reference's 4:2 selection (two loads "
    "with startIndex, one through SetAddr, an accumulating second Mmad), and the Matmul with a SparseMatmulType B") {
    family("sparse");
    family("sparse_mm");
}
TEST_CASE(
    "ascendc conformance: the vector forms catlass uses (repeat-parameter constructors, MulAddDst<T, U, isSetMask>, "
    "SetL2CacheHint)") {
    family("catlass_vec");
}
TEST_CASE(
    "ascendc conformance: Select, every form (modes 0, 1 and 2, count, mask, bit-mask and register forms, the "
    "tensor-scalar mode in place as catlass uses it)") {
    family("select");
}
TEST_CASE("ascendc conformance: ShiftLeft of uint16_t and uint32_t (count and mask forms, a shift by the width)") {
    family("shift");
}
TEST_CASE("ascendc conformance: SetHF32Mode(true) stops the run naming the call, exit 2") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    for (const char* mode : {"functional", "timing"}) {
        const std::string dir = temp_dir(std::string("ascendc_conf_hf32_") + mode);
        const CliResult r =
            sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_MODE=" + mode +
               " SFUMATO_OUT=" + dir + "/o " + prog + " hf32_on");
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains("AscendC::SetHF32Mode") && Catch::Contains("HF32"));
        CHECK_FALSE(fs::exists(dir + "/o/summary.json"));
    }
}
TEST_CASE("ascendc conformance: an event set twice before its first wait is waited twice (flags count sets)") {
    family("flag_twice");
}
TEST_CASE("ascendc conformance: 65537 sets of one event with no wait stop the run naming the set_flag, exit 2") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    for (const char* mode : {"functional", "timing"}) {
        const std::string dir = temp_dir(std::string("ascendc_conf_flag_flood_") + mode);
        const CliResult r =
            sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_MODE=" + mode +
               " SFUMATO_OUT=" + dir + "/o " + prog + " flag_flood");
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains("set_flag V->MTE3 #0") && Catch::Contains("65536 sets"));
        CHECK_FALSE(fs::exists(dir + "/o/summary.json"));
    }
}
TEST_CASE("ascendc conformance: a Fixpipe with a unit flag on L0C no Mmad set is a deadlock, exit 4") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    for (const char* mode : {"functional", "timing"}) {
        const std::string dir = temp_dir(std::string("ascendc_conf_unitflag_never_") + mode);
        const CliResult r =
            sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_MODE=" + mode +
               " SFUMATO_OUT=" + dir + "/o " + prog + " unitflag_never");
        INFO(r.output);
        CHECK(r.code == 4);
        CHECK_THAT(r.output, Catch::Contains("unit flag"));
        CHECK_FALSE(fs::exists(dir + "/o/summary.json"));
    }
}
TEST_CASE("ascendc conformance: a poll of a GM word nothing can change any more stops the run, exit 2") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    for (const char* mode : {"functional", "timing"}) {
        const std::string dir = temp_dir(std::string("ascendc_conf_poll_never_") + mode);
        const CliResult r =
            sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_MODE=" + mode +
               " SFUMATO_OUT=" + dir + "/o " + prog + " poll_never");
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains("GlobalTensor::GetValue") && Catch::Contains("block 0") &&
                                 Catch::Contains("nothing can change it"));
        CHECK_FALSE(fs::exists(dir + "/o/summary.json"));
    }
}
TEST_CASE("ascendc conformance: Matmul (IterateAll, bias, unaligned shape over several cores, SetTail)") {
    family("matmul");
}
TEST_CASE("ascendc conformance: Matmul with A and B transposed, half C, Iterate + GetTensorC, N first") {
    family("matmul_trans");
}
TEST_CASE("ascendc conformance: Matmul with C in NZ and small fixed base blocks (SetFixSplit)") {
    family("matmul_nz");
}
TEST_CASE("ascendc conformance: the Matmul tiling's blocks fit the chip's buffers and cores") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    const std::string dir = temp_dir("ascendc_conf_matmul_tiling");
    const CliResult r = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_OUT=" + dir +
                           "/o " + prog + " matmul_tiling");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK_THAT(r.output, Catch::Contains("matmul_tiling ok"));
}
TEST_CASE("ascendc conformance: kernels read device memory through plain __gm__ pointers") { family("raw_gm"); }
TEST_CASE("ascendc conformance: a store through a plain __gm__ pointer stops the run, exit 2") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    const std::string dir = temp_dir("ascendc_conf_raw_gm_store");
    const CliResult r = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_OUT=" + dir +
                           "/o " + prog + " raw_gm_store");
    INFO(r.output);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Catch::Contains("a store to GM through a plain __gm__ pointer"));
    CHECK_FALSE(fs::exists(dir + "/o/summary.json"));
}
TEST_CASE("ascendc conformance: a Matmul tiling whose base blocks are not fractal-aligned stops the run, exit 2") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    for (const char* mode : {"functional", "timing"}) {
        const std::string dir = temp_dir(std::string("ascendc_conf_matmul_bad_") + mode);
        const CliResult r = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_MODE=" +
                               mode + " SFUMATO_OUT=" + dir + "/o " + prog + " matmul_bad_tiling");
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains("Matmul::Init") && Catch::Contains("baseM and baseN must be multiples of 16"));
        CHECK_FALSE(fs::exists(dir + "/o/summary.json"));
    }
}
TEST_CASE(
    "ascendc conformance: softmax family (SoftMax, SimpleSoftMax, LogSoftMax, SoftmaxFlashV2, SoftmaxGrad, "
    "SoftmaxGradFront) and its host tiling") {
    family("softmax");
}
TEST_CASE(
    "ascendc conformance: activations (Sigmoid, Tanh, Gelu, FasterGelu, Swish, Silu, SwiGLU, GeGLU, in place "
    "through the sharedTmpBuffer, half Sigmoid)") {
    family("activation");
}
TEST_CASE(
    "ascendc conformance: normalisation (RmsNorm, LayerNorm, LayerNormGrad, LayerNormGradBeta, DeepNorm) in slices "
    "of the host's minimum sharedTmpBuffer") {
    family("norm");
}
TEST_CASE("ascendc conformance: quantisation (AscendQuant, AscendDequant, AscendAntiQuant per group)") {
    family("quant");
}
TEST_CASE("ascendc conformance: advanced Sort (Concat, Sort, Extract) and TopK with finish flags") {
    family("sort_adv");
}
TEST_CASE(
    "ascendc conformance: WelfordUpdate and WelfordFinalize (with counts, without: head and tail, no tail), a "
    "LocalTensor SetValue ordered after the vector write before it") {
    family("welford");
}
TEST_CASE("ascendc conformance: LayerNorm with LayerNormPara (mean and rstd) and Normalize") { family("norm_v2"); }
TEST_CASE(
    "ascendc conformance: advanced math (Exp with Taylor terms, Log/Log2/Log10, Ceil/Floor/Trunc/Frac, Clamp, "
    "Erf, Acosh, Power, Fmod, Axpy half to float, Xor, CumSum, Sin/Cos/Tan, Asin/Acos/Atan, Sinh/Cosh/Atanh/Asinh, "
    "Sign) in slices of the minimum sharedTmpBuffer") {
    family("math");
    family("trig");
}
TEST_CASE(
    "ascendc conformance: Sum, ReduceMax/Min/Mean/Sum (AR, RA), Arange, Select with a byte mask, DropOut (byte and "
    "bit masks), Broadcast, Pad, UnPad, Transpose NZ2ND_0213, Fill of GM") {
    family("layout");
}
TEST_CASE("ascendc conformance: SoftmaxFlashV3 (half, without and with update, outputs over the inputs)") {
    family("softmax_v3");
}
TEST_CASE("ascendc conformance: BatchNorm and GroupNorm (float and half)") { family("norm_more"); }
TEST_CASE("ascendc conformance: TransData NCDHW <-> FRACTAL_Z_3D and NDC1HWC0 (padded N, C and positions)") {
    family("transdata");
}
TEST_CASE("ascendc conformance: Matmul IterateBatch (NORMAL layout) with BatchMatmulTiling") { family("matmul_batch"); }
TEST_CASE("ascendc conformance: Matmul in mix mode (the AIVs' Matmul calls served by their AIC)") {
    family("matmul_mix");
}
TEST_CASE("ascendc conformance: Matmul isPartialOutput in mix mode (the AIV's End waits for its AIC's slices)") {
    family("matmul_partial");
}
TEST_CASE("ascendc conformance: Matmul C into the AIVs' UB (Iterate<false> + GetTensorC<false>, and synchronous)") {
    family("matmul_ub");
}
TEST_CASE("ascendc conformance: Matmul GetTensorC into UB without SetWorkspace stops the run, exit 2") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    for (const char* mode : {"functional", "timing"}) {
        const std::string dir = temp_dir(std::string("ascendc_conf_matmul_nows_") + mode);
        const CliResult r = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_MODE=" +
                               mode + " SFUMATO_OUT=" + dir + "/o " + prog + " matmul_ub_nows");
        INFO(r.output);
        CHECK(r.code == 2);
        CHECK_THAT(r.output, Catch::Contains("Matmul::GetTensorC") && Catch::Contains("without SetWorkspace"));
        CHECK_FALSE(fs::exists(dir + "/o/summary.json"));
    }
}
TEST_CASE("ascendc conformance: a mix kernel's AIVs calling Matmul::End twice deadlock (exit 4, no outputs)") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    for (const char* mode : {"functional", "timing"}) {
        const std::string dir = temp_dir(std::string("ascendc_conf_matmul_end2_") + mode);
        const CliResult r = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_MODE=" +
                               mode + " SFUMATO_OUT=" + dir + "/o " + prog + " matmul_end_twice");
        INFO(r.output);
        CHECK(r.code == 4);
        CHECK_THAT(r.output, Catch::Contains("deadlock") && Catch::Contains("wait_cross_flag"));
        CHECK_FALSE(fs::exists(dir + "/o/summary.json"));
    }
}
TEST_CASE("ascendc conformance: Matmul with A in TSCM (the kernel's L1 copy, mix mode), blocks across A's rows and K") {
    family("matmul_tscm");
}
TEST_CASE("ascendc conformance: Matmul with IBShare B: the AIC's pass for the second AIV reuses B in L1") {
    // Both AIVs multiply their 32 rows of A by the same B (128 x 128 half): with IBSHARE on B the AIC loads B
    // into L1 once, without it once per AIV, so the GM -> L1 bytes differ by exactly B's bytes.
    family("matmul_ibshare_b");
    family("matmul_ibshare_b_off");
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    auto l1_gm_bytes = [&](const std::string& name) {
        const std::string dir = temp_dir("ascendc_conf_l1gm_" + name);
        const CliResult r =
            sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_OUT=" + dir +
               "/f " + prog + " " + name);
        INFO(r.output);
        REQUIRE(r.code == 0);
        const nlohmann::json summary = read_json(dir + "/f/summary.json");
        double bytes = 0;
        for (const auto& op : summary["ops"]) bytes += op["energy_events"]["l1_gm_bytes"].get<double>();
        return bytes;
    };
    const double shared = l1_gm_bytes("matmul_ibshare_b"), each = l1_gm_bytes("matmul_ibshare_b_off");
    constexpr double kBBytes = 128.0 * 128.0 * 2.0;  // K x N half, the kernel's B
    CAPTURE(shared, each);
    CHECK(each - shared == kBBytes);
}
TEST_CASE("ascendc conformance: Matmul int4 (B not transposed: 64 x 64 square transposes) with an int32 bias") {
    family("matmul_int4");
}
TEST_CASE("ascendc conformance: Matmul int8 (B not transposed) with SetQuantScalar and SetQuantVector into half") {
    family("matmul_quant");
    family("matmul_quant_vec");
}
TEST_CASE("ascendc conformance: Matmul IterateBatch of the BSNGD layout (six interleaved matrices, B transposed)") {
    family("matmul_bsngd");
}
TEST_CASE("ascendc conformance: Matmul IterateNBatch (two rounds into the workspace) and GetBatchTensorC") {
    family("matmul_nbatch");
}
TEST_CASE("ascendc conformance: the layout API maps coordinates through explicit strides (MakeCoord, Layout)") {
    const std::string prog = (fs::path(SFUMATO_BINARY).parent_path() / "ascendc_conformance").string();
    const std::string dir = temp_dir("ascendc_conf_layout_coord");
    const CliResult r = sh("cd " + dir + " && SFUMATO_CONFIG=ascend910b-like SFUMATO_TRACE=off SFUMATO_OUT=" + dir +
                           "/o " + prog + " layout_coord");
    INFO(r.output);
    CHECK(r.code == 0);
    CHECK_THAT(r.output, Catch::Contains("layout_coord ok"));
}
