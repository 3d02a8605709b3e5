// SPDX-License-Identifier: MIT
#include "model/host_offload.h"

#include <algorithm>

namespace vtrain {

namespace {
constexpr double kPcie4x16BytesPerS = 32e9;      // per direction (see the header)
constexpr double kDgxA100HostDramShare = 51.2e9; // 409.6 GB/s / 8 GPUs (see the header)
} // namespace

HostLink host_link(const LinkSpec& links)
{
    HostLink h;
    h.link_bytes_per_s = links.host_link_gbytes_per_s > 0 ? links.host_link_gbytes_per_s * 1e9 : kPcie4x16BytesPerS;
    h.memory_bytes_per_s = links.host_memory_gbytes_per_s > 0 ? links.host_memory_gbytes_per_s * 1e9 : kDgxA100HostDramShare;
    return h;
}

double cpu_adam_bytes_per_param(const ParamBytes& bytes)
{
    // The optimizer state (master + moments) is read and written; the gradient is read.
    return 2 * bytes.optimizer + bytes.gradient;
}

double offloaded_optimizer_seconds(double params, const ParamBytes& bytes, const HostLink& link)
{
    if (params <= 0) {
        return 0;
    }
    const double down = params * bytes.gradient / link.link_bytes_per_s;
    const double step = params * cpu_adam_bytes_per_param(bytes) / link.memory_bytes_per_s;
    const double up = params * bytes.weight / link.link_bytes_per_s;
    return down + step + up;
}

double offload_copy_exposed_seconds(double bytes, double hidden_behind_s, const HostLink& link)
{
    if (bytes <= 0) {
        return 0;
    }
    return std::max(0.0, bytes / link.link_bytes_per_s - std::max(0.0, hidden_behind_s));
}
} // namespace vtrain
