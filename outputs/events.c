/* Every call as one machine row, written when the call ends: CSV (RFC 4180, the header row
 * first) or JSON Lines. Columns: pid, tid, depth, function, module, file, line, start,
 * duration, self, ended (how the call ended), inherited, entered_before (a call entered
 * before its thread's window: attach, snapshot). */
#include <stdlib.h>

#include "views.h"

struct events_view {
    struct ptc_wbuf *w;
    const struct ptc_session *s;
    int json;
    int timed;
};

const char *ptc_out_how_name(unsigned how)
{
    static const char *const names[] = {"exit", "unwind", "repair", "landing", "broken", "end"};
    return how < 6 ? names[how] : "unknown";
}

static int events_begin(void *view, const struct ptc_out_info *info)
{
    struct events_view *v = view;
    v->timed = info->timed;
    if (!v->json)
        ptc_wb_str(v->w, "pid,tid,depth,function,module,file,line,start,duration,self,ended,"
                         "inherited,entered_before\n");
    return 0;
}

static int events_ret(void *view, const struct ptc_out_event *e)
{
    struct events_view *v = view;
    struct ptc_wbuf *w = v->w;
    const struct ptc_func_info *fi = ptc_session_func(v->s, e->func);
    const char *name = fi ? fi->name : "?", *mod = fi ? fi->module : "", *file = fi ? fi->file : "";
    uint32_t line = fi ? fi->line : 0;
    if (v->json) {
        ptc_wb_str(w, "{\"pid\": ");
        ptc_wb_u64(w, e->pid);
        ptc_wb_str(w, ", \"tid\": ");
        ptc_wb_u64(w, e->tid);
        ptc_wb_str(w, ", \"depth\": ");
        ptc_wb_u64(w, e->depth);
        ptc_wb_str(w, ", \"function\": ");
        ptc_wb_json_str(w, name);
        ptc_wb_str(w, ", \"module\": ");
        ptc_wb_json_str(w, mod);
        ptc_wb_str(w, ", \"file\": ");
        ptc_wb_json_str(w, file);
        ptc_wb_str(w, ", \"line\": ");
        ptc_wb_u64(w, line);
        if (v->timed) {
            ptc_wb_str(w, ", \"start\": ");
            ptc_wb_u64(w, e->start);
            ptc_wb_str(w, ", \"duration\": ");
            ptc_wb_u64(w, e->dur);
            ptc_wb_str(w, ", \"self\": ");
            ptc_wb_u64(w, e->self);
        } else {
            ptc_wb_str(w, ", \"start\": null, \"duration\": null, \"self\": null");
        }
        ptc_wb_str(w, ", \"ended\": \"");
        ptc_wb_str(w, ptc_out_how_name(e->how));
        ptc_wb_str(w, e->inherited ? "\", \"inherited\": true" : "\", \"inherited\": false");
        /* a call entered before its thread's window (attach, snapshot): start is the
         * window's start */
        ptc_wb_str(w, e->before ? ", \"entered_before\": true}\n" : ", \"entered_before\": false}\n");
    } else {
        ptc_wb_u64(w, e->pid);
        ptc_wb_char(w, ',');
        ptc_wb_u64(w, e->tid);
        ptc_wb_char(w, ',');
        ptc_wb_u64(w, e->depth);
        ptc_wb_char(w, ',');
        ptc_wb_csv_str(w, name);
        ptc_wb_char(w, ',');
        ptc_wb_csv_str(w, mod);
        ptc_wb_char(w, ',');
        ptc_wb_csv_str(w, file);
        ptc_wb_char(w, ',');
        if (line) /* 0: not known, an empty field */
            ptc_wb_u64(w, line);
        ptc_wb_char(w, ',');
        if (v->timed) {
            ptc_wb_u64(w, e->start);
            ptc_wb_char(w, ',');
            ptc_wb_u64(w, e->dur);
            ptc_wb_char(w, ',');
            ptc_wb_u64(w, e->self);
        } else {
            ptc_wb_str(w, ",,");
        }
        ptc_wb_char(w, ',');
        ptc_wb_str(w, ptc_out_how_name(e->how));
        ptc_wb_str(w, e->inherited ? ",1" : ",0");
        ptc_wb_str(w, e->before ? ",1\n" : ",0\n");
    }
    return w->err || w->over_limit ? 1 : 0;
}

static const struct ptc_output_ops events_ops = {
    .name = "events",
    .begin = events_begin,
    .ret = events_ret,
    .free = free,
};

static void *make(const struct ptc_view_opts *o, const struct ptc_output_ops **ops, int json)
{
    struct events_view *v = calloc(1, sizeof(*v));
    if (!v)
        return NULL;
    v->w = o->out;
    v->s = o->s;
    v->json = json;
    *ops = &events_ops;
    return v;
}

void *ptc_view_events_csv(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    return make(o, ops, 0);
}

void *ptc_view_events_jsonl(const struct ptc_view_opts *o, const struct ptc_output_ops **ops)
{
    return make(o, ops, 1);
}
