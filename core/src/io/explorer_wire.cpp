// SPDX-License-Identifier: MIT
#include "vtrain/explorer_wire.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vtrain/plausibility.h"

namespace vtrain {
namespace {

constexpr char kMagic[4] = {'V', 'T', 'X', 'R'};
constexpr std::uint32_t kVersion = 5; // 4: rows carry rank_order and the offload flags; 5: the binding floor and plausibility flags
constexpr std::size_t kReasons = static_cast<std::size_t>(RejectReason::Count);

#if defined(__GLIBCXX__) && UINTPTR_MAX == UINT64_MAX
// A tripwire: a new PlanRow (or Plan) field changes the size; encode and decode it below, then update.
static_assert(sizeof(PlanRow) == 280, "PlanRow changed: serialise the new field in explorer_wire.cpp");
#endif

class Writer {
public:
    void u8(std::uint8_t v) { m_out.push_back(static_cast<char>(v)); }
    void u32(std::uint32_t v) { unsigned_le(v, 4); }
    void u64(std::uint64_t v) { unsigned_le(v, 8); }
    void i32(int v) { u32(static_cast<std::uint32_t>(v)); }
    void f64(double v) { u64(std::bit_cast<std::uint64_t>(v)); }
    void str(const std::string& s)
    {
        u64(s.size());
        m_out += s;
    }
    std::string take() { return std::move(m_out); }

private:
    void unsigned_le(std::uint64_t v, int bytes)
    {
        for (int i = 0; i < bytes; ++i) {
            m_out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
        }
    }
    std::string m_out;
};

class Reader {
public:
    explicit Reader(std::string_view in) : m_in(in) {}
    bool failed() const { return m_failed; }
    std::size_t offset() const { return m_pos; }
    bool at_end() const { return m_pos == m_in.size(); }

