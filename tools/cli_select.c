/* Record-time selection in the analyses' outputs (cli_select.h). */
#include "cli_select.h"

#include "cli_common.h"

int cli_print_selection(FILE *f, const char *prefix, const struct ptc_session *s)
{
    struct ptc_selection sel;
    ptc_session_selection(s, &sel);
    if (!sel.selected)
        return 0;
    uint32_t off = sel.funcs - sel.traced;
    fprintf(f, "%straced: %u of %u functions (", prefix, sel.traced, sel.funcs);
    cli_text_str(f, sel.spec);
    fprintf(f, ")");
    /* within a budget, the candidates not traced were counted: only the rest are unknown */
    struct ptc_func_states st;
    ptc_session_func_states(s, &st);
    if (st.mixed) {
        if (st.counted)
            fprintf(f, "; %u counted (exact calls, no times)", st.counted);
        if (st.demoted)
            fprintf(f, "; %u of the traced demoted by the budget's governor (traced, then counted)",
                    st.demoted);
        off = st.neither;
    }
    if (off)
        fprintf(f, "; the other %u were not armed: how often they ran is not known, and calls "
                   "through them show as direct calls",
                off);
    fprintf(f, "\n");
    return 1;
}

void cli_json_selection(FILE *f, const struct ptc_session *s, const char *indent)
{
    struct ptc_selection sel;
    ptc_session_selection(s, &sel);
    if (!sel.selected)
        return;
    fprintf(f, ",\n%s\"selection\": {\"spec\": ", indent);
    cli_json_str(f, sel.spec);
    fprintf(f, ", \"traced\": %u, \"functions\": %u},\n%s\"not_traced\": [", sel.traced,
            sel.funcs, indent);
    int first = 1;
    /* neither traced nor counted: a counted function's calls are known (functions[].state) */
    for (uint32_t id = 0; id < sel.funcs; id++)
        if (ptc_session_func_state(s, id) == PTC_FUNC_NEITHER) {
            fprintf(f, "%s", first ? "" : ", ");
            cli_json_str(f, ptc_session_func(s, id)->name);
            first = 0;
        }
    fprintf(f, "]");
}
