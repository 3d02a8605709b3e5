// SPDX-License-Identifier: MIT
// Failure rules: a bad input or an I/O error on any rank is agreed on collectively (every rank exits
// with the status, the lowest failing rank prints its message); an exception, or a rank that dies,
// aborts the whole job (MPI_Abort, or the launcher's own kill) -- the CSV appears only by rename once
// complete and the parts' manifest only once every part is written, so no partial output looks whole.
#include "mpi_explore.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "../explore_command.h"
#include "../explore_csv.h"
#include "mpi_world.h"
#include "vtrain/explorer_io.h"
#include "vtrain/explorer_shard.h"
#include "vtrain/explorer_wire.h"

namespace vtrain::cli::mpi {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kChunkBytes = 4 << 20; // CSV streamed to rank 0 in pieces of about this size

double seconds_since(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

// Every rank's status; on failure the lowest failing rank shows `message` and all return the status.
int agree(World& world, int status, const std::string& message)
{
    int first = -1;
    const int agreed = world.agree(status, first);
    if (agreed != kExitOk && world.rank() == first) {
        if (world.rank() != 0) {
            std::cerr << "vtrain: rank " << world.rank() << " of " << world.size() << ":\n";
        }
        std::cerr << message << std::flush;
    }
    return agreed;
}

int fail(std::string& message, const std::string& what, int status = kExitFailure)
{
    message = "vtrain: " + what + "\n";
    return status;
}

// FNV-1a, 64 bits: a cheap checksum for the manifest (integrity, not security).
class Fnv1a {
public:
    void add(std::string_view bytes)
    {
        for (const char c : bytes) {
            m_hash = (m_hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
        }
    }
    std::string hex() const
    {
        char buffer[17];
        std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(m_hash));
        return buffer;
    }

private:
    std::uint64_t m_hash = 0xcbf29ce484222325ull;
};

// Reads a spool (rows in enumeration order) in pieces of whole lines, a block at a time.
class SpoolReader {
public:
    explicit SpoolReader(const fs::path& path) : m_in(path, std::ios::binary) {}
    bool ok() const { return m_in.is_open() && !m_in.bad(); }
    // The next lines whose index is below `end` (a block's plan_end), up to about kChunkBytes; empty
    // once the next line belongs to a later block, or at the end.
    std::string next(std::uint64_t end)
    {
        std::string piece;
        while (piece.size() < kChunkBytes) {
            if (m_pos == m_buffer.size() && !refill()) {
                break;
            }
            const std::size_t line_end = m_buffer.find('\n', m_pos);
            if (line_end == std::string::npos) {
                if (!refill()) {
                    break; // a last line without newline: the spool is cut; the row count check reports it
                }
                continue;
            }
            if (index_at(m_pos) >= end) {
                break;
            }
            piece.append(m_buffer, m_pos, line_end + 1 - m_pos);
            m_pos = line_end + 1;
        }
        return piece;
    }

private:
    // Appends the next bytes of the file to what is left; false at the end.
    bool refill()
    {
        m_buffer.erase(0, m_pos);
        m_pos = 0;
        const std::size_t at = m_buffer.size();
        m_buffer.resize(at + kChunkBytes);
        m_in.read(m_buffer.data() + at, static_cast<std::streamsize>(kChunkBytes));
        m_buffer.resize(at + static_cast<std::size_t>(m_in.gcount()));
        return m_buffer.size() > at;
    }
    std::uint64_t index_at(std::size_t pos) const
    {
        std::uint64_t index = 0;
        for (; pos < m_buffer.size() && m_buffer[pos] >= '0' && m_buffer[pos] <= '9'; ++pos) {
            index = index * 10 + static_cast<std::uint64_t>(m_buffer[pos] - '0');
        }
        return index;
    }

    std::ifstream m_in;
    std::string m_buffer;
    std::size_t m_pos = 0;
};

constexpr std::uint64_t kNoLimit = ~std::uint64_t{0};

std::string part_name(int rank)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "plans-%05d.csv", rank);
    return buffer;
}

