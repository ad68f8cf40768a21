#include "e2e.h"
NOINLINE int arm_lib(int x) { return x * 2; }
