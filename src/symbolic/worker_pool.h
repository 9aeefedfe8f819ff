// WorkerPool: a fixed set of threads that run the iterations of one loop at a time (ParallelFor),
// for inference's independent local saturations (inference.h). The calling thread takes part, so
// a pool of 1 thread runs everything on the caller. Which thread runs which iteration is not
// fixed; callers write each iteration's result to its own slot and read them in index order, so
// what they compute does not depend on the thread count.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gg::symbolic {

class WorkerPool {
 public:
  // `threads` 0: the machine's hardware threads. The pool starts threads - 1 workers.
  explicit WorkerPool(size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  size_t threads() const { return workers_.size() + 1; }

  // Runs fn(0) ... fn(n - 1), each once, on the pool's threads and the caller's; returns when all
  // have returned. If any throws, the exception of the lowest such index is rethrown here (after
  // every iteration has finished or thrown).
  void ParallelFor(size_t n, const std::function<void(size_t)>& fn);

  // The thread count a `threads` option means (0: the hardware's, at least 1).
  static size_t Resolve(size_t threads);

 private:
  void Work();
  // Takes and runs iterations of the current loop until none is left.
  void Drain();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;  // a loop started, or the pool stops
  std::condition_variable done_;  // the last iteration of a loop finished
  const std::function<void(size_t)>* fn_ = nullptr;
  size_t n_ = 0;
  size_t next_ = 0;      // the next iteration to hand out
  size_t finished_ = 0;  // iterations finished (returned or thrown)
  size_t loop_ = 0;      // loops started, so a worker joins each at most once
  std::vector<std::exception_ptr> errors_;
  bool stopping_ = false;
};

}  // namespace gg::symbolic