struct Output {
    std::optional<std::string> csv;   // --csv FILE: one file, written by rank 0
    std::optional<std::string> parts; // --csv-parts DIR: a part per rank and a manifest
    fs::path spool;                   // this rank's rows without on_front, during the sweep
};

// --csv: rank 0 writes FILE.part -- the header, then block after block in enumeration order, its own
// from its spool and the others' as their owners stream them -- and the caller renames it FILE once
// complete. Every rank keeps to the protocol even after a local error, so that no rank waits
// forever; the statuses are agreed afterwards.
int stream_csv_to_rank0(World& world, const ExploreSplit& split, const Output& output, const FrontIndex& front, std::uint64_t& bytes_streamed,
                        std::string& message)
{
    int status = kExitOk;
    SpoolReader spool(output.spool);
    if (!spool.ok()) {
        status = fail(message, "cannot read " + output.spool.string());
    }
    if (world.rank() != 0) {
        for (const ShardBlock& block : split.blocks) {
            if (block.shard != world.rank()) {
                continue;
            }
            for (std::string piece = spool.next(block.plan_end); !piece.empty(); piece = spool.next(block.plan_end)) {
                world.send_chunk(piece);
                bytes_streamed += piece.size();
            }
            world.send_chunk({}); // end of the block
        }
        return status;
    }
    const fs::path final_path = *output.csv;
    const fs::path part_path = final_path.string() + ".part";
    std::ofstream out(part_path, std::ios::binary | std::ios::trunc);
    if (!out && status == kExitOk) {
        status = fail(message, "cannot write " + part_path.string());
    }
    out << plan_row_csv_header() << '\n';
    std::string marked;
    for (const ShardBlock& block : split.blocks) {
        const bool own = block.shard == 0;
        for (std::string piece = own ? spool.next(block.plan_end) : world.receive_chunk(block.shard); !piece.empty();
             piece = own ? spool.next(block.plan_end) : world.receive_chunk(block.shard)) {
            marked.clear();
            append_marked_lines(piece, front, marked);
            out << marked;
        }
    }
    out.close();
    if (!out && status == kExitOk) {
        status = fail(message, "writing " + part_path.string() + " failed");
    }
    return status;
}

struct PartInfo {
    int rank = 0;
    std::uint64_t rows = 0;
    std::uint64_t bytes = 0;
    std::string checksum;
};

// --csv-parts: this rank's part, DIR/plans-RANK.csv, a CSV of its own (header included).
int write_part(World& world, const Output& output, const FrontIndex& front, PartInfo& info, std::string& message)
{
    info.rank = world.rank();
    const fs::path path = fs::path(*output.parts) / part_name(world.rank());
    SpoolReader spool(output.spool);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!spool.ok() || !out) {
        return fail(message, "cannot write " + path.string());
    }
    Fnv1a hash;
    std::string marked = plan_row_csv_header() + '\n';
    for (std::string piece = spool.next(kNoLimit);; piece = spool.next(kNoLimit)) {
        if (!piece.empty()) {
            append_marked_lines(piece, front, marked);
        }
        for (const char c : marked) {
            info.rows += c == '\n' ? 1 : 0;
        }
        hash.add(marked);
        info.bytes += marked.size();
        out << marked;
        marked.clear();
        if (piece.empty()) {
            break;
        }
    }
    info.rows -= 1; // the header
    info.checksum = hash.hex();
    out.close();
    if (!out) {
        return fail(message, "writing " + path.string() + " failed");
    }
    return kExitOk;
}

