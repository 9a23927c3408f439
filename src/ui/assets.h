// The dashboard's pages, compiled into the binary (assets/, embedded by cmake/EmbedAssets.cmake):
// no Node toolchain at build time, nothing to install beside the binary, and no request path
// ever reaches the file system.
#pragma once

#include <string_view>

namespace torchx::ui {

struct Asset {
  std::string_view path;  ///< "index.html", "app.js"
  std::string_view content_type;
  std::string_view data;
};

/// The asset named exactly `path`; nullptr for anything else.
const Asset* FindAsset(std::string_view path);

}  // namespace torchx::ui
