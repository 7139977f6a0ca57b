#pragma once

#include <string>
#include <utility>

namespace ckpt::backends::gds {

// A shared library opened with dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE), move-only; the
// destructor closes the handle. RTLD_NODELETE keeps the code mapped after the last close:
// libcufile and libcuda start threads and register exit handlers that outlive any handle.
class SharedLibrary {
 public:
  SharedLibrary() = default;
  ~SharedLibrary();
  SharedLibrary(SharedLibrary&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // Opens `name`: a path when it holds a '/', else a name the dynamic loader searches for. On
  // failure returns a closed library and sets `error` to dlerror()'s text.
  static SharedLibrary open(const std::string& name, std::string& error);

  bool is_open() const noexcept { return handle_ != nullptr; }
  // The file the loader mapped (its link-map name), or "" when closed.
  std::string path() const;
  // The address of `symbol`, or nullptr when the library does not export it.
  void* symbol(const char* symbol) const noexcept;

  // Sets `function` to `symbol` of this library; false (and nullptr) when absent.
  template <class Function>
  bool bind(Function& function, const char* symbol) const noexcept {
    function = reinterpret_cast<Function>(this->symbol(symbol));
    return function != nullptr;
  }

 private:
  explicit SharedLibrary(void* handle) noexcept : handle_(handle) {}

  void* handle_ = nullptr;
};

}  // namespace ckpt::backends::gds
