// The hdf5 backend's files as other tools see them: h5ls and h5dump (hdf5-tools) list every
// dataset with its global shape, type, layout and "dtype" attribute; h5py reads the shapes,
// the root attributes and the fp32 tensors' bytes; the custom bf16, fp8 and fp16 types decode
// to the values their bit patterns mean.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "backends/registry.hpp"
#include "tests/backends/hdf5_layout.hpp"
#include "tests/backends/hdf5_test_support.hpp"

namespace ckpt::backends::hdf5_test {
namespace {

constexpr const char* kPython = "/usr/bin/python3";

std::string shape_text(const std::vector<std::uint64_t>& shape, const char* open,
                       const char* close) {
  std::string text = open;
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + close;
}

// "name {dims}" for every dataset line of `h5ls -r`, sorted.
std::vector<std::string> h5ls_datasets(const std::string& listing) {
  std::vector<std::string> datasets;
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find(" Dataset {");
    if (at == std::string::npos) continue;
    const std::string name = line.substr(1, line.find(' ') - 1);  // without the leading '/'
    datasets.push_back(name + " " + line.substr(at + 9));
  }
  std::sort(datasets.begin(), datasets.end());
  return datasets;
}

std::vector<std::string> expected_h5ls() {
  std::vector<std::string> datasets;
  for (const Tensor& t : tensors()) {
    datasets.push_back(t.name + " " +
                       (t.shape.empty() ? std::string("{SCALAR}") : shape_text(t.shape, "{", "}")));
  }
  std::sort(datasets.begin(), datasets.end());
  return datasets;
}

std::string hex_of_tensor(std::size_t index) {
  const Tensor& t = tensors()[index];
  static const char* digits = "0123456789abcdef";
  std::string hex;
  for (std::uint64_t e = 0; e < product(t.shape); ++e) {
    for (std::uint32_t b = 0; b < t.element_bytes; ++b) {
      const auto byte = static_cast<unsigned>(tensor_byte(index, e, b));
      hex += digits[byte >> 4];
      hex += digits[byte & 15];
    }
  }
  return hex;
}

// What the h5py script prints for the checkpoint: datasets (shape, dtype attribute, and for
// fp32 the bytes in hex), then the root attributes, each list sorted.
std::string expected_h5py() {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < tensors().size(); ++i) {
    const Tensor& t = tensors()[i];
    std::string shape = shape_text(t.shape, "(", t.shape.size() == 1 ? ",)" : ")");
    std::string line = "dataset " + t.name + " " + shape + " " + t.dtype;
    if (t.dtype == "fp32") line += " " + hex_of_tensor(i);
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  for (const auto& [key, value] : checkpoint_attributes())
    lines.push_back("attr " + key + " " + value);
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

constexpr const char* kH5pyScript =
    "import sys\n"
    "try:\n"
    "    import h5py\n"
    "except ImportError as e:\n"
    "    print('SKIP', e); sys.exit(0)\n"
    "f = h5py.File(sys.argv[1], 'r')\n"
    "lines = []\n"
    "def show(name, obj):\n"
    "    if isinstance(obj, h5py.Dataset):\n"
    "        line = 'dataset %s %s %s' % (name, obj.shape, obj.attrs['dtype'])\n"
    "        if obj.attrs['dtype'] == 'fp32': line += ' ' + obj[()].tobytes().hex()\n"
    "        lines.append(line)\n"
    "f.visititems(show)\n"
    "print('\\n'.join(sorted(lines)))\n"
    "for k in sorted(f.attrs): print('attr', k, f.attrs[k])\n";

// Runs a Python script with the file as its argument (the script goes through a file: no quoting).
std::string run_python(const std::string& script, const std::string& file,
                       const std::string& script_path) {
  std::FILE* out = std::fopen(script_path.c_str(), "w");
  if (out == nullptr) return "cannot write " + script_path;
  std::fputs(script.c_str(), out);
  std::fclose(out);
  return run_command(std::string(kPython) + " " + script_path + " " + file);
}

TEST(Hdf5Tools, H5lsH5dumpAndH5pySeeTheGlobalTensors) {
  if (!hdf5_available()) GTEST_SKIP() << "hdf5 is not compiled in";
  if (world_size() != 4) GTEST_SKIP() << "needs mpirun -np 4";
  const SharedDir dir;
  const std::string path = dir.file("checkpoint.h5");
  ProcessPlan mine =
      plan_of(tensors(), pieces_of_rank(world_rank()), path, true, checkpoint_attributes());
  const IoOutcome written =
      make_backend("hdf5", {}, {{"layout", "chunked"}}, group_of(MPI_COMM_WORLD))
          ->write(mine.plan, view_of(mine.memory));
  ASSERT_TRUE(everywhere(written.ok())) << (written.error ? *written.error : "another rank failed");
  if (world_rank() != 0) return;

  const std::string listing = run_command("h5ls -r " + path);
  EXPECT_EQ(h5ls_datasets(listing), expected_h5ls()) << listing;

  const std::string qkv = run_command("h5dump -H -p -d /weight/linear_qkv " + path);
  EXPECT_TRUE(contains(qkv, "DATASPACE  SIMPLE { ( 8, 6 ) / ( 8, 6 ) }")) << qkv;
  EXPECT_TRUE(contains(qkv, "16-bit little-endian floating-point")) << qkv;
  EXPECT_TRUE(contains(qkv, "CHUNKED ( 2, 6 )")) << "chunk = a TP slice:\n" << qkv;
  EXPECT_TRUE(contains(qkv, "H5D_FILL_TIME_NEVER")) << qkv;
  const std::string adam = run_command("h5dump -H -p -d /optimizer/exp_avg_sq/linear_proj " + path);
  EXPECT_TRUE(contains(adam, "H5T_IEEE_F32LE")) << adam;
  EXPECT_TRUE(contains(adam, "CHUNKED ( 6, 4 )")) << adam;
  const std::string dtype = run_command("h5dump -a /weight/linear_qkv/dtype " + path);
  EXPECT_TRUE(contains(dtype, "(0): \"bf16\"")) << dtype;
  const std::string root = run_command("h5dump -a /model " + path);
  EXPECT_TRUE(contains(root, "(0): \"tiny-llama\"")) << root;

  const std::string seen = run_python(kH5pyScript, path, dir.file("show.py"));
  if (seen.starts_with("SKIP")) GTEST_SKIP() << "h5py is missing (install python3-h5py): " << seen;
  EXPECT_EQ(seen, expected_h5py());
}

// Known bit patterns of each custom type, decoded by h5dump and by h5py (astype float32).
TEST(Hdf5Tools, CustomFloatTypesDecodeToTheirValues) {
  if (!hdf5_available()) GTEST_SKIP() << "hdf5 is not compiled in";
  if (world_rank() != 0) return;  // a serial file of rank 0's own
  std::string pattern = "/tmp/ckpt-hdf5-types-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const std::string path = pattern + "/types.h5";
  // bf16: 1.5, -2, 3.140625, 0; fp8 e4m3: 1, 2, 1.5, -0.5; fp16: 1, -2.5, 65504, 0.5.
  const std::vector<std::uint8_t> bytes = {
      0xC0, 0x3F, 0x00, 0xC0, 0x49, 0x40, 0x00, 0x00,   // bf16 LE
      0x38, 0x40, 0x3C, 0xB0,                           // fp8
      0x00, 0x3C, 0x00, 0xC1, 0xFF, 0x7B, 0x00, 0x38};  // fp16 LE
  std::vector<std::byte> memory(bytes.size());
  std::transform(bytes.begin(), bytes.end(), memory.begin(),
                 [](std::uint8_t b) { return std::byte{b}; });
  FilePlan file{path,
                {{0, 0, 8}, {8, 8, 4}, {12, 12, 8}},
                0,
                0,
                false,
                {DatasetPiece{"bf16", "bf16", 2, {4}, {0}, {4}, 0, 4, 0},
                 DatasetPiece{"fp8", "fp8", 1, {4}, {0}, {4}, 0, 4, 8},
                 DatasetPiece{"fp16", "fp16", 2, {4}, {0}, {4}, 0, 4, 12}}};
  const IoOutcome written = make_backend("hdf5", {})->write(IoPlan{{file}, {}}, view_of(memory));
  ASSERT_TRUE(written.ok()) << *written.error;
  const std::string dumped = run_command("h5dump -d /bf16 -d /fp8 -d /fp16 " + path);
  EXPECT_TRUE(contains(dumped, "(0): 1.5, -2, 3.14062, 0")) << dumped;
  EXPECT_TRUE(contains(dumped, "(0): 1, 2, 1.5, -0.5")) << dumped;
  EXPECT_TRUE(contains(dumped, "(0): 1, -2.5, 65504, 0.5")) << dumped;
  const std::string script =
      "import sys\ntry:\n    import h5py\nexcept ImportError as e:\n    print('SKIP', e); "
      "sys.exit(0)\n"
      "f = h5py.File(sys.argv[1], 'r')\n"
      "for name in ('bf16', 'fp8', 'fp16'): print(name, [float(v) for v in "
      "f[name].astype('f4')[()]])\n";
  const std::string decoded = run_python(script, path, pattern + "/decode.py");
  std::filesystem::remove_all(pattern);
  if (decoded.starts_with("SKIP"))
    GTEST_SKIP() << "h5py is missing (install python3-h5py): " << decoded;
  EXPECT_EQ(decoded,
            "bf16 [1.5, -2.0, 3.140625, 0.0]\nfp8 [1.0, 2.0, 1.5, -0.5]\nfp16 [1.0, -2.5, 65504.0, "
            "0.5]\n");
}

}  // namespace
}  // namespace ckpt::backends::hdf5_test
