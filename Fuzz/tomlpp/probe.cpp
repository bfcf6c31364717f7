// libFuzzer harness for toml++ alone, as TOMLKit bundles it: every internal check is made
// fatal and reported by line, except the ones TOMLInputGuard already keeps input away from
// (KNOWN_LINES), so a run hunts for the next one. Built and run by Fuzz/tomlpp/run.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

[[noreturn]] inline void toml_probe_die(int line, const char *what) {
  std::fprintf(stderr, "PROBE toml.hpp:%d %s\n", line, what);
  std::abort();
}

// TOML_ASSUME / TOML_UNREACHABLE (undefined behaviour when false / reached) become checks.
inline void toml_probe_fail(int line, const char *what) { toml_probe_die(line, what); }

// TOML_ASSERT / TOML_ASSERT_ASSUME: the lines TOMLInputGuard covers only report once and go on.
inline void toml_probe_assert(int line, const char *what) {
  static const int known[] = {KNOWN_LINES};
  for (int k : known)
    if (k == line) return;
  toml_probe_die(line, what);
}

#define TOML_ASSERT(expr) ((expr) ? (void)0 : toml_probe_assert(__LINE__, #expr))
#define TOML_EXCEPTIONS 1
#define TOML_IMPLEMENTATION
#include "toml-probe.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // TOMLKit hands toml++ a C string: it sees the text up to the first NUL.
  std::string text(reinterpret_cast<const char *>(data), size);
  text = std::string(text.c_str());
  try {
    auto table = toml::parse(text);
  } catch (toml::parse_error &) {
  }
  return 0;
}
