// SPDX-License-Identifier: MIT
#pragma once
// The few MPI operations `vtrain explore` needs, over MPI_COMM_WORLD, with the payload bytes this rank
// sends counted (the benchmark and the run's summary report them). Only built with VTRAIN_WITH_MPI.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <mpi.h>

namespace vtrain::cli::mpi {

class World {
public:
    World();  // MPI_Init
    ~World(); // MPI_Finalize
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    int rank() const { return m_rank; }
    int size() const { return m_size; }
    std::uint64_t bytes_sent() const { return m_sent; }

    // Collective: every rank's status; returns the highest, and sets `first_failing` to the lowest rank
    // whose status was not 0 (-1 when none), the one whose message is shown.
    int agree(int status, int& first_failing);

    // Collective: every rank's bytes, in rank order, at rank 0 (empty elsewhere).
    std::vector<std::string> gather(const std::string& mine);
    // Collective: rank 0's values everywhere.
    void broadcast(std::vector<std::uint64_t>& values);
    // Collective: rank 0's bytes everywhere.
    void broadcast(std::string& bytes);

    // Point to point, for streaming: a chunk to rank 0 (an empty chunk ends the stream), and rank 0's
    // receive of the next chunk from `source`.
    void send_chunk(const std::string& chunk);
    std::string receive_chunk(int source);

    // Ends every rank of the job with `status` (MPI_Abort): the launcher fails the whole run.
    [[noreturn]] void abort(int status);

    // Work stealing (ExploreOptions::next_work): rank 0 hands out work items from a thread of its own
    // while it sweeps, so every rank may take work at any time. Needs MPI_THREAD_MULTIPLE on every rank
    // (can_serve_work(), agreed at start-up); without it the sweep keeps its fixed split.
    bool can_serve_work() const { return m_threads_ok; }
    // Rank 0: serves `next(rank)` to the other ranks until each has been told there is none left (or has
    // said it is finished); stop_work_server() waits for that.
    void start_work_server(std::function<std::optional<std::size_t>(int rank)> next);
    void stop_work_server();
    // Other ranks: the next item from rank 0 (none: no work left anywhere), and, after the sweep, the
    // word that this rank asks no more (also when it stopped early).
    std::optional<std::size_t> request_work();
    void finish_work();

private:
    int m_rank = 0;
    int m_size = 1;
    std::uint64_t m_sent = 0;
    bool m_threads_ok = false;
    bool m_work_done = false;             // this rank was told there is no work left, or said it is finished
    MPI_Comm m_work_comm = MPI_COMM_NULL; // the work requests' own communicator: they cross the collectives
    std::thread m_server;
};

} // namespace vtrain::cli::mpi
