// Helpers for driving build/bin/ckptbench as a user does: start it (or mpirun) as a child
// process with its own process group, capture stdout and stderr separately, wait with a
// deadline, and read what a run leaves behind (results.jsonl, results.csv, manifests).
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ckpt::integration {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// An ASan or TSan build (gcc defines __SANITIZE_*, clang 14 only answers __has_feature): tests
// that bound the address space or preload a library skip there, because the sanitizer's runtime
// reserves terabytes of shadow memory and must be the first library loaded.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#else
inline constexpr bool kSanitizedBuild = false;
#endif

inline const std::string kBinary = CKPTBENCH_BIN;
inline constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;  // bytes, for sizes in campaigns

// How a child process ended.
struct Outcome {
  int exit_code = -1;   // when it exited
  int term_signal = 0;  // when a signal ended it
  bool timed_out = false;
  double seconds = 0;
  std::string out;
  std::string err;

  bool exited() const { return exit_code >= 0; }
  // For assertion messages: how it ended and everything it printed.
  std::string describe() const {
    std::string how = timed_out  ? "timed out and was killed"
                      : exited() ? "exited with " + std::to_string(exit_code)
                                 : "ended by signal " + std::to_string(term_signal);
    return how + " after " + std::to_string(seconds) + " s\n--- stdout ---\n" + out +
           "--- stderr ---\n" + err;
  }
};

// A child process in its own process group; stdin is /dev/null, stdout and stderr go to
// anonymous temporary files that can be read while it runs. The destructor kills the group
// of a child not yet waited for.
class Process {
 public:
  explicit Process(const std::vector<std::string>& argv)
      : out_(std::tmpfile()), err_(std::tmpfile()) {
    if (out_ == nullptr || err_ == nullptr)
      throw std::runtime_error("tmpfile: " + std::string(std::strerror(errno)));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int out_fd = ::fileno(out_);
    const int err_fd = ::fileno(err_);
    start_ = Clock::now();
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork: " + std::string(std::strerror(errno)));
    if (pid_ == 0) {
      ::setpgid(0, 0);
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (null_fd >= 0) ::dup2(null_fd, 0);
      ::dup2(out_fd, 1);
      ::dup2(err_fd, 2);
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
      ::execvp(args[0], args.data());
      std::fprintf(stderr, "exec %s: %s\n", args[0], std::strerror(errno));
      ::_exit(127);
    }
    ::setpgid(pid_, pid_);  // also here, so that a kill of the group right after start reaches it
  }
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process() {
    if (!reaped_) stop();
    std::fclose(out_);
    std::fclose(err_);
  }

  pid_t pid() const { return pid_; }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  std::string out_so_far() const { return read_all(out_); }
  std::string err_so_far() const { return read_all(err_); }

  // Waits until the child ends or `timeout` passes; then kills its process group.
  Outcome wait(std::chrono::milliseconds timeout) {
    Outcome o;
    const auto deadline = Clock::now() + timeout;
    int raw = 0;
    while (!reaped_) {
      const pid_t done = ::waitpid(pid_, &raw, WNOHANG);
      if (done == pid_) {
        reaped_ = true;
        break;
      }
      if (Clock::now() >= deadline) {
        o.timed_out = true;
        raw = stop();
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    o.seconds = elapsed();
    if (WIFEXITED(raw)) o.exit_code = WEXITSTATUS(raw);
    if (WIFSIGNALED(raw)) o.term_signal = WTERMSIG(raw);
    o.out = out_so_far();
    o.err = err_so_far();
    return o;
  }

 private:
  // SIGTERM first (mpirun passes it on to its ranks, which it puts in process groups of
  // their own), then SIGKILL to the child's group after 3 s. Returns the wait status.
  int stop() {
    int raw = 0;
    ::kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + 3s;
    while (Clock::now() < deadline) {
      if (::waitpid(pid_, &raw, WNOHANG) == pid_) {
        reaped_ = true;
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    ::kill(-pid_, SIGKILL);  // whatever is left of the group
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &raw, 0);
      reaped_ = true;
    }
    return raw;
  }

  static std::string read_all(std::FILE* f) {
    std::string text;
    char buffer[8192];
    off_t offset = 0;
    for (;;) {
      const ssize_t n = ::pread(::fileno(f), buffer, sizeof buffer, offset);
      if (n <= 0) break;
      text.append(buffer, static_cast<std::size_t>(n));
      offset += n;
    }
    return text;
  }

  std::FILE* out_;
  std::FILE* err_;
  pid_t pid_ = -1;
  bool reaped_ = false;
  Clock::time_point start_;
};

inline Outcome run_process(const std::vector<std::string>& argv,
                           std::chrono::milliseconds timeout = 120s) {
  Process p(argv);
  return p.wait(timeout);
}

// `ckptbench ARGS...`
inline Outcome ckptbench(std::vector<std::string> args, std::chrono::milliseconds timeout = 120s) {
  args.insert(args.begin(), kBinary);
  return run_process(args, timeout);
}

// The mpirun on PATH, if any.
inline std::optional<std::string> find_mpirun() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    const fs::path candidate = fs::path(dir) / "mpirun";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

#ifdef CKPT_TEST_HAVE_MPI
// Why a test that starts processes under mpirun cannot run here, or "" when it can.
inline std::string why_no_mpirun() {
  if (!CKPT_TEST_HAVE_MPI)
    return "ckptbench was built without MPI (CKPT_WITH_MPI=OFF or MPI not found)";
  if (!find_mpirun()) return "mpirun is not on PATH, so the processes cannot be started";
  return "";
}
#endif

// mpirun with the options this project uses (root, more processes than cores, no busy-waiting).
// btl_vader_single_copy_mechanism none: containers often forbid the cross-memory attach
// (ptrace) that OpenMPI's shared-memory transport uses for large messages.
inline std::vector<std::string> mpirun_args(const std::string& mpirun, int processes) {
  return {mpirun,
          "--allow-run-as-root",
          "--oversubscribe",
          "--mca",
          "mpi_yield_when_idle",
          "1",
          "--mca",
          "btl_vader_single_copy_mechanism",
          "none",
          "-np",
          std::to_string(processes)};
}

// A fresh directory from mkdtemp, removed with everything in it at the end.
class Scratch {
 public:
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "ckpt_integration_XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
    path_ = fs::weakly_canonical(pattern);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

  fs::path write(const std::string& name, const std::string& text) const {
    const fs::path file = path_ / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary) << text;
    return file;
  }

 private:
  fs::path path_;
};

// Directories in `case_dir` (step directories), sorted.
inline std::vector<fs::path> step_dirs(const fs::path& case_dir) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(case_dir, ec)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

inline std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The one run directory `ckptbench run --output DIR` created in DIR (empty path if none).
inline fs::path run_directory(const fs::path& output) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(output, ec)) {
    if (entry.is_directory()) dirs.push_back(entry.path());
  }
  EXPECT_LE(dirs.size(), 1u) << "more than one run directory in " << output;
  return dirs.empty() ? fs::path() : dirs.front();
}

