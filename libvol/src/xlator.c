/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xlator: event delivery between translators (notify and its default).
 *
 * Threads: notify may run on any thread; xl->is_up is a plain flag set by
 * the thread that delivers CHILD_UP/CHILD_DOWN.
 */
#include "config.h"

#include "core.h"


int
vl_notify_default(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    size_t i;

    switch (ev) {
    case VL_EV_CHILD_UP:
    case VL_EV_CHILD_DOWN:
        vl_notify_parents(xl, ev);
        break;
    case VL_EV_UPCALL:
        vl_notify_parents_data(xl, ev, data);
        break;
    case VL_EV_PARENT_UP:
    case VL_EV_PARENT_DOWN:
    case VL_EV_CLIENT_DISCONNECT:
    case VL_EV_RECONNECT:
        for (i = 0; i < xl->n_children; i++)
            vl_notify(xl->children[i], ev, data);
        break;
    }
    return 0;
}


int
vl_notify(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    if (xl->cls->notify != NULL)
        return xl->cls->notify(xl, ev, data);
    return vl_notify_default(xl, ev, data);
}


void
vl_notify_parents(vl_xlator_t *child, vl_event_t ev)
{
    size_t i;

    if (ev == VL_EV_CHILD_UP)
        child->is_up = true;
    else if (ev == VL_EV_CHILD_DOWN)
        child->is_up = false;
    for (i = 0; i < child->n_parents; i++)
        vl_notify(child->parents[i], ev, child);
}


void
vl_notify_parents_data(vl_xlator_t *xl, vl_event_t ev, void *data)
{
    for (size_t i = 0; i < xl->n_parents; i++)
        vl_notify(xl->parents[i], ev, data);
}
