// SPDX-License-Identifier: MIT
// One libFuzzer target per reader: VTRAIN_FUZZ_KIND names it (fuzz/CMakeLists.txt builds nine).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "readers.h"

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    vtrain::fuzz::limit_stack();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    vtrain::fuzz::read_input(vtrain::fuzz::InputKind::VTRAIN_FUZZ_KIND, std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
