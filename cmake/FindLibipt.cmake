# Finds libipt (Intel Processor Trace decoder library); defines Libipt::Libipt.
find_path(LIBIPT_INCLUDE_DIR intel-pt.h)
find_library(LIBIPT_LIBRARY ipt)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Libipt REQUIRED_VARS LIBIPT_LIBRARY LIBIPT_INCLUDE_DIR)
if(Libipt_FOUND AND NOT TARGET Libipt::Libipt)
  add_library(Libipt::Libipt UNKNOWN IMPORTED)
  set_target_properties(Libipt::Libipt PROPERTIES IMPORTED_LOCATION "${LIBIPT_LIBRARY}"
                        INTERFACE_INCLUDE_DIRECTORIES "${LIBIPT_INCLUDE_DIR}")
endif()
