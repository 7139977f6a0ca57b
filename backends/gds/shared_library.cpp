#include "backends/gds/shared_library.hpp"

#include <dlfcn.h>
#include <link.h>

namespace ckpt::backends::gds {

SharedLibrary::~SharedLibrary() {
  if (handle_ != nullptr) ::dlclose(handle_);
}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_ != nullptr) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

SharedLibrary SharedLibrary::open(const std::string& name, std::string& error) {
  ::dlerror();  // clear a stale message
  void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* text = ::dlerror();
    error = text != nullptr ? text : "dlopen failed";
  }
  return SharedLibrary(handle);
}

std::string SharedLibrary::path() const {
  if (handle_ == nullptr) return "";
  link_map* map = nullptr;
  if (::dlinfo(handle_, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr)
    return "";
  return map->l_name;
}

void* SharedLibrary::symbol(const char* symbol) const noexcept {
  if (handle_ == nullptr) return nullptr;
  return ::dlsym(handle_, symbol);
}

}  // namespace ckpt::backends::gds
