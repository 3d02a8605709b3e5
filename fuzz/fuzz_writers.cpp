// SPDX-License-Identifier: MIT
// The writers of generated files (TOML, JSON, shell) under hostile strings: see writers.h.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "readers.h"
#include "writers.h"

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    vtrain::fuzz::limit_stack();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    vtrain::fuzz::check_writers(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
