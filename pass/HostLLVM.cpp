//===- HostLLVM.cpp - which LLVM release the process that loads the plugin runs ---------===//
//
// A plugin built for one LLVM release, loaded into the clang or opt of another, runs against
// an ABI it was not compiled for and crashes the compiler (LLVM's plugin API version is the
// same number in every release, so LLVM itself lets it in). Distribution builds of clang
// link LLVM as a shared library named after its release (Debian: libLLVM-16.so.1; Fedora,
// upstream: libLLVM.so.16 or libLLVM-16.so): that name tells the host's release before any
// LLVM code of the plugin runs. A statically linked host cannot be checked this way.
//===-------------------------------------------------------------------------------------===//
#include "HostLLVM.h"

#include <cstdlib>
#include <cstring>
#include <link.h>

namespace {

// The major release in a shared-object path such as /usr/lib/llvm-16/lib/libLLVM-16.so.1,
// /usr/lib64/libLLVM.so.18.1 or libLLVM-19.so; 0 if the path names no libLLVM.
unsigned releaseInName(const char *Path) {
  const char *Base = std::strrchr(Path, '/');
  Base = Base ? Base + 1 : Path;
  if (std::strncmp(Base, "libLLVM", 7) != 0)
    return 0;
  const char *P = Base + 7;
  if (*P == '-')
    P++;
  else if (std::strncmp(P, ".so.", 4) == 0)
    P += 4;
  else
    return 0;
  char *End = nullptr;
  unsigned long Major = std::strtoul(P, &End, 10);
  return End != P && Major > 0 && Major < 1000 ? static_cast<unsigned>(Major) : 0;
}

int visit(struct dl_phdr_info *Info, size_t, void *Data) {
  unsigned Major = Info->dlpi_name ? releaseInName(Info->dlpi_name) : 0;
  if (Major) {
    *static_cast<unsigned *>(Data) = Major;
    return 1;
  }
  return 0;
}

} // namespace

unsigned ptcall::hostLLVMMajor() {
  unsigned Major = 0;
  dl_iterate_phdr(visit, &Major);
  return Major;
}
