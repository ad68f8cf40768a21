#include "e2e.h"
NOINLINE int arm_unit2(int x) { return x + 1; }
