// The ranks of a window-synchronised run as MPI processes (Debian's openmpi; started by mpirun,
// or srun under Slurm): exchange() is MPI_Alltoall of the counts then MPI_Alltoallv of the
// messages, all_min/all_sum are MPI_Allreduce. Built only when CMake finds MPI.
#pragma once
#include "sim/window_sync.h"

namespace sfumato {

class MpiTransport : public IRankTransport {
public:
    // Initialises MPI (once per process; MPI_Finalize runs at exit).
    MpiTransport();
    uint32_t rank() const override { return m_rank; }
    uint32_t size() const override { return m_size; }
    std::vector<std::vector<uint64_t>> exchange(const std::vector<std::vector<uint64_t>>& out) override;
    void all_min(std::vector<uint64_t>& v) override;
    void all_sum(std::vector<uint64_t>& v) override;
    // Ends every rank of the job with `code` (a failure the other ranks cannot see).
    [[noreturn]] static void abort_all(int code);

private:
    uint32_t m_rank = 0, m_size = 1;
};

}  // namespace sfumato
