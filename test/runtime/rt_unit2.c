/* Second unit of rt_prog (endbr64 stubs): two map blobs in one object, registered twice. */
#include "rt_unit2_stubs.h"
#define NOINLINE __attribute__((noinline))
static volatile long sink2;
NOINLINE void u2_g(void)
{
    PTC_ENTER(u2_g);
    sink2++;
    PTC_EXIT(u2_g);
}
NOINLINE void u2_f(void)
{
    PTC_ENTER(u2_f);
    u2_g();
    PTC_EXIT(u2_f);
}
