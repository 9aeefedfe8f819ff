#include "symbolic/worker_pool.h"

#include <algorithm>

namespace gg::symbolic {

size_t WorkerPool::Resolve(size_t threads) {
  if (threads > 0) return threads;
  return std::max<size_t>(1, std::thread::hardware_concurrency());
}

WorkerPool::WorkerPool(size_t threads) {
  const size_t count = Resolve(threads);
  for (size_t i = 1; i < count; ++i) workers_.emplace_back([this] { Work(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void WorkerPool::ParallelFor(size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  if (workers_.empty() || n == 1) {
    // Nothing to share: run in order on the caller (the same results, no hand-off).
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    next_ = 0;
    finished_ = 0;
    errors_.assign(n, nullptr);
    ++loop_;
  }
  wake_.notify_all();
  Drain();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return finished_ == n_; });
  fn_ = nullptr;
  for (std::exception_ptr& e : errors_) {
    if (e) std::rethrow_exception(e);
  }
}

void WorkerPool::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (fn_ != nullptr && next_ < n_) {
    const size_t i = next_++;
    const std::function<void(size_t)>& fn = *fn_;
    lock.unlock();
    std::exception_ptr error;
    try {
      fn(i);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    errors_[i] = error;
    if (++finished_ == n_) done_.notify_all();
  }
}

void WorkerPool::Work() {
  size_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || (loop_ != seen && fn_ != nullptr); });
      if (stopping_) return;
      seen = loop_;
    }
    Drain();
  }
}

}  // namespace gg::symbolic
