// SPDX-License-Identifier: MIT
#pragma once
// The GPU profiles the app can use (shipped and user ones, core's ProfileLibrary search path), loaded on
// first use and kept: a profile is a few hundred kilobytes of JSON tables.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <QString>
#include <QStringList>

#include "vtrain/profile_json.h"
#include "vtrain/scenario.h"

namespace vtrain::ui {

class ProfileCatalog {
public:
    // Searches the default library relative to the running executable.
    ProfileCatalog();
    explicit ProfileCatalog(ProfileLibrary library);

    QStringList ids() const;
    // null when the profile cannot be loaded; `error` then says why. Shared: a plan's detail simulation
    // keeps its profile alive on a worker thread.
    std::shared_ptr<const GpuProfile> profile(const std::string& id, QString* error = nullptr);
    // Every profile a scenario names (cluster.gpu and search.gpu), for explore(); empty + error on failure.
    std::map<std::string, GpuProfile> profilesFor(const Scenario& scenario, QString& error);

private:
    ProfileLibrary m_library;
    std::vector<std::string> m_ids;
    std::map<std::string, std::shared_ptr<const GpuProfile>> m_loaded;
};

} // namespace vtrain::ui
