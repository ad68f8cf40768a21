# Finds libelf (elfutils); defines LibElf::LibElf.
find_path(LIBELF_INCLUDE_DIR libelf.h)
find_library(LIBELF_LIBRARY elf)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(LibElf REQUIRED_VARS LIBELF_LIBRARY LIBELF_INCLUDE_DIR)
if(LibElf_FOUND AND NOT TARGET LibElf::LibElf)
  add_library(LibElf::LibElf UNKNOWN IMPORTED)
  set_target_properties(LibElf::LibElf PROPERTIES IMPORTED_LOCATION "${LIBELF_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${LIBELF_INCLUDE_DIR}")
endif()
