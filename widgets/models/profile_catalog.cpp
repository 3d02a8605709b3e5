// SPDX-License-Identifier: MIT
#include "models/profile_catalog.h"

#include <QCoreApplication>

namespace vtrain::ui {

ProfileCatalog::ProfileCatalog() : ProfileCatalog(ProfileLibrary::default_library(QCoreApplication::applicationDirPath().toStdString())) {}

ProfileCatalog::ProfileCatalog(ProfileLibrary library) : m_library(std::move(library)), m_ids(m_library.ids()) {}

QStringList ProfileCatalog::ids() const
{
    QStringList list;
    for (const std::string& id : m_ids) {
        list << QString::fromStdString(id);
    }
    return list;
}

std::shared_ptr<const GpuProfile> ProfileCatalog::profile(const std::string& id, QString* error)
{
    if (const auto it = m_loaded.find(id); it != m_loaded.end()) {
        return it->second;
    }
    auto loaded = m_library.load(id);
    if (!loaded.ok()) {
        if (error) {
            *error = QString::fromStdString(loaded.first_error());
        }
        return nullptr;
    }
    auto shared = std::make_shared<const GpuProfile>(std::move(loaded).value());
    m_loaded.emplace(id, shared);
    return shared;
}

std::map<std::string, GpuProfile> ProfileCatalog::profilesFor(const Scenario& scenario, QString& error)
{
    std::vector<std::string> wanted{scenario.cluster.gpu};
    if (scenario.search) {
        wanted.insert(wanted.end(), scenario.search->gpu.begin(), scenario.search->gpu.end());
    }
    std::map<std::string, GpuProfile> profiles;
    for (const std::string& id : wanted) {
        if (id.empty() || profiles.count(id)) {
            continue;
        }
        const auto p = profile(id, &error);
        if (!p) {
            return {};
        }
        profiles.emplace(id, *p);
    }
    return profiles;
}

} // namespace vtrain::ui