std::string manifest_json(const ExploreRequest& request, const ExploreResult& merged, const ExploreSplit& split,
                          const std::vector<std::string>& infos)
{
    nlohmann::json parts = nlohmann::json::array();
    for (std::size_t r = 0; r < infos.size(); ++r) {
        const nlohmann::json info = nlohmann::json::parse(infos[r]);
        nlohmann::json ranges = nlohmann::json::array();
        for (const ShardBlock& b : split.blocks) {
            if (b.shard == static_cast<int>(r)) {
                ranges.push_back({b.plan_begin, b.plan_end});
            }
        }
        parts.push_back({{"rank", r},
                         {"file", part_name(static_cast<int>(r))},
                         {"plans", split.plans(static_cast<int>(r))},
                         {"plan_ranges", ranges},
                         {"rows", info.at("rows")},
                         {"bytes", info.at("bytes")},
                         {"fnv1a64", info.at("fnv1a64")}});
    }
    const nlohmann::json j = {{"format", "vtrain explore CSV parts"},
                              {"version", 1},
                              {"scenario", request.path},
                              {"ranks", infos.size()},
                              {"plans", merged.total},
                              {"feasible", merged.feasible},
                              {"header", plan_row_csv_header()},
                              {"note", "each part is a CSV with the header, its rows in index order; all parts' rows merged by index "
                                       "(the first column) are the single-process CSV's rows"},
                              {"parts", parts}};
    return j.dump(2) + "\n";
}

