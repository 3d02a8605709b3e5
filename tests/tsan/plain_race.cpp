// SPDX-License-Identifier: MIT
// A real data race outside oneTBB: two std::threads write one counter without synchronisation. scripts/tsan.sh
// checks that ThreadSanitizer still reports it with scripts/tsan.supp in force: the oneTBB suppressions do not
// hide races between the program's own threads.
#include <cstdio>
#include <thread>

int counter = 0;

int main()
{
    std::thread a([] {
        for (int i = 0; i < 1000; ++i) {
            ++counter;
        }
    });
    std::thread b([] {
        for (int i = 0; i < 1000; ++i) {
            ++counter;
        }
    });
    a.join();
    b.join();
    std::printf("%d\n", counter);
    return 0;
}
