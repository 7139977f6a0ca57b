#include "backends/mpi_common/info_hints.hpp"

#include <stdexcept>
#include <utility>

#include "backends/mpi_common/group_comm.hpp"
#include "backends/mpi_common/hint_catalog.hpp"
#include "backends/mpi_common/mpi_error.hpp"

namespace ckpt::backends::mpi {
namespace {

constexpr std::string_view kPrefix = "hints.";

std::string option_name(std::string_view backend, std::string_view key) {
  return "`backend." + std::string(backend) + "." + std::string(kPrefix) + std::string(key) + "`";
}

[[noreturn]] void throw_unknown(std::string_view backend, std::string_view key) {
  std::string message =
      option_name(backend, key) + ": unknown MPI-IO hint `" + std::string(key) + "`";
  if (const auto match = closest_hint(key)) {
    message += " — did you mean `" + std::string(kPrefix) + *match + "`?";
  }
  message += " (known hints:";
  for (const HintSpec& spec : known_hints()) message += " " + std::string(spec.name);
  throw std::invalid_argument(message + ")");
}

void check_value(std::string_view backend, const HintSpec& spec, const std::string& value) {
  std::optional<std::string> problem = hint_value_problem(spec.kind, value);
  if (!problem && value.size() >= static_cast<std::size_t>(MPI_MAX_INFO_VAL)) {
    problem =
        "is longer than MPI_MAX_INFO_VAL (" + std::to_string(MPI_MAX_INFO_VAL - 1) + " characters)";
  }
  if (!problem) return;
  throw std::invalid_argument(option_name(backend, spec.name) + " = \"" + value +
                              "\": " + *problem + " (" + std::string(spec.name) + ": " +
                              std::string(spec.meaning) + ")");
}

}  // namespace

std::map<std::string, std::string> validated_hints(std::string_view backend,
                                                   const BackendOptions& options) {
  std::map<std::string, std::string> hints;
  for (const auto& [key, value] : options) {
    if (!key.starts_with(kPrefix)) continue;
    const std::string name = key.substr(kPrefix.size());
    const auto spec = find_hint(name);
    if (!spec) throw_unknown(backend, name);
    check_value(backend, *spec, value);
    hints.emplace(name, value);
  }
  return hints;
}

std::string hints_problem(std::string_view backend, const BackendOptions& options) {
  try {
    validated_hints(backend, options);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

InfoHints::InfoHints(std::string_view backend, const BackendOptions& options)
    : hints_(validated_hints(backend, options)) {
  if (hints_.empty()) return;
  if (!mpi_active()) {
    throw std::invalid_argument(std::string(backend) +
                                " needs MPI initialised: MPI-IO hints are MPI_Info objects");
  }
  const int created = MPI_Info_create(&info_);
  if (created != MPI_SUCCESS) {
    info_ = MPI_INFO_NULL;
    throw std::runtime_error(std::string(backend) +
                             ": MPI_Info_create: " + mpi_error_text(created));
  }
  for (const auto& [key, value] : hints_) {
    const int code = MPI_Info_set(info_, key.c_str(), value.c_str());
    if (code != MPI_SUCCESS) {
      release();
      throw std::invalid_argument(option_name(backend, key) + " = \"" + value +
                                  "\": MPI_Info_set refused it: " + mpi_error_text(code));
    }
  }
}

InfoHints::~InfoHints() {
  release();
}

InfoHints::InfoHints(InfoHints&& other) noexcept
    : hints_(std::move(other.hints_)), info_(std::exchange(other.info_, MPI_INFO_NULL)) {}

InfoHints& InfoHints::operator=(InfoHints&& other) noexcept {
  if (this != &other) {
    release();
    hints_ = std::move(other.hints_);
    info_ = std::exchange(other.info_, MPI_INFO_NULL);
  }
  return *this;
}

void InfoHints::release() noexcept {
  if (info_ != MPI_INFO_NULL && mpi_active()) MPI_Info_free(&info_);
  info_ = MPI_INFO_NULL;
}

}  // namespace ckpt::backends::mpi
