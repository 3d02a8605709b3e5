// SPDX-License-Identifier: MIT
// For ThreadSanitizer builds only (VTRAIN_ENABLE_TSAN builds it, every test preloads it): stands in for oneTBB's scalable allocator,
// libtbbmalloc.so.2, and forwards to malloc/free. libtbb.so looks for an already loaded library of that
// name before it loads the real one (dynamic_link, DYNAMIC_LINK_GLOBAL), so with this preloaded every
// allocation oneTBB makes (enumerable_thread_specific slots, task objects, concurrent containers) goes
// through malloc, which TSan intercepts: a block freed by one thread and handed to another is a fresh
// allocation to TSan. With the real tbbmalloc (uninstrumented, its own pools, reuse ordered by its own
// atomics) TSan sees the second thread write memory the first one wrote, with no edge between them, and
// reports a race that is not there (tst_sweep_runner: the constructor of an enumerable_thread_specific
// callback in one sweep's thread against the previous sweep's thread).
#include <cstddef>
#include <cstdlib>

extern "C" {

__attribute__((visibility("default"))) void* scalable_malloc(std::size_t size)
{
    return std::malloc(size);
}

__attribute__((visibility("default"))) void scalable_free(void* block)
{
    std::free(block);
}

__attribute__((visibility("default"))) void* scalable_aligned_malloc(std::size_t size, std::size_t alignment)
{
    void* block = nullptr;
    if (alignment < sizeof(void*)) {
        alignment = sizeof(void*);
    }
    return posix_memalign(&block, alignment, size) == 0 ? block : nullptr;
}

__attribute__((visibility("default"))) void scalable_aligned_free(void* block)
{
    std::free(block);
}

} // extern "C"
