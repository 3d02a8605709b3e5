// SPDX-License-Identifier: MIT
#include "mpi_world.h"

#include <chrono>
#include <climits>
#include <cstdlib>
#include <stdexcept>

#include <mpi.h>

namespace vtrain::cli::mpi {
namespace {

constexpr int kChunkTag = 17;
constexpr int kWorkTag = 18;
constexpr long long kNoWork = -1;   // rank 0's reply: no work left anywhere
constexpr long long kFinished = -2; // a rank's word that it asks no more

int checked_int(std::uint64_t n, const char* what)
{
    if (n > static_cast<std::uint64_t>(INT_MAX)) {
        throw std::runtime_error(std::string(what) + " exceeds what one MPI message can carry (2 GiB)");
    }
    return static_cast<int>(n);
}

} // namespace

World::World()
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m_size);
    int mine = provided >= MPI_THREAD_MULTIPLE ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    m_threads_ok = all == 1;
    MPI_Comm_dup(MPI_COMM_WORLD, &m_work_comm);
}

World::~World()
{
    if (m_server.joinable()) {
        m_server.join();
    }
    MPI_Comm_free(&m_work_comm);
    MPI_Finalize();
}

void World::start_work_server(std::function<std::optional<std::size_t>(int rank)> next)
{
    m_server = std::thread([this, next = std::move(next)] {
        int finished = 0;
        while (finished < m_size - 1) {
            long long request = 0;
            MPI_Request pending;
            MPI_Status status;
            MPI_Irecv(&request, 1, MPI_LONG_LONG, MPI_ANY_SOURCE, kWorkTag, m_work_comm, &pending);
            // Polled with short sleeps: a blocking receive would spin on a core the sweep needs.
            for (int done = 0; MPI_Test(&pending, &done, &status), !done;) {
                std::this_thread::sleep_for(std::chrono::microseconds(200));
            }
            if (request == kFinished) {
                ++finished;
                continue;
            }
            const auto item = next(status.MPI_SOURCE);
            const long long reply = item ? static_cast<long long>(*item) : kNoWork;
            finished += item ? 0 : 1;
            MPI_Send(&reply, 1, MPI_LONG_LONG, status.MPI_SOURCE, kWorkTag, m_work_comm);
        }
    });
}

void World::stop_work_server()
{
    if (m_server.joinable()) {
        m_server.join();
    }
}

std::optional<std::size_t> World::request_work()
{
    if (m_work_done) {
        return std::nullopt;
    }
    long long request = m_rank, reply = kNoWork;
    MPI_Send(&request, 1, MPI_LONG_LONG, 0, kWorkTag, m_work_comm);
    MPI_Recv(&reply, 1, MPI_LONG_LONG, 0, kWorkTag, m_work_comm, MPI_STATUS_IGNORE);
    m_sent += sizeof request;
    m_work_done = reply < 0;
    return reply < 0 ? std::nullopt : std::optional<std::size_t>(static_cast<std::size_t>(reply));
}

void World::finish_work()
{
    if (!m_work_done && m_rank != 0) {
        long long request = kFinished;
        MPI_Send(&request, 1, MPI_LONG_LONG, 0, kWorkTag, m_work_comm);
        m_work_done = true;
    }
}

int World::agree(int status, int& first_failing)
{
    // One reduction: the highest status, and the lowest failing rank as the highest of -rank.
    const int mine[2] = {status, status != 0 ? -m_rank : INT_MIN};
    int all[2] = {0, 0};
    MPI_Allreduce(mine, all, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    first_failing = all[1] == INT_MIN ? -1 : -all[1];
    return all[0];
}

std::vector<std::string> World::gather(const std::string& mine)
{
    const long long size = static_cast<long long>(mine.size());
    std::vector<long long> sizes(m_rank == 0 ? static_cast<std::size_t>(m_size) : 0);
    MPI_Gather(&size, 1, MPI_LONG_LONG, sizes.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    std::vector<int> counts;
    std::vector<int> offsets;
    std::string all;
    if (m_rank == 0) {
        std::uint64_t total = 0;
        for (const long long n : sizes) {
            counts.push_back(checked_int(static_cast<std::uint64_t>(n), "a rank's partial result"));
            offsets.push_back(checked_int(total, "the gathered partial results"));
            total += static_cast<std::uint64_t>(n);
        }
        all.resize(total);
    } else {
        m_sent += sizeof size + mine.size();
    }
    MPI_Gatherv(mine.data(), checked_int(mine.size(), "a rank's partial result"), MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, 0,
                MPI_COMM_WORLD);
    std::vector<std::string> out;
    for (std::size_t r = 0; r < counts.size(); ++r) {
        out.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(counts[r])));
    }
    return out;
}

void World::broadcast(std::vector<std::uint64_t>& values)
{
    unsigned long long n = values.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    values.resize(n);
    MPI_Bcast(values.data(), checked_int(n, "the broadcast front"), MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (m_rank == 0) {
        m_sent += (sizeof n + n * sizeof(std::uint64_t)) * static_cast<std::uint64_t>(m_size - 1);
    }
}

void World::broadcast(std::string& bytes)
{
    unsigned long long n = bytes.size();
    MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    bytes.resize(n);
    MPI_Bcast(bytes.data(), checked_int(n, "the broadcast bytes"), MPI_BYTE, 0, MPI_COMM_WORLD);
    if (m_rank == 0) {
        m_sent += (sizeof n + n) * static_cast<std::uint64_t>(m_size - 1);
    }
}

void World::send_chunk(const std::string& chunk)
{
    MPI_Send(chunk.data(), checked_int(chunk.size(), "a CSV chunk"), MPI_BYTE, 0, kChunkTag, MPI_COMM_WORLD);
    m_sent += chunk.size();
}

std::string World::receive_chunk(int source)
{
    MPI_Status status;
    MPI_Probe(source, kChunkTag, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_BYTE, &count);
    std::string chunk(static_cast<std::size_t>(count), '\0');
    MPI_Recv(chunk.data(), count, MPI_BYTE, source, kChunkTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return chunk;
}

void World::abort(int status)
{
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status); // MPI_Abort does not return; this is for the compiler
}

} // namespace vtrain::cli::mpi
