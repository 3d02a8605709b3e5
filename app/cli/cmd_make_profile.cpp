// SPDX-License-Identifier: MIT
#include <iostream>

#include "cli_common.h"
#include "commands.h"
#include "vtrain/hardware_spec_json.h"
#include "vtrain/json_fields.h"
#include "vtrain/modeled_profile.h"
#include "vtrain/profile_json.h"

namespace vtrain::cli {

const char* const kMakeProfileHelp = R"(usage: vtrain make-profile --from-datasheet DATASHEET.json -o PROFILE.json
       vtrain make-profile SPEC.json -o PROFILE.json      (-o - writes the profile to standard output)

Builds a modeled GPU profile ("source": "modeled") from published figures.

A datasheet ("datasheet_version": 1) holds the figures as vendors print them: dense TFLOP/s per
precision (bf16, fp16, fp8, fp4), HBM size and bandwidth, compute units, the NVLink/xGMI domain and its
bidirectional bandwidth, GPUs and NICs per host, a price per GPU-hour, and a citation for each group;
achievable link figures are derived from them (docs/profile-format.md, "Datasheets"). A spec holds the
derived figures directly (profiles/specs/, as `vtrain calibrate --spec` leaves them). Both may carry
"model_parameters" (GEMM, attention and memory efficiencies), a "calibration" block and a
"default_band". Every number is range-checked and the profile written is checked by the loader.
The shipped modeled profiles are built this way from profiles/datasheets/ and profiles/specs/
(scripts/regenerate-profiles.sh).

example:
  vtrain make-profile --from-datasheet profiles/datasheets/b300.json -o b300.json
  vtrain make-profile profiles/specs/a100-sxm4-80gb.json -o profiles/a100-sxm4-80gb.json
)";

int run_make_profile(const std::vector<std::string>& argv)
{
    std::string error;
    const auto args = parse_args(argv, {"-o", "--output", "--from-datasheet"}, {}, error);
    if (!args) {
        return report_bad_input(error);
    }
    const auto output = output_option(*args);
    const auto datasheet = args->value("--from-datasheet");
    const std::size_t inputs = args->positional.size() + (datasheet ? 1 : 0);
    if (inputs != 1 || !output) {
        return report_bad_input("make-profile takes one datasheet (--from-datasheet FILE) or spec file, and -o OUTPUT "
                                "(see vtrain make-profile --help)");
    }
    const std::string path = datasheet ? *datasheet : args->positional[0];
    note_input(path);
    const auto spec = json_fields::read_json_file(path);
    if (!spec.ok()) {
        return report_bad_input(spec.errors());
    }
    if (datasheet && !is_datasheet(*spec)) {
        return report_bad_file(path, {{"datasheet_version", "is missing: --from-datasheet reads a datasheet (\"datasheet_version\": 1); "
                                                            "give a spec without --from-datasheet"}});
    }
    const auto profile = build_profile_from_spec(*spec);
    if (!profile.ok()) {
        return report_bad_file(path, profile.errors());
    }
    // "-o -" is standard output.
    OutputFile out;
    if (!out.open(*output, error, true)) {
        return report_write_failure(error);
    }
    out.stream() << output_json(profile_to_json(*profile), -1) << '\n';
    if (!out.commit(error)) {
        return report_write_failure(error);
    }
    return kExitOk;
}

} // namespace vtrain::cli
