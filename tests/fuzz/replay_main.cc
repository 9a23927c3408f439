// Runs a fuzz target's LLVMFuzzerTestOneInput over every file of the corpus folders (or files) on
// its command line, without libFuzzer: the test build (any compiler, with its sanitizers) replays
// each corpus as a regression suite, and a crash or sanitizer report fails the test. Exploring new
// inputs stays with the libFuzzer builds (scripts/fuzz.sh, scripts/fuzz-long.sh).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool ReplayFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
    return false;
  }
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // A copy of exactly the input's size, so that a read past its end is seen by ASan.
  std::vector<uint8_t> exact(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(exact.data(), exact.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  size_t replayed = 0;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::filesystem::path> files;
      for (const auto& e : std::filesystem::directory_iterator(arg)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
      std::sort(files.begin(), files.end());  // the same order on every run
      for (const auto& f : files) {
        if (!ReplayFile(f)) return 2;
        ++replayed;
      }
    } else {
      if (!ReplayFile(arg)) return 2;
      ++replayed;
    }
  }
  if (replayed == 0) {
    std::fprintf(stderr, "replay: no input found in the arguments\n");
    return 2;
  }
  std::printf("replay: %zu inputs, none crashed\n", replayed);
  return 0;
}
