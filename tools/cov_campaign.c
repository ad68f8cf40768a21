/* `ptcall cov merge` and `ptcall cov add` (also `ptcall db add` of a .ptcov): the parts of a
 * campaign made one .ptcov, and a .ptcov stored as one part of a campaign in the runs
 * database (docs/cov.md, *Many machines*; docs/db.md, *Campaigns*). The figures the database
 * keeps (curves where coverage grew, each function's and block's first reach) are made here
 * from the .ptcov: db/ reads no .ptcov (docs/architecture.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli_common.h"
#include "commands.h"
#include "cov.h"
#include "cov_campaign.h"
#include "db_campaign.h"
#include "db_cli.h"
#include "db_hash.h"
#include "db_schema.h"
#include "options.h"

/* ---- cov merge -------------------------------------------------------------------------- */

/* -o may name a new file, a .ptcov (ptcall's: replaced) or a device; never a file of
 * something else. */
static int output_ok(const char *cmd, const char *path)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    char magic[8] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    ssize_t k = fd >= 0 ? read(fd, magic, sizeof(magic)) : -1;
    if (fd >= 0)
        close(fd);
    if (k == (ssize_t)sizeof(magic) && !memcmp(magic, COV_FILE_MAGIC, 8))
        return 0;
    fprintf(stderr, "%s: %s exists and is not a .ptcov: ptcall replaces only files it made; "
                    "give another -o or move it away\n", cmd, path);
    return 1;
}

