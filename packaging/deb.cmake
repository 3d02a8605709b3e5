# SPDX-License-Identifier: MIT
# CPack: one .deb, vtrain-explorer, with everything `cmake --install` puts under the prefix.
# `cpack --config <build>/CPackConfig.cmake` (scripts/test-package.sh builds, installs and runs it).
set(VTRAIN_PACKAGE_MAINTAINER "vTrain Explorer maintainers <maintainers@vtrain-explorer.invalid>"
    CACHE STRING "Maintainer field of the .deb")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME vtrain-explorer)
set(CPACK_PACKAGE_VENDOR "vTrain Explorer")
set(CPACK_PACKAGE_CONTACT "${VTRAIN_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
# Debian policy: description lines under 80 characters.
set(CPACK_PACKAGE_DESCRIPTION
    "vtrain simulates one training iteration of a decoder-only transformer under a\n\
parallel plan (tensor, pipeline and data parallelism, pipeline schedule,\n\
recomputation, ZeRO) from per-GPU operator profiles, and reports iteration time,\n\
MFU, memory, training days and dollar cost. vtrain explore sweeps every plan to\n\
a Pareto front of time and cost; vtrain-explorer is the Qt desktop explorer.\n\
Modeled A100, H100 and H200 profiles and examples are in /usr/share/vtrain.")
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# dpkg-shlibdeps (from dpkg-dev) turns the linked libraries into Debian's runtime packages: libqt6*6,
# libqcustomplot2.1, libtbb12. Qt's platform plugins are loaded at run time, so no library names them.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(VTRAIN_BUILD_GUI)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins")
endif()

include(CPack)
