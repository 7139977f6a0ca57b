#include "backends/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include "backends/registration.hpp"
#include "backends/suggest.hpp"

namespace ckpt::backends {
namespace {

std::string unavailable_reason(const RegisteredBackend& backend, const BackendOptions& options) {
  if (backend.registration.make == nullptr) return backend.not_built;
  if (backend.registration.probe != nullptr) return backend.registration.probe(options);
  return "";
}

[[noreturn]] void throw_unknown(std::string_view name,
                                const std::vector<RegisteredBackend>& backends) {
  std::vector<std::string> names;
  for (const RegisteredBackend& b : backends) names.push_back(b.registration.name);
  std::string message =
      "unknown backend `" + std::string(name) + "`" + did_you_mean(name, names) + " (backends:";
  for (const std::string& n : names) message += " " + n;
  throw std::invalid_argument(message + ")");
}

// The backend `name`, checked as make_backend promises; throws std::invalid_argument.
RegisteredBackend checked(std::string_view name, const IoSettings& settings,
                          const BackendOptions& options) {
  std::vector<RegisteredBackend> backends = registered_backends();
  const auto found =
      std::find_if(backends.begin(), backends.end(),
                   [&](const RegisteredBackend& b) { return b.registration.name == name; });
  if (found == backends.end()) throw_unknown(name, backends);
  const BackendRegistration& r = found->registration;
  if (r.make == nullptr) {
    throw std::invalid_argument("backend `" + r.name + "` is not available in this build: " +
                                found->not_built + " (CMake option " + found->cmake_option + ")");
  }
  const OptionValues values(r.name, r.options, options);
  check_settings(r.name, r.capabilities(values), settings);
  if (r.check != nullptr) {
    if (const std::string problem = r.check(options); !problem.empty())
      throw std::invalid_argument(problem);
  }
  if (const std::string reason = unavailable_reason(*found, options); !reason.empty()) {
    throw std::invalid_argument(
        "backend `" + r.name + "` is not available on this machine: " + reason +
        " (compiled in with " + found->cmake_option + ", but it cannot run here)");
  }
  return std::move(*found);
}

}  // namespace

std::vector<BackendInfo> list_backends() {
  std::vector<BackendInfo> infos;
  for (RegisteredBackend& backend : registered_backends()) {
    BackendRegistration& r = backend.registration;
    BackendInfo info{.name = r.name,
                     .reason = unavailable_reason(backend, {}),
                     .cmake_option = backend.cmake_option,
                     .description = r.description,
                     .capabilities = r.capabilities(OptionValues(r.name, r.options, {})),
                     .needs_mpi = r.needs_mpi};
    info.available = info.reason.empty();
    info.options = std::move(r.options);
    infos.push_back(std::move(info));
  }
  return infos;
}

std::unique_ptr<Backend> make_backend(std::string_view name, const IoSettings& settings,
                                      const BackendOptions& options, const ProcessGroup& group) {
  return checked(name, settings, options).registration.make(settings, options, group);
}

void validate_backend(std::string_view name, const IoSettings& settings,
                      const BackendOptions& options) {
  checked(name, settings, options);
}

}  // namespace ckpt::backends
