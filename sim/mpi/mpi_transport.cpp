#include "sim/mpi/mpi_transport.h"

#include <mpi.h>

#include <cstdlib>

#include "sim/error.h"

namespace sfumato {

namespace {
void finalize_at_exit() {
    int done = 0;
    MPI_Finalized(&done);
    if (!done) MPI_Finalize();
}
void check(int rc, const char* what) {
    if (rc != MPI_SUCCESS) throw SimError(kExitFailure, std::string("MPI: ") + what + " failed");
}
}  // namespace

MpiTransport::MpiTransport() {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        check(MPI_Init(nullptr, nullptr), "MPI_Init");
        std::atexit(finalize_at_exit);
    }
    int r = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    m_rank = static_cast<uint32_t>(r);
    m_size = static_cast<uint32_t>(n);
}

std::vector<std::vector<uint64_t>> MpiTransport::exchange(const std::vector<std::vector<uint64_t>>& out) {
    const int n = static_cast<int>(m_size);
    std::vector<int> scount(n), sdispl(n), rcount(n), rdispl(n);
    std::vector<uint64_t> send;
    for (int r = 0; r < n; ++r) {
        scount[r] = static_cast<int>(out[r].size());
        sdispl[r] = static_cast<int>(send.size());
        send.insert(send.end(), out[r].begin(), out[r].end());
    }
    check(MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, MPI_COMM_WORLD), "MPI_Alltoall");
    int total = 0;
    for (int r = 0; r < n; ++r) {
        rdispl[r] = total;
        total += rcount[r];
    }
    std::vector<uint64_t> recv(static_cast<size_t>(total));
    check(MPI_Alltoallv(send.data(), scount.data(), sdispl.data(), MPI_UINT64_T, recv.data(), rcount.data(),
                        rdispl.data(), MPI_UINT64_T, MPI_COMM_WORLD),
          "MPI_Alltoallv");
    std::vector<std::vector<uint64_t>> in(m_size);
    for (int r = 0; r < n; ++r) in[r].assign(recv.begin() + rdispl[r], recv.begin() + rdispl[r] + rcount[r]);
    return in;
}

void MpiTransport::all_min(std::vector<uint64_t>& v) {
    check(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD),
          "MPI_Allreduce");
}

void MpiTransport::all_sum(std::vector<uint64_t>& v) {
    check(MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD),
          "MPI_Allreduce");
}

void MpiTransport::abort_all(int code) {
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);
}

}  // namespace sfumato
