/* SPDX-License-Identifier: GPL-2.0-or-later */
/* test-metrics: the Prometheus text of a graph (fop families, histogram
 * cumulative and ending at _count, memory, translators' own families
 * grouped, label escapes) and the HTTP server (200 with the text and its
 * content type, HEAD, 404, 405, 400, an oversized request, a port in use
 * and a bad address as one-line errors, an idle connection not holding
 * the server, stop with a connection open). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "vl-test.h"

/* test/mx-cache: reports two counters of its own. */
static void
mx_metrics(vl_xlator_t *xl, vl_metrics_sink_t *sink)
{
    vl_metrics_emit(sink, "mortar_test_hits_total", "counter",
                    "Test hits.", 7);
    vl_metrics_emit(sink, "mortar_test_entries", "gauge", "Test entries.",
                    3);
}


static const vl_xlator_class_t cls_mx_cache = {
    .abi = VL_XLATOR_ABI, .type = "test/mx-cache", .flags = VL_XL_ONE_CHILD,
    .metrics = mx_metrics,
};


static int
setup(void **state)
{
    vl_global_init();
    vl_log_set_level(VL_LOG_CRITICAL);
    assert_int_equal(vl_registry_add(&cls_mx_cache), 0);
    return 0;
}


static struct vl_test_graph *
graph_new(const char *text)
{
    vl_err_t err = {{0}};
    struct vl_test_graph *g = vl_test_graph_new(text, &err);

    if (g == NULL)
        fail_msg("graph: %s", err.msg);
    return g;
}


static const char *graph_text =
    "volume m\n type debug/mock\n option auto-answer on\nend-volume\n"
    "volume c1\n type test/mx-cache\n subvolumes m\nend-volume\n"
    "volume c2\n type test/mx-cache\n subvolumes c1\nend-volume\n";


static char *
text_of(const char *volume)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);

    assert_non_null(out);
    vl_metrics_write_graphs(out, volume, NULL);
    assert_int_equal(fclose(out), 0);
    return buf;
}


static void
wind_n(struct vl_test_graph *g, vl_fop_t op, int n)
{
    int i;

    for (i = 0; i < n; i++) {
        struct vl_test_result res = {0};

        vl_test_wind(vl_req_new(g->graph->top, op), &res);
        assert_int_equal(res.n_done, 1);
        vl_test_result_clear(&res);
    }
}


static void
test_text(void **state)
{
    struct vl_test_graph *g = graph_new(graph_text);
    char *t;
    char *p;
    uint64_t prev = 0;
    int n_buckets = 0;

    wind_n(g, VL_FOP_STAT, 3);
    t = text_of("v\"1");
    /* Counts per translator and fop; the volume label escaped. */
    assert_non_null(strstr(t, "# TYPE mortar_fop_total counter\n"));
    assert_non_null(strstr(
        t, "mortar_fop_total{volume=\"v\\\"1\",xlator=\"c2\",fop=\"stat\"} "
           "3\n"));
    assert_non_null(strstr(
        t, "mortar_fop_total{volume=\"v\\\"1\",xlator=\"m\",fop=\"stat\"} "
           "3\n"));
    assert_non_null(strstr(t, "mortar_fop_errors_total{volume=\"v\\\"1\","
                              "xlator=\"m\",fop=\"stat\"} 0\n"));
    /* No fop never answered. */
    assert_null(strstr(t, "fop=\"lookup\""));
    /* The histogram: cumulative, +Inf equal to _count. */
    assert_non_null(strstr(t, "# TYPE mortar_fop_latency_seconds "
                              "histogram\n"));
    p = t;
    while ((p = strstr(p, "mortar_fop_latency_seconds_bucket{volume="
                          "\"v\\\"1\",xlator=\"c1\",fop=\"stat\"")) != NULL) {
        uint64_t v;

        p = strchr(p, '}');
        v = strtoull(p + 2, NULL, 10);
        assert_true(v >= prev);
        prev = v;
        n_buckets++;
    }
    assert_int_equal(n_buckets, VL_LAT_BUCKETS);
    assert_int_equal(prev, 3);
    assert_non_null(strstr(t, ",le=\"1e-06\"}"));
    assert_non_null(strstr(t, ",le=\"+Inf\"} 3\n"));
    assert_non_null(strstr(t, "mortar_fop_latency_seconds_count{volume="
                              "\"v\\\"1\",xlator=\"c1\",fop=\"stat\"} 3\n"));
    /* Memory, pending, and the translators' own families, one HELP each
     * with both translators' samples. */
    assert_non_null(strstr(t, "mortar_xlator_memory_bytes{volume=\"v\\\"1\","
                              "xlator=\"m\"} "));
    assert_non_null(strstr(t, "mortar_requests_pending{volume=\"v\\\"1\"} "
                              "0\n"));
    p = strstr(t, "# HELP mortar_test_hits_total Test hits.\n"
                  "# TYPE mortar_test_hits_total counter\n"
                  "mortar_test_hits_total{volume=\"v\\\"1\",xlator=\"c1\"} 7\n"
                  "mortar_test_hits_total{volume=\"v\\\"1\",xlator=\"c2\"} "
                  "7\n");
    assert_non_null(p);
    assert_null(strstr(p + 1, "# HELP mortar_test_hits_total"));
    assert_non_null(strstr(t, "# TYPE mortar_test_entries gauge\n"));
    free(t);

    /* Values move. */
    wind_n(g, VL_FOP_STAT, 2);
    t = text_of("v");
    assert_non_null(strstr(
        t, "mortar_fop_total{volume=\"v\",xlator=\"c2\",fop=\"stat\"} 5\n"));
    free(t);
    vl_test_graph_free(g);
}


