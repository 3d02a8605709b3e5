// SPDX-License-Identifier: MIT
#include "vtrain/launch_plan_json.h"

#include "vtrain/scenario_json.h"

namespace vtrain {

Expected<Scenario> scenario_with_plan_file(const Scenario& scenario, const nlohmann::json& given)
{
    if (!given.is_object()) {
        return Diagnostic{"", "must be a JSON object: a plan block or a row with a \"plan\""};
    }
    nlohmann::json merged = scenario_to_json(scenario);
    merged.erase("search"); // the sweep ranges play no part in one plan's flags
    if (given.contains("plan")) {
        merged["plan"] = given.at("plan");
        if (given.contains("gpu")) {
            merged["cluster"]["gpu"] = given.at("gpu");
        }
        if (given.contains("num_gpus")) {
            merged["cluster"]["num_gpus"] = given.at("num_gpus");
        }
    } else {
        merged["plan"] = given;
    }
    return scenario_from_json(merged);
}

} // namespace vtrain
