#include "backends/file_common/workers.hpp"

#include <exception>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "backends/backend.hpp"

namespace ckpt::backends::file_common {

void run_workers(std::size_t count, const std::function<void(std::size_t, std::stop_token)>& body) {
  std::stop_source stop;
  std::mutex mutex;
  std::exception_ptr first_error;
  auto record = [&](std::exception_ptr error) {
    const std::scoped_lock lock(mutex);
    if (!first_error) first_error = std::move(error);
    stop.request_stop();
  };

  {
    std::vector<std::jthread> threads;  // joined when this block ends, also on exceptions
    threads.reserve(count);
    try {
      for (std::size_t k = 0; k < count; ++k) {
        threads.emplace_back([&body, &record, token = stop.get_token(), k] {
          try {
            body(k, token);
          } catch (...) {
            record(std::current_exception());
          }
        });
      }
    } catch (const std::system_error& e) {
      record(std::make_exception_ptr(IoError("posix: start worker thread " +
                                             std::to_string(threads.size() + 1) + " of " +
                                             std::to_string(count) + ": " + e.what())));
    }
  }
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace ckpt::backends::file_common
