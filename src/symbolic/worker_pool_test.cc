#include "symbolic/worker_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

namespace gg::symbolic {
namespace {

TEST(WorkerPoolTest, RunsEveryIterationOnceOverManyLoops) {
  for (size_t threads : {1u, 2u, 3u, 8u}) {
    WorkerPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (size_t n : {0u, 1u, 2u, 5u, 100u, 1000u}) {
      std::vector<std::atomic<int>> runs(n);
      pool.ParallelFor(n, [&](size_t i) { runs[i].fetch_add(1); });
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(runs[i].load(), 1) << threads << " " << n << " " << i;
    }
  }
}

TEST(WorkerPoolTest, UsesMoreThanOneThreadWhenGiven) {
  WorkerPool pool(2);
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  // Each iteration waits (bounded) for another to be inside at the same time.
  pool.ParallelFor(2, [&](size_t) {
    inside.fetch_add(1);
    for (int spin = 0; spin < 200000000 && !overlapped.load(); ++spin) {
      if (inside.load() == 2) overlapped.store(true);
    }
  });
  EXPECT_TRUE(overlapped.load());
}

TEST(WorkerPoolTest, RethrowsTheLowestFailingIterationAfterAllFinish) {
  WorkerPool pool(4);
  std::atomic<int> finished{0};
  try {
    pool.ParallelFor(64, [&](size_t i) {
      finished.fetch_add(1);
      if (i == 7 || i == 40) throw std::runtime_error("iteration " + std::to_string(i));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "iteration 7");
  }
  EXPECT_EQ(finished.load(), 64);
  // The pool is usable afterwards.
  std::atomic<int> again{0};
  pool.ParallelFor(10, [&](size_t) { again.fetch_add(1); });
  EXPECT_EQ(again.load(), 10);
}

TEST(WorkerPoolTest, ZeroMeansTheHardwareThreads) {
  EXPECT_GE(WorkerPool::Resolve(0), 1u);
  EXPECT_EQ(WorkerPool::Resolve(3), 3u);
}

}  // namespace
}  // namespace gg::symbolic