static void
fill_graphs(FILE *out, void *arg)
{
    vl_metrics_write_graphs(out, arg, "h:/b\\1");
}


static int
connect_to(unsigned port)
{
    struct sockaddr_in sin = {.sin_family = AF_INET,
                              .sin_port = htons((uint16_t)port)};
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    assert_true(fd >= 0);
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    return fd;
}


/* Sends req and returns the whole answer (the server closes). */
static char *
http(unsigned port, const char *req, size_t len)
{
    int fd = connect_to(port);
    size_t cap = 1 << 16;
    size_t n = 0;
    char *buf = malloc(cap);
    ssize_t r;

    assert_non_null(buf);
    assert_int_equal(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
    while ((r = read(fd, buf + n, cap - 1 - n)) > 0) {
        n += (size_t)r;
        if (n == cap - 1) {
            cap *= 2;
            buf = realloc(buf, cap);
            assert_non_null(buf);
        }
    }
    buf[n] = '\0';
    close(fd);
    return buf;
}


static char *
http_s(unsigned port, const char *req)
{
    return http(port, req, strlen(req));
}


static void
test_http(void **state)
{
    struct vl_test_graph *g = graph_new(graph_text);
    vl_metrics_http_t *srv = NULL;
    vl_metrics_http_t *srv2 = NULL;
    vl_err_t err = {{0}};
    char want[128];
    unsigned port;
    char *big;
    char *a;
    int idle;

    wind_n(g, VL_FOP_READ, 1);
    assert_int_equal(vl_metrics_http_start(NULL, 0, fill_graphs, "vol", &srv,
                                           &err), 0);
    port = vl_metrics_http_port(srv);
    assert_true(port > 0);
    /* An idle connection does not hold the server. */
    idle = connect_to(port);

    a = http_s(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_true(strncmp(a, "HTTP/1.1 200 OK\r\n", 17) == 0);
    assert_non_null(strstr(a, "Content-Type: text/plain; version=0.0.4\r\n"));
    assert_non_null(strstr(a, "Connection: close\r\n"));
    assert_non_null(strstr(a, "\r\n\r\n# HELP "));
    assert_non_null(strstr(a, "mortar_fop_total{volume=\"vol\",brick=\"h:/b"
                              "\\\\1\",xlator=\"c2\",fop=\"read\"} 1\n"));
    free(a);
    /* Query parameters are ignored; HEAD has the headers only. */
    a = http_s(port, "HEAD /metrics?x=1 HTTP/1.0\r\n\r\n");
    assert_true(strncmp(a, "HTTP/1.1 200 OK\r\n", 17) == 0);
    assert_non_null(strstr(a, "Content-Length: "));
    assert_null(strstr(a, "# HELP"));
    free(a);
    a = http_s(port, "GET / HTTP/1.1\r\n\r\n");
    assert_true(strncmp(a, "HTTP/1.1 404 Not Found\r\n", 24) == 0);
    free(a);
    a = http_s(port, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    assert_true(strncmp(a, "HTTP/1.1 405 Method Not Allowed\r\n", 33) == 0);
    assert_non_null(strstr(a, "Allow: GET, HEAD\r\n"));
    free(a);
    a = http_s(port, "hello\r\n\r\n");
    assert_true(strncmp(a, "HTTP/1.1 400 Bad Request\r\n", 26) == 0);
    free(a);
    big = malloc(VL_METRICS_MAX_REQUEST + 100);
    memset(big, 'a', VL_METRICS_MAX_REQUEST + 100);
    memcpy(big, "GET /metrics HTTP/1.1\r\nX: ", 26);
    a = http(port, big, VL_METRICS_MAX_REQUEST + 100);
    assert_true(strncmp(a, "HTTP/1.1 431 ", 13) == 0);
    free(a);
    free(big);

    /* The port in use: one line naming it, and nothing started. */
    assert_int_equal(vl_metrics_http_start("127.0.0.1", port, fill_graphs,
                                           "vol", &srv2, &err), -EADDRINUSE);
    snprintf(want, sizeof(want), "metrics: cannot listen on 127.0.0.1:%u: "
             "Address already in use", port);
    assert_string_equal(err.msg, want);
    assert_null(srv2);
    assert_int_equal(vl_metrics_http_start("no.such.host", 0, fill_graphs,
                                           "vol", &srv2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "metrics: bad address 'no.such.host'"));
    assert_null(strchr(err.msg, '\n'));

    /* Stops with the idle connection still open. */
    vl_metrics_http_stop(srv);
    close(idle);
    vl_test_graph_free(g);
}


int
main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_http),
    };

    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, setup, NULL);
}
