// SPDX-License-Identifier: MIT
#pragma once
// Machine-readable simulation results (the fields `vtrain simulate --json` promises) and the timeline in
// Chrome's trace event format (opens in Perfetto and chrome://tracing).
#include <cstdint>
#include <iosfwd>

#include <nlohmann/json.hpp>

#include "vtrain/simulation_result.h"

namespace vtrain {

nlohmann::json result_to_json(const SimulationResult& result);

// The "floors" block: the binding resource, its share of the iteration and the summary line, each resource's
// floor, every non-zero term, and the datasheet figures used (physical_floors.h).
nlohmann::json floors_to_json(const PhysicalFloors& floors, const FloorHardware& hardware, double iteration_s);

// One process per pipeline stage, one thread per lane (compute, tensor, pipeline, data parallel).
// Tensor-parallel collectives run inside compute tasks; they are drawn on the tensor lane at the end of
// each layer's slice of the task.
nlohmann::json timeline_to_chrome_trace(const SimulationResult& result);

// The same trace written to `out` event by event (memory stays at one event whatever the trace's
// length); the text equals timeline_to_chrome_trace(result).dump(). Check the stream's state after.
void write_chrome_trace(std::ostream& out, const SimulationResult& result);

// Events of the trace, counted without building them, and the file size that makes:
// kChromeTraceBytesPerEvent is the mean measured on examples/*.json (152 to 167 bytes per event).
constexpr std::uint64_t kChromeTraceBytesPerEvent = 155;
std::uint64_t chrome_trace_event_count(const SimulationResult& result);
std::uint64_t chrome_trace_estimated_bytes(const SimulationResult& result);

} // namespace vtrain
