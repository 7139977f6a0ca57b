#pragma once

#include <cstddef>
#include <functional>
#include <stop_token>

namespace ckpt::backends::file_common {

// Runs body(k, stop) for k in [0, count), each on its own std::jthread, and returns when all
// have finished. The first exception a body throws wins: it requests stop (the other bodies
// should check `stop` and return early) and is rethrown here after every thread has joined.
// Failing to start a thread stops the started ones and throws IoError.
void run_workers(std::size_t count, const std::function<void(std::size_t, std::stop_token)>& body);

}  // namespace ckpt::backends::file_common
