//===- HostLLVM.h - the LLVM release of the process that loads the plugin -------------===//
#ifndef PTCALL_PASS_HOST_LLVM_H
#define PTCALL_PASS_HOST_LLVM_H

namespace ptcall {

// The major release of the shared libLLVM loaded in this process, or 0 when there is none
// (a statically linked clang or opt) or its name does not say. Calls no LLVM code.
unsigned hostLLVMMajor();

} // namespace ptcall

#endif
