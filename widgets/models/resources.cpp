// SPDX-License-Identifier: MIT
#include "models/resources.h"

#include <QtCore/QDir>
#include <QtCore/qglobal.h>

// Q_INIT_RESOURCE must be used outside any namespace.
static void initVtrainResource()
{
    Q_INIT_RESOURCE(vtrain);
}

namespace vtrain::ui {

void initResources()
{
    static const bool done = [] {
        initVtrainResource();
        return true;
    }();
    (void)done;
}

} // namespace vtrain::ui
