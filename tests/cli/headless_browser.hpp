// Headless Chromium for the HTML tests: where it is, rendering a page to a screenshot or to its
// DOM, and a PNG's size. Tests skip, saying why, where chromium is not installed.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "tests/integration/integration_support.hpp"

namespace ckpt::integration {

// chromium's path, or "" when it is not installed.
inline std::string chromium() {
  const Outcome o =
      run_process({"/bin/sh", "-c", "command -v chromium || command -v chromium-browser"}, 10s);
  std::string path = o.out.substr(0, o.out.find('\n'));
  return o.exit_code == 0 ? path : "";
}

// `browser` rendering `page` with `what` (--screenshot=FILE or --dump-dom) at 1200×2000, its
// profile under `profile`.
inline Outcome render_page(const std::string& browser, const fs::path& profile,
                           const fs::path& page, const std::string& what) {
  return run_process({browser, "--headless", "--no-sandbox", "--disable-gpu",
                      "--user-data-dir=" + profile.string(), "--window-size=1200,2000", what,
                      "file://" + page.string()},
                     90s);
}

// Width and height from a PNG's IHDR chunk (0, 0 when it is not a PNG).
inline std::pair<std::uint32_t, std::uint32_t> png_size(const std::string& png) {
  if (png.size() < 24 || png.compare(1, 3, "PNG") != 0 || png.compare(12, 4, "IHDR") != 0)
    return {0, 0};
  const auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(png[at + i]);
    return v;
  };
  return {be32(16), be32(20)};
}

}  // namespace ckpt::integration
