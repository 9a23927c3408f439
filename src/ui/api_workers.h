// The threads that answer the dashboard's API calls.
//
// Connections are many and mostly idle: a browser keeps its connections open between requests,
// each holding one of the HTTP server's threads. Answers are few at a time (the machine has a
// few cores) and go through the API's one shared Runner, which makes each back-end's instance
// (a store connection, a parsed sweep record) once per thread that calls it. So answers run
// here, on a few threads, and those instances are made once per worker, not once per
// connection: 256 connection threads each with their own cost 700 MiB.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace torchx::ui {

class ApiWorkers {
 public:
  explicit ApiWorkers(size_t threads) {
    for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { Work(); });
  }
  ~ApiWorkers() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();  // what was queued is answered first
  }
  ApiWorkers(const ApiWorkers&) = delete;
  ApiWorkers& operator=(const ApiWorkers&) = delete;

  /// Runs `f` on a worker and returns what it returns (rethrowing what it throws), waiting.
  template <class F>
  std::invoke_result_t<F> Run(F&& f) {
    return RunWatched(
        std::forward<F>(f), [] {}, std::chrono::hours(1));
  }

  /// As Run, calling `watch` every `every` while it waits (to see whether its client has left).
  template <class F, class W>
  std::invoke_result_t<F> RunWatched(F&& f, W&& watch, std::chrono::milliseconds every) {
    // Owned by the queue too: the worker may still be returning from it when the caller wakes.
    auto task = std::make_shared<std::packaged_task<std::invoke_result_t<F>()>>(std::forward<F>(f));
    auto answer = task->get_future();
    {
      std::lock_guard lock(mu_);
      queue_.emplace_back([task] { (*task)(); });
    }
    cv_.notify_one();
    while (answer.wait_for(every) != std::future_status::ready) watch();
    return answer.get();
  }

 private:
  void Work() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
      }
      job();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace torchx::ui