    std::uint8_t u8() { return static_cast<std::uint8_t>(unsigned_le(1)); }
    std::uint32_t u32() { return static_cast<std::uint32_t>(unsigned_le(4)); }
    std::uint64_t u64() { return unsigned_le(8); }
    int i32() { return static_cast<int>(static_cast<std::int32_t>(u32())); }
    double f64() { return std::bit_cast<double>(u64()); }
    std::string str()
    {
        const std::uint64_t n = u64();
        if (m_failed || n > m_in.size() - m_pos) {
            m_failed = true;
            return {};
        }
        std::string s(m_in.substr(m_pos, n));
        m_pos += n;
        return s;
    }
    bool raw(const char* expected, std::size_t n)
    {
        if (m_failed || n > m_in.size() - m_pos || std::memcmp(m_in.data() + m_pos, expected, n) != 0) {
            m_failed = true;
            return false;
        }
        m_pos += n;
        return true;
    }
    // A count of items each at least `min_bytes` long: refused when the rest cannot hold them.
    std::uint64_t count(std::size_t min_bytes)
    {
        const std::uint64_t n = u64();
        if (!m_failed && n > (m_in.size() - m_pos) / min_bytes) {
            m_failed = true;
        }
        return m_failed ? 0 : n;
    }

private:
    std::uint64_t unsigned_le(int bytes)
    {
        if (m_failed || static_cast<std::size_t>(bytes) > m_in.size() - m_pos) {
            m_failed = true;
            return 0;
        }
        std::uint64_t v = 0;
        for (int i = 0; i < bytes; ++i) {
            v |= static_cast<std::uint64_t>(static_cast<unsigned char>(m_in[m_pos + i])) << (8 * i);
        }
        m_pos += static_cast<std::size_t>(bytes);
        return v;
    }
    std::string_view m_in;
    std::size_t m_pos = 0;
    bool m_failed = false;
};

constexpr std::size_t kMinRowBytes =
    8 + 4 * 4 + 1 + 4 + 1 + 1 + 4 + 8 + 1 + (1 + 4 + 4 + 1 + 4 + 4 + 1 + 1 + 4 + 4 + 8 + 1) + (5 + 1 + 8) + 8 + 4 + 9 * 8 + 1 + (8 + 1 + 1);

void write_row(Writer& w, const PlanRow& r)
{
    w.u64(r.index);
    const Plan& p = r.plan;
    w.i32(p.tp);
    w.i32(p.pp);
    w.i32(p.dp);
    w.i32(p.micro_batch);
    w.u8(static_cast<std::uint8_t>(p.schedule));
    w.i32(p.virtual_stages);
    w.u8(static_cast<std::uint8_t>(p.recompute));
    w.u8(p.sequence_parallel ? 1 : 0);
    w.i32(p.zero_stage);
    w.f64(p.grad_bucket_mb);
    w.u8(p.overlap_grad_reduce ? 1 : 0);
    w.u8(p.overlap_param_gather ? 1 : 0);
    w.i32(p.shard_group);
    w.i32(p.cp);
    w.u8(static_cast<std::uint8_t>(p.cp_kind));
    w.i32(p.ep);
    w.i32(p.etp);
    w.u8(p.moe_overlap ? 1 : 0);
    w.u8(p.tp_overlap ? 1 : 0);
    w.i32(p.first_stage_layers);
    w.i32(p.last_stage_layers);
    w.str(p.pipeline_layout);
    for (const ParallelDim d : p.rank_order.dims) {
        w.u8(static_cast<std::uint8_t>(d));
    }
    w.u8(p.offload_optimizer ? 1 : 0);
    w.f64(p.offload_activations);
    w.u8(static_cast<std::uint8_t>(p.recompute_modules));
    w.u8(static_cast<std::uint8_t>(r.precision));
    w.str(r.gpu);
    w.i32(r.num_gpus);
    for (const double v : {r.iteration_time_s, r.iteration_time_low_s, r.iteration_time_high_s, r.tokens_per_s, r.mfu, r.bubble_fraction,
                           r.peak_memory_gib, r.training_days, r.cost_usd}) {
        w.f64(v);
    }
    w.u8(r.on_front ? 1 : 0);
    w.u8(r.band_calibrated ? 1 : 0);
    w.f64(r.floor_s);
    w.u8(static_cast<std::uint8_t>(r.floor_resource));
    w.u8(r.plausibility);
}

// False on an out-of-range enum or flag (the reader's own failures are checked by the caller).
bool read_row(Reader& in, PlanRow& r)
{
    r.index = in.u64();
    Plan& p = r.plan;
    p.tp = in.i32();
    p.pp = in.i32();
    p.dp = in.i32();
    p.micro_batch = in.i32();
    const std::uint8_t schedule = in.u8();
    p.virtual_stages = in.i32();
    const std::uint8_t recompute = in.u8();
    const std::uint8_t sp = in.u8();
    p.zero_stage = in.i32();
    p.grad_bucket_mb = in.f64();
    const std::uint8_t overlap = in.u8();
    const std::uint8_t param_gather = in.u8();
    p.shard_group = in.i32();
    p.cp = in.i32();
    const std::uint8_t cp_kind = in.u8();
    p.ep = in.i32();
    p.etp = in.i32();
    const std::uint8_t moe_overlap = in.u8();
    const std::uint8_t tp_overlap = in.u8();
    p.first_stage_layers = in.i32();
    p.last_stage_layers = in.i32();
    p.pipeline_layout = in.str();
    bool order_ok = true;
    for (ParallelDim& d : p.rank_order.dims) {
        const std::uint8_t v = in.u8();
        order_ok = order_ok && v <= static_cast<std::uint8_t>(ParallelDim::Pp);
        d = static_cast<ParallelDim>(order_ok ? v : 0);
    }
    const std::uint8_t offload_optimizer = in.u8();
    p.offload_optimizer = offload_optimizer == 1;
    p.offload_activations = in.f64();
    const std::uint8_t recompute_modules = in.u8();
    const std::uint8_t precision = in.u8();
    r.gpu = in.str();
    r.num_gpus = in.i32();
    for (double* v : {&r.iteration_time_s, &r.iteration_time_low_s, &r.iteration_time_high_s, &r.tokens_per_s, &r.mfu, &r.bubble_fraction,
                      &r.peak_memory_gib, &r.training_days, &r.cost_usd}) {
        *v = in.f64();
    }
    const std::uint8_t on_front = in.u8();
    const std::uint8_t band_calibrated = in.u8();
    r.floor_s = in.f64();
    const std::uint8_t floor_resource = in.u8();
    const std::uint8_t plausibility = in.u8();
    if (floor_resource >= kFloorResources || plausibility > (kMfuAbovePublished | kFarAboveFloor | kBelowFloor) || band_calibrated > 1 ||
        schedule > static_cast<std::uint8_t>(Schedule::DualPipe) || recompute > static_cast<std::uint8_t>(Recompute::Full) || sp > 1 || overlap > 1 ||
        on_front > 1 || param_gather > 1 || cp_kind > static_cast<std::uint8_t>(ContextParallelKind::AllToAll) || moe_overlap > 1 || tp_overlap > 1 ||
        precision > static_cast<std::uint8_t>(Precision::Nvfp4) || !order_ok || offload_optimizer > 1 ||
        !(p.offload_activations >= 0 && p.offload_activations <= 1) || recompute_modules > 15) {
        return false;
    }
    r.precision = static_cast<Precision>(precision);
    p.overlap_param_gather = param_gather == 1;
    p.cp_kind = static_cast<ContextParallelKind>(cp_kind);
    p.moe_overlap = moe_overlap == 1;
    p.recompute_modules = recompute_modules;
    p.tp_overlap = tp_overlap == 1;
    p.schedule = static_cast<Schedule>(schedule);
    p.recompute = static_cast<Recompute>(recompute);
    p.sequence_parallel = sp == 1;
    p.overlap_grad_reduce = overlap == 1;
    r.on_front = on_front == 1;
    r.band_calibrated = band_calibrated == 1;
    r.floor_resource = static_cast<FloorResource>(floor_resource);
    r.plausibility = plausibility;
    return true;
}

Diagnostic bad(const std::string& what, std::size_t offset)
{
    return {"explore result", what + " at byte " + std::to_string(offset)};
}

} // namespace

std::string encode_explore_result(const ExploreResult& result)
{
    Writer w;
    for (const char c : kMagic) {
        w.u8(static_cast<std::uint8_t>(c));
    }
    w.u32(kVersion);
    w.u64(result.total);
    w.u64(result.evaluated);
    w.u64(result.feasible);
    w.u64(result.bounded);
    w.u8(result.cancelled ? 1 : 0);
    w.f64(result.elapsed_s);
    w.i32(result.threads);
    w.u32(static_cast<std::uint32_t>(kReasons));
    for (std::size_t r = 0; r < kReasons; ++r) {
        w.u64(result.rejected[r]);
        w.u64(result.example_index[r]);
        w.str(result.example[r].field);
        w.str(result.example[r].message);
    }
    for (const auto* rows : {&result.front, &result.fastest, &result.cheapest, &result.best_mfu, &result.rows}) {
        w.u64(rows->size());
        for (const PlanRow& row : *rows) {
            write_row(w, row);
        }
    }
    return w.take();
}

Expected<ExploreResult> decode_explore_result(std::string_view bytes)
{
    Reader in(bytes);
    if (!in.raw(kMagic, sizeof kMagic)) {
        return bad("not an encoded explore result (wrong magic number)", 0);
    }
    const std::uint32_t version = in.u32();
    if (!in.failed() && version != kVersion) {
        return bad("format version " + std::to_string(version) + ", expected " + std::to_string(kVersion), 4);
    }
    ExploreResult result;
    result.total = in.u64();
    result.evaluated = in.u64();
    result.feasible = in.u64();
    result.bounded = in.u64();
    const std::uint8_t cancelled = in.u8();
    result.cancelled = cancelled != 0;
    result.elapsed_s = in.f64();
    result.threads = in.i32();
    const std::uint32_t reasons = in.u32();
    if (!in.failed() && reasons != kReasons) {
        return bad(std::to_string(reasons) + " reject reasons, expected " + std::to_string(kReasons), in.offset());
    }
    for (std::size_t r = 0; r < kReasons && !in.failed(); ++r) {
        result.rejected[r] = in.u64();
        result.example_index[r] = in.u64();
        result.example[r].field = in.str();
        result.example[r].message = in.str();
    }
    for (auto* rows : {&result.front, &result.fastest, &result.cheapest, &result.best_mfu, &result.rows}) {
        const std::uint64_t n = in.count(kMinRowBytes);
        rows->reserve(n);
        for (std::uint64_t i = 0; i < n && !in.failed(); ++i) {
            const std::size_t at = in.offset();
            PlanRow row;
            if (!read_row(in, row) && !in.failed()) {
                return bad("a row with an out-of-range schedule, recompute or flag", at);
            }
            rows->push_back(std::move(row));
        }
    }
    if (in.failed()) {
        return bad("truncated or inconsistent data", in.offset());
    }
    if (!in.at_end()) {
        return bad(std::to_string(bytes.size() - in.offset()) + " unexpected trailing bytes", in.offset());
    }
    return result;
}

namespace {
constexpr char kWorkMagic[4] = {'V', 'T', 'X', 'W'};
} // namespace

std::string encode_group_work(const GroupWorkReport& report)
{
    Writer w;
    for (const char c : kWorkMagic) {
        w.u8(static_cast<std::uint8_t>(c));
    }
    w.f64(report.settled);
    w.u64(report.open.size());
    for (const GroupWork& g : report.open) {
        w.u64(g.group);
        w.f64(g.cost);
    }
    return w.take();
}

Expected<GroupWorkReport> decode_group_work(std::string_view bytes)
{
    Reader in(bytes);
    if (!in.raw(kWorkMagic, sizeof kWorkMagic)) {
        return bad("not an encoded group-work report (wrong magic number)", 0);
    }
    GroupWorkReport report;
    report.settled = in.f64();
    const std::uint64_t n = in.count(16);
    report.open.reserve(n);
    for (std::uint64_t i = 0; i < n && !in.failed(); ++i) {
        GroupWork g;
        g.group = in.u64();
        g.cost = in.f64();
        report.open.push_back(g);
    }
    if (in.failed()) {
        return bad("truncated group-work report", in.offset());
    }
    if (!in.at_end()) {
        return bad(std::to_string(bytes.size() - in.offset()) + " unexpected trailing bytes", in.offset());
    }
    return report;
}

} // namespace vtrain
