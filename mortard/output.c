/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output: what a command prints. A command fills a text buffer (the
 * GlusterFS-like text output) and a tree of named nodes; XML wraps the
 * tree in <cliOutput><opRet/><opErrno/><opErrstr/>... like GlusterFS's
 * --xml, JSON renders the same tree as an object (a node marked is_list
 * becomes an array of its children).
 * Threads: the worker thread; no shared state.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mortard.h"


static void
md_sbuf_vprintf(struct md_sbuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    int n;

    if (sb->is_oom)
        return;
    va_copy(ap2, ap);
    n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        sb->is_oom = true;
        return;
    }
    if (sb->len + (size_t)n + 1 > sb->cap) {
        size_t cap = (sb->len + (size_t)n + 1) * 2;
        char *nd = realloc(sb->data, cap);

        if (nd == NULL) {
            sb->is_oom = true;
            return;
        }
        sb->data = nd;
        sb->cap = cap;
    }
    vsnprintf(sb->data + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}


void
md_sbuf_printf(struct md_sbuf *sb, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    md_sbuf_vprintf(sb, fmt, ap);
    va_end(ap);
}


void
md_sbuf_clear(struct md_sbuf *sb)
{
    free(sb->data);
    memset(sb, 0, sizeof(*sb));
}


struct md_node *
md_node_add(struct md_node *parent, const char *name, const char *text)
{
    struct md_node *n;

    if (parent == NULL)
        return NULL;
    n = calloc(1, sizeof(*n));
    if (n == NULL)
        return NULL;
    n->name = strdup(name);
    n->text = text != NULL ? strdup(text) : NULL;
    if (n->name == NULL || (text != NULL && n->text == NULL)) {
        md_node_free(n);
        return NULL;
    }
    if (parent->last != NULL)
        parent->last->next = n;
    else
        parent->kids = n;
    parent->last = n;
    return n;
}


struct md_node *
md_node_addf(struct md_node *parent, const char *name, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return md_node_add(parent, name, buf);
}


void
md_node_free(struct md_node *n)
{
    while (n != NULL) {
        struct md_node *next = n->next;

        md_node_free(n->kids);
        free(n->name);
        free(n->text);
        free(n);
        n = next;
    }
}


void
md_result_init(struct md_result *r)
{
    memset(r, 0, sizeof(*r));
    r->root = calloc(1, sizeof(*r->root));
}


void
md_result_clear(struct md_result *r)
{
    md_sbuf_clear(&r->text);
    md_node_free(r->root);
    r->root = NULL;
}


void
md_result_fail(struct md_result *r, int ret, int op_errno, const char *fmt,
               ...)
{
    va_list ap;

    r->ret = ret;
    r->op_errno = op_errno;
    va_start(ap, fmt);
    vsnprintf(r->errstr, sizeof(r->errstr), fmt, ap);
    va_end(ap);
}


static void
md_xml_escape(struct md_sbuf *sb, const char *s)
{
    for (; *s != '\0'; s++) {
        switch (*s) {
        case '<':
            md_sbuf_printf(sb, "&lt;");
            break;
        case '>':
            md_sbuf_printf(sb, "&gt;");
            break;
        case '&':
            md_sbuf_printf(sb, "&amp;");
            break;
        case '"':
            md_sbuf_printf(sb, "&quot;");
            break;
        default:
            md_sbuf_printf(sb, "%c", *s);
        }
    }
}


static void
md_xml_node(struct md_sbuf *sb, const struct md_node *n, int depth)
{
    for (; n != NULL; n = n->next) {
        md_sbuf_printf(sb, "%*s<%s>", depth * 2, "", n->name);
        if (n->kids != NULL) {
            md_sbuf_printf(sb, "\n");
            md_xml_node(sb, n->kids, depth + 1);
            md_sbuf_printf(sb, "%*s", depth * 2, "");
        } else if (n->text != NULL) {
            md_xml_escape(sb, n->text);
        }
        md_sbuf_printf(sb, "</%s>\n", n->name);
    }
}


static void
md_json_str(struct md_sbuf *sb, const char *s)
{
    md_sbuf_printf(sb, "\"");
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            md_sbuf_printf(sb, "\\%c", c);
        else if (c == '\n')
            md_sbuf_printf(sb, "\\n");
        else if (c < 0x20)
            md_sbuf_printf(sb, "\\u%04x", c);
        else
            md_sbuf_printf(sb, "%c", c);
    }
    md_sbuf_printf(sb, "\"");
}


static void md_json_value(struct md_sbuf *sb, const struct md_node *n);


static void
md_json_members(struct md_sbuf *sb, const struct md_node *kids,
                bool is_first)
{
    for (const struct md_node *k = kids; k != NULL; k = k->next) {
        if (!is_first)
            md_sbuf_printf(sb, ",");
        is_first = false;
        md_json_str(sb, k->name);
        md_sbuf_printf(sb, ":");
        md_json_value(sb, k);
    }
}


static void
md_json_value(struct md_sbuf *sb, const struct md_node *n)
{
    if (n->is_list) {
        md_sbuf_printf(sb, "[");
        for (const struct md_node *k = n->kids; k != NULL; k = k->next) {
            md_json_value(sb, k);
            if (k->next != NULL)
                md_sbuf_printf(sb, ",");
        }
        md_sbuf_printf(sb, "]");
    } else if (n->kids != NULL) {
        md_sbuf_printf(sb, "{");
        md_json_members(sb, n->kids, true);
        md_sbuf_printf(sb, "}");
    } else {
        md_json_str(sb, n->text != NULL ? n->text : "");
    }
}


int
md_render(const struct md_result *r, int format, char **out)
{
    struct md_sbuf sb = {0};
    const struct md_node *kids = r->root != NULL ? r->root->kids : NULL;

    if (format == 1) {
        md_sbuf_printf(&sb, "<?xml version=\"1.0\" encoding=\"UTF-8\" "
                       "standalone=\"yes\"?>\n<cliOutput>\n  <opRet>%d"
                       "</opRet>\n  <opErrno>%d</opErrno>\n  <opErrstr>",
                       r->ret == 0 ? 0 : -1, r->op_errno);
        md_xml_escape(&sb, r->errstr);
        md_sbuf_printf(&sb, "</opErrstr>\n");
        if (r->ret == 0)
            md_xml_node(&sb, kids, 1);
        md_sbuf_printf(&sb, "</cliOutput>\n");
    } else if (format == 2) {
        md_sbuf_printf(&sb, "{\"opRet\":%d,\"opErrno\":%d,\"opErrstr\":",
                       r->ret == 0 ? 0 : -1, r->op_errno);
        md_json_str(&sb, r->errstr);
        if (r->ret == 0)
            md_json_members(&sb, kids, false);
        md_sbuf_printf(&sb, "}\n");
    } else {
        md_sbuf_printf(&sb, "%s", r->text.data != NULL ? r->text.data : "");
    }
    if (sb.is_oom) {
        md_sbuf_clear(&sb);
        return -ENOMEM;
    }
    if (sb.data == NULL) {
        sb.data = strdup("");
        if (sb.data == NULL)
            return -ENOMEM;
    }
    *out = sb.data;
    return 0;
}