// Every object of DIR/*/results.jsonl under an --output directory.
inline std::vector<nlohmann::json> read_results(const fs::path& output) {
  const fs::path dir = run_directory(output);
  std::vector<nlohmann::json> objects;
  if (dir.empty()) return objects;
  std::ifstream in(dir / "results.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) objects.push_back(nlohmann::json::parse(line));
  }
  return objects;
}

// The checkpoint directory a case directory's `latest` file names (empty if none).
inline fs::path latest_checkpoint(const fs::path& case_dir) {
  std::ifstream in(case_dir / "latest");
  std::string name;
  if (!(in >> name)) return {};
  return case_dir / name;
}

inline constexpr const char* kManifest = "ckptbench-manifest.json";

inline nlohmann::json read_manifest(const fs::path& checkpoint_dir) {
  return nlohmann::json::parse(read_text(checkpoint_dir / kManifest));
}

// The complete checkpoints (those with a manifest) of case directory `case_dir`, oldest first.
inline std::vector<fs::path> complete_checkpoints(const fs::path& case_dir) {
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(case_dir)) {
    if (fs::exists(e.path() / kManifest)) found.push_back(e.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

// Bytes of the data files the manifest of `checkpoint` lists (the files it holds itself).
inline std::uint64_t manifest_file_bytes(const fs::path& checkpoint) {
  std::uint64_t bytes = 0;
  const nlohmann::json manifest = read_manifest(checkpoint);
  for (const nlohmann::json& f : manifest.at("files"))
    bytes += fs::file_size(checkpoint / f.at("path").get<std::string>());
  return bytes;
}

// Bytes of the changed runs a delta checkpoint's manifest lists, and whether every entry names
// `base` as the checkpoint holding it (and no training iteration of its own: the piece is the
// delta's state).
inline std::uint64_t delta_run_bytes(const nlohmann::json& manifest, const std::string& base,
                                     bool& at_base) {
  std::uint64_t bytes = 0;
  at_base = true;
  for (const nlohmann::json& t : manifest.at("tensors")) {
    at_base = at_base && t.value("checkpoint", "") == base && !t.contains("iteration");
    if (!t.contains("delta")) continue;
    for (const nlohmann::json& run : t.at("delta").at("runs"))
      bytes += run.at(1).get<std::uint64_t>();
  }
  return bytes;
}

// `ckptbench run` of campaign `text` (written into `dir` as `file`) with --phase `phase`, its
// results under out-<phase>.
inline Outcome run_campaign_phase(const Scratch& dir, const std::string& file,
                                  const std::string& text, const std::string& phase) {
  const fs::path path = dir.write(file, text);
  return ckptbench(
      {"run", path.string(), "--output", (dir / ("out-" + phase)).string(), "--phase", phase});
}

// The one record of run_campaign_phase(dir, file, text, "restore"), expected to exit 0 with its
// restore ok and verified.
inline nlohmann::json verified_restore(const Scratch& dir, const std::string& file,
                                       const std::string& text) {
  const Outcome restored = run_campaign_phase(dir, file, text, "restore");
  EXPECT_EQ(restored.exit_code, 0) << restored.describe();
  const std::vector<nlohmann::json> records = read_results(dir / "out-restore");
  if (records.size() != 1u) return nlohmann::json{{"selective", {{"restore", nullptr}}}};
  EXPECT_EQ(records[0].at("status"), "ok") << records[0].at("error");
  EXPECT_EQ(records[0].at("verified"), true);
  return records[0];
}

// Files and directories under `dir`, recursively (0 when it does not exist).
inline std::size_t entries_under(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return 0;
  std::size_t n = 0;
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

// A model small enough that a full-state checkpoint takes about 1 MiB.
inline constexpr const char* kTinyModel = R"(name = "tiny"
hidden_size = 64
intermediate_size = 128
num_hidden_layers = 2
num_attention_heads = 4
num_key_value_heads = 2
vocab_size = 256
)";

// A campaign file: the [campaign] table with `name` and `target`, then `rest` (which may
// start with more [campaign] keys).
inline std::string campaign_toml(const std::string& name, const fs::path& target,
                                 const std::string& rest) {
  return "[campaign]\nname = \"" + name + "\"\ntarget = \"" + target.string() + "\"\n" + rest;
}

// A kept campaign of the tiny model's full state (its model file written into `dir`):
// `iterations` timed iterations after `warmup`, caches left alone, then `rest`.
inline std::string tiny_full_state_campaign(const Scratch& dir, const std::string& name,
                                            int iterations, int warmup, const std::string& rest) {
  const fs::path model = dir.write("tiny.toml", kTinyModel);
  return campaign_toml(
      name, dir / "target",
      "create_target = true\nkeep = true\niterations = " + std::to_string(iterations) +
          "\nwarmup = " + std::to_string(warmup) + "\n[model]\nname = \"" + model.string() +
          "\"\n[state]\nscope = \"full\"\n[cache]\npolicy = \"none\"\n" + rest);
}

// After campaign_toml's [campaign] table: a kept checkpoint of one iteration without warm-up of
// the model file `model` at scale 4 under TP 2, `scope` state as `format`, caches left alone. The
// tensors lie back to back (strategy.framing = "off"): the load tests count requests by which
// tensors are neighbours in a file.
inline std::string tp2_checkpoint_toml(const fs::path& model, const std::string& scope,
                                       const std::string& format) {
  return "create_target = true\nkeep = true\niterations = 1\nwarmup = 0\n[model]\nname = \"" +
         model.string() + "\"\nscale = 4\n[parallel]\ntp = 2\n[state]\nscope = \"" + scope +
         "\"\n[strategy]\nformat = \"" + format +
         "\"\nframing = \"off\"\n[cache]\npolicy = \"none\"\n";
}

// Bytes `ckptbench run` writes per checkpoint for `world` modeled ranks of the layout that
// `layout_args` describes: every shard of every rank (from `ckptbench layout --rank R --json`)
// scaled down as shard_geometry describes.
inline std::uint64_t scaled_checkpoint_bytes(const std::vector<std::string>& layout_args, int world,
                                             std::int64_t scale) {
  std::uint64_t total = 0;
  for (int rank = 0; rank < world; ++rank) {
    std::vector<std::string> args{"layout"};
    args.insert(args.end(), layout_args.begin(), layout_args.end());
    args.insert(args.end(), {"--rank", std::to_string(rank), "--json"});
    const Outcome o = ckptbench(args);
    EXPECT_EQ(o.exit_code, 0) << o.describe();
    const auto j = nlohmann::json::parse(o.out);
    for (const auto& shard : j.at("ranks").at(0).at("shards")) {
      const auto elements =
          shard.at("flat_end").get<std::int64_t>() - shard.at("flat_begin").get<std::int64_t>();
      const auto bytes = shard.at("bytes").get<std::int64_t>();
      EXPECT_GT(elements, 0);
      EXPECT_EQ(bytes % elements, 0) << shard.dump();
      const std::int64_t dtype_bytes = bytes / elements;
      // As shard_geometry scales: exact where the scale divides the leading dimension of the shape
      // and of the slice (flat ranges [b / s, e / s)), else max(1, elements / s).
      const auto shape = shard.at("global_shape").get<std::vector<std::int64_t>>();
      const auto offset = shard.at("offset").get<std::vector<std::int64_t>>();
      const auto extent = shard.at("extent").get<std::vector<std::int64_t>>();
      const auto begin = shard.at("flat_begin").get<std::int64_t>();
      const auto end = shard.at("flat_end").get<std::int64_t>();
      const bool exact = scale > 1 && !shape.empty() && shape[0] % scale == 0 &&
                         offset[0] % scale == 0 && extent[0] % scale == 0;
      const std::int64_t kept = scale <= 1 ? elements
                                : exact    ? end / scale - begin / scale
                                           : std::max<std::int64_t>(1, elements / scale);
      total += static_cast<std::uint64_t>(kept * dtype_bytes);
    }
  }
  return total;
}

}  // namespace ckpt::integration
