// SPDX-License-Identifier: MIT
// Race-free by construction: what the core does with oneTBB (scripts/tsan.sh compiles and runs it under
// ThreadSanitizer). The main thread fills an input, parallel_for tasks write disjoint slots of an output and
// per-thread vectors (enumerable_thread_specific), a parallel_pipeline passes items from a serial stage to
// parallel ones, and the main thread reads everything after the joins. Every access is ordered by oneTBB's
// spawn, steal and join, which happen inside libtbb.so; Debian's libtbb is not built with -fsanitize=thread,
// so TSan sees none of that ordering and reports these accesses as races: the false positives that
// scripts/tsan.supp suppresses. tsan.sh checks that this program is reported without the suppressions and
// clean with them.
#include <oneapi/tbb/enumerable_thread_specific.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <cstdio>
#include <vector>

int main()
{
    std::vector<double> input(20000), output(input.size());
    for (std::size_t i = 0; i < input.size(); ++i) {
        input[i] = 0.5 * static_cast<double>(i);
    }
    tbb::enumerable_thread_specific<std::vector<std::size_t>> seen;
    tbb::task_arena arena(2);
    arena.execute([&] {
        for (int round = 0; round < 10; ++round) {
            tbb::parallel_for(std::size_t{0}, input.size(), [&](std::size_t i) {
                output[i] += input[i];
                seen.local().push_back(i);
            });
        }
        std::size_t next = 0;
        tbb::parallel_pipeline(8, tbb::make_filter<void, std::size_t>(tbb::filter_mode::serial_in_order, [&](tbb::flow_control& fc) {
                                      if (next == input.size()) {
                                          fc.stop();
                                      }
                                      return next++;
                                  }) & tbb::make_filter<std::size_t, void>(tbb::filter_mode::parallel, [&](std::size_t i) {
                                      if (i < output.size()) {
                                          output[i] *= 2;
                                      }
                                  }));
    });
    double sum = 0;
    for (const double v : output) {
        sum += v;
    }
    std::size_t count = 0;
    for (const auto& local : seen) {
        count += local.size();
    }
    std::printf("%.1f %zu\n", sum, count);
    return sum == 20.0 * 0.5 * (20000.0 * 19999.0 / 2) && count == 10 * input.size() ? 0 : 1;
}
