/* libmicrohttpd, loaded when `ptcall serve` starts (web_mhd.c): the other commands do not load
 * it, nor GnuTLS and the libraries under it, which cost every command 10 ms of its start on
 * the development VM. web_http.c's calls keep libmicrohttpd's names: each is a macro for the
 * loaded function. Include this instead of <microhttpd.h>. */
#ifndef PTCALL_WEB_MHD_H
#define PTCALL_WEB_MHD_H

#include <microhttpd.h>
#include <stddef.h>

#define WEB_MHD_FUNCS(X)                                                                           \
    X(MHD_add_response_header) X(MHD_create_response_from_buffer) X(MHD_destroy_response)        \
    X(MHD_get_connection_info) X(MHD_get_connection_values) X(MHD_get_daemon_info)               \
    X(MHD_lookup_connection_value) X(MHD_queue_response) X(MHD_start_daemon) X(MHD_stop_daemon)

struct web_mhd {
#define WEB_MHD_FIELD(f) __typeof__(f) *f;
    WEB_MHD_FUNCS(WEB_MHD_FIELD)
#undef WEB_MHD_FIELD
};

/* Loads libmicrohttpd once (any thread). 0, or -1 with a line in err that says what to
 * install. */
int web_mhd_load(char *err, size_t n);
/* The loaded functions: only after web_mhd_load returned 0. */
const struct web_mhd *web_mhd(void);

#ifndef WEB_MHD_LOADER /* web_mhd.c names the fields */
#define MHD_add_response_header (web_mhd()->MHD_add_response_header)
#define MHD_create_response_from_buffer (web_mhd()->MHD_create_response_from_buffer)
#define MHD_destroy_response (web_mhd()->MHD_destroy_response)
#define MHD_get_connection_info (web_mhd()->MHD_get_connection_info)
#define MHD_get_connection_values (web_mhd()->MHD_get_connection_values)
#define MHD_get_daemon_info (web_mhd()->MHD_get_daemon_info)
#define MHD_lookup_connection_value (web_mhd()->MHD_lookup_connection_value)
#define MHD_queue_response (web_mhd()->MHD_queue_response)
#define MHD_start_daemon (web_mhd()->MHD_start_daemon)
#define MHD_stop_daemon (web_mhd()->MHD_stop_daemon)
#endif

#endif
