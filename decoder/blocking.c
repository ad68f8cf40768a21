/* Blocked time (issue 27, item 6): the runtime records calls into the C library's blocking
 * functions as calls of its module "[blocking]", and says so in a MODULE_BLOCKING chunk
 * (docs/trace-format.md 4.22). Their stubs get kinds of their own, which the fast soft path
 * does not take (it hands them to stack.c's general path): the frame of such a call is
 * marked, and its duration, when it returns, becomes its caller's blocked time. */
#include <string.h>

#include "dec_blocking.h"
#include "dec_modules.h"
#include "dec_tables.h"

#define CORRUPT(...) ptc_session_set_error(s, PTC_E_CORRUPT, __VA_ARGS__)

int ptc_module_blocking(struct ptc_session *s, uint32_t pid, const void *payload, size_t size)
{
    struct ptc_module_blocking b;
    if (size != sizeof(b))
        return CORRUPT("MODULE_BLOCKING chunk of pid %u is %zu bytes, not %zu", pid, size,
                       sizeof(b));
    memcpy(&b, payload, sizeof(b));
    struct proc *p = ptc_proc_find(s, pid);
    struct module *m = ptc_module_find(p, b.module_id);
    if (!m || m->num_funcs != b.num_funcs)
        return CORRUPT("MODULE_BLOCKING chunk of pid %u names module %u with %u functions, "
                       "which that process did not announce before it",
                       pid, b.module_id, b.num_funcs);
    for (uint32_t i = 0; i < m->num_funcs; i++)
        s->funcs[m->fids[i]].blocking = 1;
    s->has_blocking = 1;
    for (uint32_t i = 0; i < m->num_stubs; i++) {
        struct stubent *se = &p->stubs[m->first_stub + i];
        if (se->kind == PTCALL_STUB_ENTRY)
            se->kind = STUB_BLOCK_ENTRY;
        else if (se->kind == PTCALL_STUB_EXIT)
            se->kind = STUB_BLOCK_EXIT;
    }
    return 0;
}

int ptc_session_func_blocking(const struct ptc_session *s, uint32_t id)
{
    return s && id < s->nfuncs && s->funcs[id].blocking;
}

int ptc_session_has_blocking(const struct ptc_session *s)
{
    return s && s->has_blocking;
}
