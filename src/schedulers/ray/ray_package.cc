#include "schedulers/ray/ray_package.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <openssl/evp.h>

#include "core/ignore_patterns.h"

namespace torchx::schedulers::ray {
namespace fs = std::filesystem;
namespace {

// 1980-01-01, the earliest a zip entry can say: a fixed time keeps the bytes, and so the name,
// the same for the same files.
constexpr time_t kZipEpoch = 315532800;

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};

std::string ZipError(zip_t* z) { return zip_strerror(z); }

}  // namespace

Result<std::vector<PackageFile>> DirectoryFiles(const std::string& dir, const std::string& prefix) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return InvalidArgumentError(fmt::format("ray: working directory `{}` is not a directory", dir));
  }
  std::vector<std::string> patterns = internal::ReadPatterns((fs::path(dir) / ".torchxignore").string());
  std::vector<PackageFile> out;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  if (ec) return InvalidArgumentError(fmt::format("ray: cannot read working directory `{}`: {}", dir, ec.message()));
  for (; it != end; it.increment(ec)) {
    if (ec) return InvalidArgumentError(fmt::format("ray: cannot read working directory `{}`: {}", dir, ec.message()));
    std::string rel = fs::relative(it->path(), dir).generic_string();
    bool is_dir = it->is_directory(ec) && !it->is_symlink(ec);
    if (internal::IsIgnored(rel, patterns)) {
      if (is_dir) it.disable_recursion_pending();
      continue;
    }
    if (it->is_symlink(ec) && fs::is_directory(it->path(), ec)) continue;  // no loops, no escapes
    if (is_dir || !it->is_regular_file(ec)) continue;
    struct stat st {};
    bool exec = ::stat(it->path().c_str(), &st) == 0 && (st.st_mode & S_IXUSR) != 0;
    out.push_back({prefix + rel, it->path().string(), "", exec});
  }
  return out;
}

Result<std::string> ZipPackage(std::vector<PackageFile> files) {
  std::sort(files.begin(), files.end(),
            [](const PackageFile& a, const PackageFile& b) { return a.archive_path < b.archive_path; });
  std::string tmp = (fs::temp_directory_path() / "torchx-ray-pkg-XXXXXX").string();
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return InternalError(fmt::format("ray: cannot create a package file in {}", tmp));
  ::close(fd);
  struct RemoveOnExit {
    const std::string& path;
    ~RemoveOnExit() { std::remove(path.c_str()); }
  } remove_tmp{tmp};
  int err = 0;
  std::unique_ptr<zip_t, ZipCloser> z(zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err));
  if (!z) {
    return InternalError(fmt::format("ray: cannot create a package in {} (libzip error {})", tmp, err));
  }
  for (const PackageFile& f : files) {
    zip_source_t* src = nullptr;
    if (!f.disk_path.empty()) {
      src = zip_source_file(z.get(), f.disk_path.c_str(), 0, 0);
    } else {
      src = zip_source_buffer(z.get(), f.contents.data(), f.contents.size(), 0);
    }
    if (src == nullptr) {
      return InternalError(fmt::format("ray: cannot add {} to the package: {}", f.archive_path, ZipError(z.get())));
    }
    zip_int64_t idx = zip_file_add(z.get(), f.archive_path.c_str(), src, ZIP_FL_ENC_UTF_8 | ZIP_FL_OVERWRITE);
    if (idx < 0) {
      zip_source_free(src);
      return InternalError(fmt::format("ray: cannot add {} to the package: {}", f.archive_path, ZipError(z.get())));
    }
    zip_file_set_mtime(z.get(), static_cast<zip_uint64_t>(idx), kZipEpoch, 0);
    zip_uint32_t mode = (f.executable ? 0100755u : 0100644u) << 16;
    zip_file_set_external_attributes(z.get(), static_cast<zip_uint64_t>(idx), 0, ZIP_OPSYS_UNIX, mode);
  }
  if (zip_close(z.get()) != 0) {
    return InternalError(fmt::format("ray: cannot write the package: {}", ZipError(z.get())));
  }
  (void)z.release();  // closed
  std::ifstream in(tmp, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (files.empty()) {
    // libzip writes no file for an empty archive: the empty zip is its end record alone.
    bytes = std::string("PK\x05\x06", 4) + std::string(18, '\0');
  }
  return bytes;
}

std::string PackageUri(std::string_view zip) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int len = 0;
  EVP_Digest(zip.data(), zip.size(), md.data(), &len, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < 16 && i < len; ++i) hex += fmt::format("{:02x}", md[i]);
  return fmt::format("gcs://_ray_pkg_{}.zip", hex);
}

std::string PackageName(std::string_view uri) {
  constexpr std::string_view kScheme = "gcs://";
  return std::string(uri.starts_with(kScheme) ? uri.substr(kScheme.size()) : uri);
}

}  // namespace torchx::schedulers::ray
