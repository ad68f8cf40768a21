/* Floor 1 (tables.c): the session's tables of processes, threads and functions, and the
 * memory they own. Get = find or add; NULL when out of memory. */
#ifndef PTC_DEC_TABLES_H
#define PTC_DEC_TABLES_H

#include "dec_core.h"

struct proc *ptc_proc_find(const struct ptc_session *s, uint32_t pid);
struct proc *ptc_proc_get(struct ptc_session *s, uint32_t pid);
struct thread *ptc_thread_find(const struct ptc_session *s, uint32_t pid, uint32_t tid);
struct thread *ptc_thread_get(struct ptc_session *s, uint32_t pid, uint32_t tid);
/* Returns the id of (module, linkage name, file), adding it; UINT32_MAX if out of memory. */
uint32_t ptc_func_intern(struct ptc_session *s, const char *module, const char *name,
                         const char *linkage, const char *file, uint32_t line);
/* Frees what one module table holds (m itself belongs to its process's array). */
void ptc_module_free(struct module *m);
/* Frees p's module and stub tables (a new life of the process, or its end). */
void ptc_proc_drop_modules(struct proc *p);
/* Adds the figures of add (its label ignored: label names it) to label's, added if new,
 * and sets *id to the label's id (ptc_session_mark_label). Returns 0 or -PTC_E_NOMEM. */
int ptc_mark_add(struct ptc_session *s, const char *label, const struct mark_label *add,
                 uint32_t *id);
void ptc_tables_free(struct ptc_session *s);

#endif
