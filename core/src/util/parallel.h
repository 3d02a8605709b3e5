// SPDX-License-Identifier: MIT
#pragma once
// The core's parallel loops: oneTBB's parallel_for, parallel_pipeline and task_arena::execute, with the
// hand-offs between the spawning thread and the tasks stated to ThreadSanitizer.
//
// Why: Debian's libtbb.so is not built with -fsanitize=thread. oneTBB orders a task after the code that
// spawned it, and the caller after the tasks it joins, with atomics inside libtbb.so that TSan does not see,
// so every result a task writes and the caller reads after the join is reported as a race (scripts/tsan.sh).
// Each wrapper below states those two edges with __tsan_release / __tsan_acquire on a token: the caller
// releases before the loop and acquires after it; each task body acquires when it starts and releases when
// it ends. Nothing else is ordered, so a race between two tasks, or between a task and another thread, is
// still reported. Without TSan the annotations compile to nothing and the loops are oneTBB's own.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <utility>

#if defined(__SANITIZE_THREAD__)
#define VTRAIN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define VTRAIN_TSAN 1
#endif
#endif

#if defined(VTRAIN_TSAN)
#include <sanitizer/tsan_interface.h>
#endif

namespace vtrain::parallel {

// One synchronisation point between a caller and the tasks of one loop.
class HandOff {
public:
    // What this thread wrote so far becomes visible to whoever calls receive() after.
    void publish() const
    {
#if defined(VTRAIN_TSAN)
        __tsan_release(const_cast<HandOff*>(this));
#endif
    }
    // This thread sees everything published before.
    void receive() const
    {
#if defined(VTRAIN_TSAN)
        __tsan_acquire(const_cast<HandOff*>(this));
#endif
    }

    // `body` wrapped as a task: receives at its start, publishes at its end.
    template <class Body>
    auto task(Body& body) const
    {
        return [this, &body](auto&&... args) -> decltype(auto) {
            receive();
            struct PublishAtEnd {
                const HandOff* h;
                ~PublishAtEnd() { h->publish(); }
            } at_end{this};
            return body(std::forward<decltype(args)>(args)...);
        };
    }

private:
    char m_token = 0; // gives the object an address of its own
};

// Runs `loop(h)`, which spawns its tasks with h.task(...) and joins them, between the caller's publish and
// receive.
template <class Loop>
void joined(Loop&& loop)
{
    const HandOff h;
    h.publish();
    loop(h);
    h.receive();
}

// tbb::parallel_for(first, last, body), body(i) for every i in [first, last).
template <class Index, class Body>
void parallel_for(Index first, Index last, Body&& body)
{
    joined([&](const HandOff& h) { tbb::parallel_for(first, last, h.task(body)); });
}

// tbb::parallel_for over a blocked range, body(range) for each sub-range.
template <class Index, class Body>
void parallel_for(const tbb::blocked_range<Index>& range, Body&& body)
{
    joined([&](const HandOff& h) { tbb::parallel_for(range, h.task(body)); });
}

// arena.execute(f): f may run on one of the arena's threads, not the caller's.
template <class F>
decltype(auto) execute(tbb::task_arena& arena, F&& f)
{
    const HandOff h;
    h.publish();
    struct ReceiveAtEnd {
        const HandOff& h;
        ~ReceiveAtEnd() { h.receive(); }
    } at_end{h};
    return arena.execute(h.task(f));
}

} // namespace vtrain::parallel