int cmd_cov_merge(int argc, char **argv)
{
    const char *cmd = "ptcall cov merge";
    struct cli_values v;
    int r = cli_parse(CMD_COV_MERGE, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (!cli_given(&v, "--output") || v.npos < 1) {
        r = cli_usage_error(CMD_COV_MERGE, !cli_given(&v, "--output")
                                               ? "-o OUT.ptcov is required"
                                               : "give the .ptcov files to merge");
        cli_values_free(&v);
        return r;
    }
    if (output_ok(cmd, v.output)) {
        cli_values_free(&v);
        return 1;
    }
    uint32_t n = (uint32_t)v.npos;
    struct cov_data *parts = calloc(n, sizeof(*parts)), out;
    if (!parts) {
        cli_values_free(&v);
        fprintf(stderr, "%s: out of memory\n", cmd);
        return 1;
    }
    char why[2048];
    r = 0;
    for (uint32_t p = 0; p < n && !r; p++) {
        cov_data_init(&parts[p]);
        if (cov_file_read(&parts[p], v.pos[p], why, sizeof(why))) {
            fprintf(stderr, "%s: %s\n", cmd, why);
            r = 1;
        }
    }
    struct cov_merge_stats st;
    cov_data_init(&out);
    if (!r && cov_merge(&out, parts, n, (const char *const *)v.pos, &st, why, sizeof(why))) {
        fprintf(stderr, "%s: %s\n", cmd, why);
        r = 1;
    }
    if (!r && cov_file_write(&out, v.output, why, sizeof(why))) {
        fprintf(stderr, "%s: %s\n", cmd, why);
        r = 1;
    }
    if (!r) {
        printf("%s: %u inputs from %u files (%u origins) into %s", cmd, st.inputs, n,
               out.norigins, v.output);
        if (st.dup_hash)
            printf("; %u duplicate%s by content left out (the earliest kept)", st.dup_hash,
                   st.dup_hash == 1 ? "" : "s");
        printf("\n");
        if (st.by_name)
            printf("%s: note: %u inputs have no content hash (made before INPUT_HASH): they "
                   "were matched by instance and name, %u duplicate%s left out\n",
                   cmd, st.by_name, st.dup_name, st.dup_name == 1 ? "" : "s");
        if (st.blocks_dropped)
            printf("%s: note: some files have no blocks (not a -fptcall-cov build, or older): "
                   "the merged file has functions only\n", cmd);
    }
    cov_data_free(&out);
    for (uint32_t p = 0; p < n; p++)
        cov_data_free(&parts[p]);
    free(parts);
    cli_values_free(&v);
    return r ? 1 : cli_flush_output("cov merge", "the summary");
}

/* ---- cov add ---------------------------------------------------------------------------- */

/* The instance an input belongs to: AFL++'s NAME of NAME/queue/... (prefixed by its host, as
 * `HOST:NAME`, when the file's name has it: cov merge's), "default" for AFL's single queue/,
 * else "corpus". host: the input's origin host (NULL: none). */
static void instance_of(const char *name, const char *host, char *out, size_t n)
{
    static const char *const subs[] = {"/queue/", "/crashes/", "/hangs/"};
    const char *rest = name;
    size_t hl = host && *host ? strlen(host) : 0;
    if (hl && !strncmp(name, host, hl) && name[hl] == ':')
        rest = name + ++hl;
    else
        hl = 0;
    for (int k = 0; k < 3; k++) {
        const char *s = strstr(rest, subs[k]);
        if (s && !memchr(rest, '/', (size_t)(s - rest))) {
            snprintf(out, n, "%.*s%.*s", (int)hl, name, (int)(s - rest), rest);
            return;
        }
        if (!strncmp(rest, subs[k] + 1, strlen(subs[k]) - 1)) {
            snprintf(out, n, "%.*sdefault", (int)hl, name);
            return;
        }
    }
    snprintf(out, n, "%.*scorpus", (int)hl, name);
}

struct inst {
    char name[512];
    const char *host;
    struct db_cinst_in in;
    struct db_cpoint *pts;
    size_t npts;
    uint8_t *fseen, *bseen;
    int64_t nf, nb;
};

static int push(struct db_cpoint **v, size_t *n, int64_t t, int64_t f, int64_t b)
{
    if (*n && (*v)[*n - 1].t_ms == t) {
        (*v)[*n - 1].functions = f;
        (*v)[*n - 1].blocks = b;
        return 0;
    }
    if (!(*n & (*n - 1)) || !*n) { /* grows at powers of two */
        struct db_cpoint *x = realloc(*v, (*n ? *n * 2 : 16) * sizeof(*x));
        if (!x)
            return -1;
        *v = x;
    }
    (*v)[(*n)++] = (struct db_cpoint){t, f, b};
    return 0;
}

struct made {
    struct inst *inst;
    size_t ninst;
    struct db_cinst_in *iv;
    struct db_cpoint *pts;
    size_t npts;
    struct db_cfirst *firsts;
    struct db_cbfirst *bfirsts;
    size_t nbfirsts;
};

static void made_free(struct made *m)
{
    for (size_t i = 0; i < m->ninst; i++) {
        free(m->inst[i].pts);
        free(m->inst[i].fseen);
        free(m->inst[i].bseen);
    }
    free(m->inst);
    free(m->iv);
    free(m->pts);
    free(m->firsts);
    free(m->bfirsts);
}

/* The part's figures from the .ptcov d (inputs sorted by time). */
static int make_part(struct cov_data *d, const char *host0, struct db_campaign_in *c,
                     struct made *m)
{
    memset(m, 0, sizeof(*m));
    int blocks = d->nblocks > 0;
    uint8_t *fseen = calloc(d->nfuncs + 1, 1), *bseen = calloc(d->nblocks + 1, 1);
    m->firsts = calloc(d->nfuncs + 1, sizeof(*m->firsts));
    m->bfirsts = calloc(d->nblocks + 1, sizeof(*m->bfirsts));
    if (!fseen || !bseen || !m->firsts || !m->bfirsts) {
        free(fseen);
        free(bseen);
        return -1;
    }
    int64_t nf = 0, nb = 0, last = 0, tmax = 0;
    size_t nfirst = 0;
    for (uint32_t i = 0; i < d->ninputs; i++)
        if (d->inputs[i].time_ms > tmax)
            tmax = d->inputs[i].time_ms;
    if (d->campaign_ms > tmax)
        tmax = d->campaign_ms;
    int rc = 0;
    for (uint32_t i = 0; i < d->ninputs && !rc; i++) {
        const struct cov_input *in = &d->inputs[i];
        /* an input of unknown time counts at the campaign's end */
        int64_t t = in->time_ms >= 0 ? in->time_ms : tmax;
        char iname[512];
        const char *ihost = in->origin < d->norigins ? d->origins[in->origin].host : NULL;
        instance_of(in->name, ihost, iname, sizeof(iname));
        size_t k = 0;
        while (k < m->ninst && strcmp(m->inst[k].name, iname))
            k++;
        if (k == m->ninst) {
            struct inst *x = realloc(m->inst, (m->ninst + 1) * sizeof(*x));
            if (!x) {
                rc = -1;
                break;
            }
            m->inst = x;
            memset(&x[k], 0, sizeof(x[k]));
            snprintf(x[k].name, sizeof(x[k].name), "%s", iname);
            x[k].host = in->origin < d->norigins && d->origins[in->origin].host[0]
                            ? d->origins[in->origin].host
                            : host0;
            x[k].fseen = calloc(d->nfuncs + 1, 1);
            x[k].bseen = calloc(d->nblocks + 1, 1);
            x[k].in.last_new_ms = -1;
            m->ninst++;
            if (!x[k].fseen || !x[k].bseen) {
                rc = -1;
                break;
            }
        }
        struct inst *x = &m->inst[k];
        x->in.inputs++;
        x->in.crashes += in->kind == COV_KIND_CRASH;
        x->in.hangs += in->kind == COV_KIND_HANG;
        c->inputs++;
        c->crashes += in->kind == COV_KIND_CRASH;
        c->hangs += in->kind == COV_KIND_HANG;
        int grew = 0, igrew = 0;
        for (uint32_t h = 0; h < in->nhits; h++) {
            uint32_t f = in->hits[h].func;
            if (!x->fseen[f]) {
                x->fseen[f] = 1;
                x->nf++;
                igrew = 1;
            }
            if (!fseen[f]) {
                fseen[f] = 1;
                nf++;
                grew = 1;
                const struct cov_func *fn = &d->funcs[f];
                m->firsts[nfirst++] = (struct db_cfirst){
                    d->modules[fn->module].path, fn->linkage, fn->file, fn->name, fn->line, t,
                    (uint32_t)k, in->name};
            }
        }
        for (uint32_t h = 0; blocks && h < in->nbhits; h++) {
            uint32_t b = in->bhits[h].block;
            if (!x->bseen[b]) {
                x->bseen[b] = 1;
                x->nb++;
                igrew = 1;
            }
            if (!bseen[b]) {
                bseen[b] = 1;
                nb++;
                grew = 1;
                m->bfirsts[m->nbfirsts++] = (struct db_cbfirst){b, t};
            }
        }
        if (igrew) {
            x->in.last_new_ms = t;
            if (push(&x->pts, &x->npts, t, x->nf, blocks ? x->nb : -1))
                rc = -1;
        }
        if (grew) {
            last = t;
            if (push(&m->pts, &m->npts, t, nf, blocks ? nb : -1))
                rc = -1;
        }
    }
    free(fseen);
    free(bseen);
    if (rc)
        return rc;
    m->iv = calloc(m->ninst + 1, sizeof(*m->iv));
    if (!m->iv)
        return -1;
    for (size_t k = 0; k < m->ninst; k++) {
        struct inst *x = &m->inst[k];
        x->in.name = x->name;
        x->in.host = x->host;
        x->in.functions = x->nf;
        x->in.blocks = blocks ? x->nb : -1;
        x->in.points = x->pts;
        x->in.npoints = x->npts;
        m->iv[k] = x->in;
    }
    c->inst = m->iv;
    c->ninst = m->ninst;
    c->points = m->pts;
    c->npoints = m->npts;
    c->firsts = m->firsts;
    c->nfirsts = nfirst;
    c->bfirsts = m->bfirsts;
    c->nbfirsts = m->nbfirsts;
    c->functions = nf;
    c->blocks = blocks ? nb : -1;
    c->last_new_ms = nfirst || m->nbfirsts ? last : -1;
    c->functions_total = d->nfuncs;
    c->blocks_total = blocks ? (int64_t)d->nblocks : -1;
    c->campaign_ms = d->campaign_ms >= 0 ? d->campaign_ms : tmax;
    return 0;
}

static const char *base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

int cov_add_file(const char *cmd, struct db *d, const char *path, const char *campaign,
                 const struct db_tag *tags, size_t ntags)
{
    char why[2048];
    struct cov_data cd;
    cov_data_init(&cd);
    if (cov_file_read(&cd, path, why, sizeof(why))) {
        fprintf(stderr, "ptcall %s: %s\n", cmd, why);
        cov_data_free(&cd);
        return 1;
    }
    if (!cd.nmodules) {
        fprintf(stderr, "ptcall %s: %s holds no module: nothing to store\n", cmd, path);
        cov_data_free(&cd);
        return 1;
    }
    char hex[DB_HASH_HEX], err[600];
    uint64_t bytes;
    struct db_hash *h = db_hash_start(path);
    if (!h || db_hash_finish(h, hex, &bytes, err, sizeof(err))) {
        fprintf(stderr, "ptcall %s: %s\n", cmd, h ? err : "out of memory");
        cov_data_free(&cd);
        return 1;
    }
    cov_data_sort_inputs(&cd);
    const struct cov_module *m0 = &cd.modules[0];
    char build[128], host[256] = "", name[512];
    if (m0->build_id[0])
        snprintf(build, sizeof(build), "%s", m0->build_id);
    else
        snprintf(build, sizeof(build), "map:%016llx", (unsigned long long)m0->identity);
    if (cd.norigins && cd.origins[0].host[0])
        snprintf(host, sizeof(host), "%s", cd.origins[0].host);
    else
        snprintf(host, sizeof(host), "%s", base_name(path)); /* before ORIGIN: the file */
    const char *program = base_name(m0->path);
    if (!campaign) {
        /* the default: the program and the file's creation day, say "zlib-2026-11-29" */
        char day[32] = "";
        time_t t = (time_t)cd.created;
        struct tm tm;
        if (gmtime_r(&t, &tm))
            strftime(day, sizeof(day), "%Y-%m-%d", &tm);
        snprintf(name, sizeof(name), "%s-%s", program, day);
        campaign = name;
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct db_campaign_in c = {.name = campaign, .program = program, .build_id = build,
                               .content_hash = hex, .file = path, .host = host, .tags = tags,
                               .ntags = ntags,
                               .added_ns = (int64_t)now.tv_sec * 1000000000 + now.tv_nsec};
    struct made mk;
    struct cov_reach_rows rr;
    int bad = make_part(&cd, host, &c, &mk);
    if (cov_campaign_reach(&cd, &c, &rr))
        bad = 1;
    if (bad) {
        cov_reach_rows_free(&rr);
        made_free(&mk);
        cov_data_free(&cd);
        return cli_fail(cmd, "out of memory", "nothing was added");
    }
    int64_t cid = 0, pid = 0, existing = 0;
    int why_c = 0;
    int e = db_campaign_add(d, &c, &cid, &pid, &existing, &why_c);
    int r = 0;
    if (!e) {
        printf("campaign %lld (", (long long)cid);
        cli_text_str(stdout, campaign);
        printf("): part %lld from ", (long long)pid);
        cli_text_str(stdout, path);
        printf(" (");
        cli_text_str(stdout, program);
        printf(", %lld inputs, %zu instance%s, %lld of %lld functions", (long long)c.inputs, c.ninst, c.ninst == 1 ? "" : "s", (long long)c.functions,
               (long long)c.functions_total);
        if (c.blocks_total >= 0)
            printf(", %lld of %lld blocks", (long long)c.blocks, (long long)c.blocks_total);
        printf(")\n");
    } else if (why_c == DB_CAMP_STORED) {
        char advice[160];
        snprintf(advice, sizeof(advice), "nothing was added (part %lld holds it)",
                 (long long)existing);
        r = cli_fail(cmd, d->err, advice);
    } else if (why_c) {
        r = cli_fail(cmd, d->err, "nothing was added");
    } else {
        r = cli_fail(cmd, d->err, db_cli_advice(d->ops == &db_pg_ops, e));
    }
    cov_reach_rows_free(&rr);
    made_free(&mk);
    cov_data_free(&cd);
    return r;
}

int cov_is_ptcov(const char *path)
{
    char magic[8] = {0};
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return 0;
    ssize_t k = read(fd, magic, sizeof(magic));
    close(fd);
    return k == (ssize_t)sizeof(magic) && !memcmp(magic, COV_FILE_MAGIC, 8);
}

/* The NAME=VALUE tags of --tag into tags (names malloc'ed): 0, or a usage error. */
int cov_tags_of(enum cli_cmd which, const struct cli_values *v, struct db_tag **tags,
                char ***names)
{
    *tags = calloc((size_t)v->db.tags.n + 1, sizeof(**tags));
    *names = calloc((size_t)v->db.tags.n + 1, sizeof(**names));
    if (!*tags || !*names)
        return cli_fail(cli_commands[which].name, "out of memory", "nothing was added");
    for (int i = 0; i < v->db.tags.n; i++) {
        const char *t = v->db.tags.v[i], *eq = strchr(t, '=');
        if (!((*names)[i] = strndup(t, (size_t)(eq - t))))
            return cli_fail(cli_commands[which].name, "out of memory", "nothing was added");
        (*tags)[i] = (struct db_tag){(*names)[i], eq + 1};
        for (int k = 0; k < i; k++)
            if (!strcmp((*names)[k], (*names)[i]))
                return cli_usage_error(which, "--tag %s is given twice: one value per tag",
                                       (*names)[i]);
    }
    return 0;
}

void cov_tags_free(const struct cli_values *v, struct db_tag *tags, char **names)
{
    for (int i = 0; names && i < v->db.tags.n; i++)
        free(names[i]);
    free(names);
    free(tags);
}

int cmd_cov_add(int argc, char **argv)
{
    const char *cmd = "cov add";
    struct cli_values v;
    int r = cli_parse(CMD_COV_ADD, argc, argv, &v, 0);
    if (r != CLI_GO)
        return r;
    if (!v.npos) {
        cli_values_free(&v);
        return cli_usage_error(CMD_COV_ADD, "no .ptcov file given");
    }
    struct db_tag *tags = NULL;
    char **names = NULL;
    r = cov_tags_of(CMD_COV_ADD, &v, &tags, &names);
    struct db d;
    if (!r) {
        const char *url = v.db.url ? v.db.url : db_default_url();
        int e = db_open(&d, url, DB_WRITE);
        if (e)
            r = cli_fail(cmd, d.err, db_cli_advice(db_url_is_pg(url), e));
    }
    if (!r) {
        int failed = 0;
        for (int i = 0; i < v.npos; i++)
            failed += cov_add_file(cmd, &d, v.pos[i], v.cov.campaign, tags,
                                   (size_t)v.db.tags.n) != 0;
        db_close(&d);
        r = failed ? 1 : cli_flush_output(cmd, "the parts added");
    }
    cov_tags_free(&v, tags, names);
    cli_values_free(&v);
    return r;
}