int run(World& world, const std::vector<std::string>& argv)
{
    const auto start = Clock::now();
    const bool root = world.rank() == 0;
    std::string message;

    // 1. The request, on every rank. Messages are held back so that only one rank shows them.
    ExploreRequest request;
    Output output;
    int status = kExitOk;
    {
        std::ostringstream captured;
        std::streambuf* const previous = std::cerr.rdbuf(captured.rdbuf());
        status = prepare_explore(argv, {"--csv-parts"}, request);
        std::cerr.rdbuf(previous);
        message = captured.str();
    }
    if (status == kExitOk) {
        output.csv = request.args.value("--csv");
        output.parts = request.args.value("--csv-parts");
        std::error_code error;
        if (output.csv && output.parts) {
            status = fail(message, "--csv and --csv-parts: choose one output (one file, or a part per rank)", kExitBadInput);
        } else if (output.parts && (fs::create_directories(*output.parts, error), error)) {
            status = fail(message, "--csv-parts: cannot create " + *output.parts + " (" + error.message() + ")", kExitBadInput);
        }
    }
    if ((status = agree(world, status, message)) != kExitOk) {
        return status;
    }

    // 2. The split: computed by every rank alike (no communication).
    auto planned = plan_explore_split(request.scenario, request.profiles, request.options, world.size());
    if (!planned.ok()) {
        message.clear();
        for (const Diagnostic& d : planned.errors()) {
            message += "vtrain: " + d.to_string() + "\n";
        }
        return agree(world, kExitBadInput, message);
    }
    const ExploreSplit& split = *planned;

    // 3. This rank's sweep, its rows spooled next to the output.
    std::optional<std::ofstream> spool;
    if (output.csv || output.parts) {
        output.spool = output.csv ? fs::path(*output.csv + ".rank" + std::to_string(world.rank()) + ".part")
                                  : fs::path(*output.parts) / (part_name(world.rank()) + ".part");
        spool.emplace(output.spool, std::ios::binary | std::ios::trunc);
        if (!*spool) {
            status = fail(message, std::string(output.csv ? "--csv" : "--csv-parts") + ": cannot write " + output.spool.string(), kExitBadInput);
        }
    }
    if ((status = agree(world, status, message)) != kExitOk) {
        return status;
    }
    RowSink sink;
    if (spool) {
        sink = [&spool](const PlanRow& row) { *spool << csv_spool_line(row); };
    }
    RunControl control;
    // A pruned sweep without rows to write steals work (ExploreWork): which plans get simulated is known
    // only as the sweep goes, so the ranks take items from each other's queues (rank 0 keeps them) rather
    // than keep a fixed share. Rows to write keep the fixed split, whose blocks say which rank holds them.
    const bool stealing = request.options.prune && !request.options.keep_all_rows && !spool && world.size() > 1 && world.can_serve_work();
    ExploreWork work;
    std::optional<WorkQueue> queue;
    ExploreOptions shard_options = options_for_shard(request.options, split, world.rank());
    if (stealing) {
        auto planned_work = plan_explore_work(request.scenario, request.profiles, request.options, world.size());
        if (!planned_work.ok()) {
            throw std::runtime_error(planned_work.first_error()); // the split above succeeded on the same space
        }
        work = std::move(planned_work).value();
        queue.emplace(work);
        if (root) {
            world.start_work_server([&queue](int rank) { return queue->next(rank); });
            shard_options = options_for_shard(request.options, work, 0, [&queue] { return queue->next(0); });
        } else {
            shard_options = options_for_shard(request.options, work, world.rank(), [&world] { return world.request_work(); });
        }
    }
    // A pruned sweep hands its seed's best rows to every rank once (ExploreOptions::share_seed): each
    // rank then bounds its plans against the best rows of the whole space. Every rank calls it.
    shard_options.share_seed = [&world](const std::vector<PlanRow>& mine) {
        ExploreResult rows;
        rows.front = mine;
        const std::vector<std::string> parts = world.gather(encode_explore_result(rows));
        std::string all;
        if (world.rank() == 0) {
            ExploreResult merged;
            for (const std::string& bytes : parts) {
                auto decoded = decode_explore_result(bytes);
                if (decoded.ok()) { // an unreadable part only weakens the thresholds
                    merged.front.insert(merged.front.end(), decoded->front.begin(), decoded->front.end());
                }
            }
            all = encode_explore_result(merged);
        }
        world.broadcast(all);
        auto decoded = decode_explore_result(all);
        return decoded.ok() ? decoded->front : std::vector<PlanRow>{};
    };
    auto part = explore(request.scenario, request.profiles, shard_options, control, sink);
    if (stealing) {
        world.finish_work(); // also when this rank stopped early: rank 0's server must not wait for it
        world.stop_work_server();
    }
    if (const char* fail_rank = std::getenv("VTRAIN_TEST_FAIL_RANK"); fail_rank != nullptr && std::atoi(fail_rank) == world.rank()) {
        throw std::runtime_error("failure injected by VTRAIN_TEST_FAIL_RANK after the sweep"); // the tests' stand-in for a crash
    }
    if (!part.ok()) {
        status = fail(message, part.first_error(), kExitBadInput);
    } else if (spool) {
        spool->close();
        if (!*spool) {
            status = fail(message, "writing " + output.spool.string() + " failed");
        }
    }
    if ((status = agree(world, status, message)) != kExitOk) {
        return status;
    }

    // 4. The merge: partial results (counts, examples, front, top k; no rows) to rank 0.
    const auto merge_start = Clock::now();
    const std::uint64_t sent_before_merge = world.bytes_sent(); // the seed exchange is not the merge
    const std::vector<std::string> encoded = world.gather(encode_explore_result(*part));
    const std::uint64_t merge_bytes_sent = world.bytes_sent() - sent_before_merge;
    ExploreResult merged;
    std::vector<double> sweep_s; // per rank
    std::vector<std::uint64_t> rank_plans;
    if (root) {
        std::vector<ExploreResult> parts;
        for (std::size_t r = 0; r < encoded.size(); ++r) {
            auto decoded = decode_explore_result(encoded[r]);
            if (!decoded.ok()) {
                throw std::runtime_error("the result of rank " + std::to_string(r) + " is unreadable: " + decoded.first_error());
            }
            sweep_s.push_back(decoded->elapsed_s);
            rank_plans.push_back(decoded->total); // the split's share, or what rebalancing left it
            parts.push_back(std::move(decoded).value());
        }
        merged = merge_explore_results(parts, request.options.top_k);
    }
    const double merge_s = seconds_since(merge_start);
    std::vector<std::uint64_t> front_indices;
    for (const PlanRow& r : merged.front) {
        front_indices.push_back(r.index);
    }
    world.broadcast(front_indices); // every rank marks its own CSV rows
    const FrontIndex front(front_indices);

    // 5. The report, from rank 0.
    const std::vector<std::string> sent = world.gather(std::to_string(merge_bytes_sent));
    int report_status = kExitOk;
    if (root) {
        merged.elapsed_s = seconds_since(start);
        const int threads_per_rank = part->threads;
        nlohmann::json ranks = nlohmann::json::array();
        std::uint64_t most_sent = 0;
        for (std::size_t r = 0; r < sweep_s.size(); ++r) {
            most_sent = std::max<std::uint64_t>(most_sent, std::stoull(sent[r]));
            ranks.push_back({{"rank", r}, {"plans", rank_plans[r]}, {"sweep_s", sweep_s[r]}, {"merge_bytes_sent", std::stoull(sent[r])}});
        }
        const nlohmann::json distributed = {{"ranks", world.size()}, {"merge_s", merge_s}, {"per_rank", ranks}};
        report_status = report_explore(request, merged,
                                       std::to_string(world.size()) + (world.size() == 1 ? " rank x " : " ranks x ") +
                                           std::to_string(threads_per_rank) + (threads_per_rank == 1 ? " thread" : " threads"),
                                       {{"ranks", world.size()}, {"distributed", distributed}});
        const double slowest = *std::max_element(sweep_s.begin(), sweep_s.end());
        const double fastest = *std::min_element(sweep_s.begin(), sweep_s.end());
        std::printf("\nDistributed over %d rank%s: sweep %.3f-%.3f s per rank (balance %.0f%%), merge %.2f ms, "
                    "at most %llu bytes sent per rank for the merge\n",
                    world.size(), world.size() == 1 ? "" : "s", fastest, slowest, slowest > 0 ? 100 * fastest / slowest : 100.0, 1e3 * merge_s,
                    static_cast<unsigned long long>(most_sent));
        std::fflush(stdout);
    }

    // 6. The rows.
    std::uint64_t streamed = 0;
    std::vector<std::string> infos; // per part, at rank 0
    if (output.csv) {
        status = stream_csv_to_rank0(world, split, output, front, streamed, message);
    } else if (output.parts) {
        PartInfo info;
        status = write_part(world, output, front, info, message);
        infos = world.gather(nlohmann::json{{"rows", info.rows}, {"bytes", info.bytes}, {"fnv1a64", info.checksum}}.dump());
    }
    if (!output.spool.empty()) {
        std::error_code ignored;
        fs::remove(output.spool, ignored);
    }
    const std::vector<std::string> streamed_by_rank = world.gather(std::to_string(streamed));
    if ((status = agree(world, status, message)) != kExitOk) {
        return status;
    }
    // The last collective is behind: from here on rank 0 alone finishes.
    if (output.csv && root) {
        std::uint64_t most = 0;
        for (const auto& s : streamed_by_rank) {
            most = std::max<std::uint64_t>(most, std::stoull(s));
        }
        std::printf("CSV: rows streamed to rank 0, at most %llu bytes per rank\n", static_cast<unsigned long long>(most));
        const std::string part_path = *output.csv + ".part";
        std::error_code error;
        fs::rename(part_path, *output.csv, error); // complete: every rank's rows are in
        if (error) {
            std::cerr << "vtrain: cannot rename " << part_path << " to " << *output.csv << ": " << error.message() << '\n';
            return kExitFailure;
        }
    }
    if (output.parts && root) {
        std::string error;
        if (!write_text_file(fs::path(*output.parts) / "manifest.json", manifest_json(request, merged, split, infos), error)) {
            std::cerr << "vtrain: " << error << '\n';
            return kExitFailure;
        }
    }
    return report_status;
}

} // namespace

bool launched_by_mpi()
{
    // Open MPI's mpirun; PMIx (Open MPI 5, srun --mpi=pmix); PMI-1/2 (srun --mpi=pmi2, MPICH's hydra).
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
        if (std::getenv(name) != nullptr) {
            return true;
        }
    }
    return false;
}

int run_explore_mpi(const std::vector<std::string>& argv)
{
    World world;
    try {
        return run(world, argv);
    } catch (const std::exception& e) {
        std::cerr << "vtrain: rank " << world.rank() << " of " << world.size() << " failed: " << e.what() << " -- aborting the run\n" << std::flush;
    } catch (...) {
        std::cerr << "vtrain: rank " << world.rank() << " of " << world.size() << " failed -- aborting the run\n" << std::flush;
    }
    world.abort(kExitFailure);
}

} // namespace vtrain::cli::mpi
