// Replays files through a fuzz entry point, without libFuzzer: `ckpt_fuzz_NAME PATH...`, each
// PATH a file or a folder (every regular file under it, in name order). A crash or an escaped
// exception aborts (see fuzz::run_one); an input that takes longer than 10 s fails.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const fs::path path = argv[i];
    if (fs::is_directory(path)) {
      for (const auto& entry : fs::recursive_directory_iterator(path)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (fs::is_regular_file(path)) {
      inputs.push_back(path);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or folder\n", path.c_str());
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  int slow = 0;
  for (const fs::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto start = std::chrono::steady_clock::now();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (seconds > 10) {
      std::fprintf(stderr, "replay: %s took %.1f s (limit 10 s)\n", path.c_str(), seconds);
      ++slow;
    }
  }
  std::printf("replay: %zu inputs, %d too slow\n", inputs.size(), slow);
  return slow == 0 ? 0 : 1;
}
