/* The formats of `ptcall export`: one row each. */
#include <string.h>

#include "views.h"

const struct ptc_view_format ptc_export_formats[] = {
    {"chrome", "Trace Event Format JSON (Perfetto UI, speedscope; big traces: speedscope or "
     "perfetto)", 1, ptc_view_chrome},
    /* compact timelines for outside viewers (issue 27) */
    {"speedscope", "speedscope's own JSON: an evented profile per thread (speedscope)", 1,
     ptc_view_speedscope},
    {"perfetto", "Perfetto's protobuf trace: track events, interned names (Perfetto UI, "
     "trace_processor)", 1, ptc_view_perfetto},
    {"folded", "folded stacks for flamegraph.pl, inferno, speedscope (--weight calls|self)", 0,
     ptc_view_folded},
    {"svg", "a flame graph as one SVG file (--weight calls|self)", 0, ptc_view_svg},
    {"flame-json", "a flame graph's trees as JSON: one per thread and all threads "
                   "(--weight calls|self|total; docs/web.md)", 0, ptc_view_flametree},
    {"events", "every call as one CSV row (RFC 4180, header first)", 0, ptc_view_events_csv},
    {"jsonl", "every call as one JSON object per line (JSON Lines)", 0, ptc_view_events_jsonl},
    {NULL, NULL, 0, NULL},
};

const struct ptc_view_format *ptc_view_format_find(const char *name)
{
    for (const struct ptc_view_format *f = ptc_export_formats; f->name; f++)
        if (!strcmp(f->name, name))
            return f;
    return NULL;
}
