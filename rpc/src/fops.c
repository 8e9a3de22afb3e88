/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fops: which XDR types carry each file operation, so that client and
 * server pick the same filter for a procedure. Procedure numbers follow
 * fops.def (append only, so numbers are stable). Threads: constant tables.
 */
#include "config.h"

#include "vrpc.h"

#define D(op, a, r) [VL_FOP_##op] = {(xdrproc_t)xdr_##a, VRPC_RSP_##r}

static const struct vrpc_fop_desc fop_descs[VL_FOP_COUNT] = {
    D(LOOKUP, mrt_lookup_args, LOOKUP),
    D(STAT, mrt_stat_args, IATT),
    D(SETATTR, mrt_setattr_args, IATT),
    D(ACCESS, mrt_access_args, STATUS),
    D(READLINK, mrt_readlink_args, READLINK),
    D(MKNOD, mrt_mknod_args, ENTRY),
    D(MKDIR, mrt_mkdir_args, ENTRY),
    D(UNLINK, mrt_unlink_args, ENTRY),
    D(RMDIR, mrt_unlink_args, ENTRY),
    D(SYMLINK, mrt_symlink_args, ENTRY),
    D(RENAME, mrt_rename_args, ENTRY),
    D(LINK, mrt_link_args, ENTRY),
    D(CREATE, mrt_create_args, CREATE),
    D(OPEN, mrt_open_args, FD),
    D(READ, mrt_read_args, COUNT),
    D(WRITE, mrt_write_args, COUNT),
    D(FLUSH, mrt_fd_args, STATUS),
    D(FSYNC, mrt_fsync_args, STATUS),
    D(OPENDIR, mrt_opendir_args, OPENDIR),
    D(READDIR, mrt_readdir_args, READDIR),
    D(STATFS, mrt_loc_args, STATFS),
    D(SETXATTR, mrt_setxattr_args, STATUS),
    D(GETXATTR, mrt_getxattr_args, GETXATTR),
    D(REMOVEXATTR, mrt_removexattr_args, STATUS),
    D(LK, mrt_lk_args, LK),
    D(INODELK, mrt_inodelk_args, STATUS),
    D(ENTRYLK, mrt_entrylk_args, STATUS),
    D(FALLOCATE, mrt_fallocate_args, IATT),
    D(COPY_FILE_RANGE, mrt_copy_file_range_args, COUNT),
    D(LSEEK, mrt_lseek_args, LSEEK),
    D(XATTROP, mrt_xattrop_args, XATTROP),
    D(RCHECKSUM, mrt_rchecksum_args, RCHECKSUM),
};

static const xdrproc_t rsp_xdr[] = {
    [VRPC_RSP_STATUS] = (xdrproc_t)xdr_mrt_status_rsp,
    [VRPC_RSP_IATT] = (xdrproc_t)xdr_mrt_iatt_rsp,
    [VRPC_RSP_FD] = (xdrproc_t)xdr_mrt_fd_rsp,
    [VRPC_RSP_COUNT] = (xdrproc_t)xdr_mrt_count_rsp,
    [VRPC_RSP_READLINK] = (xdrproc_t)xdr_mrt_readlink_rsp,
    [VRPC_RSP_READDIR] = (xdrproc_t)xdr_mrt_readdir_rsp,
    [VRPC_RSP_STATFS] = (xdrproc_t)xdr_mrt_statfs_rsp,
    [VRPC_RSP_GETXATTR] = (xdrproc_t)xdr_mrt_getxattr_rsp,
    [VRPC_RSP_LK] = (xdrproc_t)xdr_mrt_lk_rsp,
    [VRPC_RSP_LSEEK] = (xdrproc_t)xdr_mrt_lseek_rsp,
    [VRPC_RSP_ENTRY] = (xdrproc_t)xdr_mrt_entry_rsp,
    [VRPC_RSP_CREATE] = (xdrproc_t)xdr_mrt_create_rsp,
    [VRPC_RSP_LOOKUP] = (xdrproc_t)xdr_mrt_lookup_rsp,
    [VRPC_RSP_OPENDIR] = (xdrproc_t)xdr_mrt_opendir_rsp,
    [VRPC_RSP_XATTROP] = (xdrproc_t)xdr_mrt_xattrop_rsp,
    [VRPC_RSP_RCHECKSUM] = (xdrproc_t)xdr_mrt_rchecksum_rsp,
    [VRPC_RSP_CPD] = (xdrproc_t)xdr_mrt_cpd_rsp,
    [VRPC_RSP_LOOKUP_XOP] = (xdrproc_t)xdr_mrt_lookup_xop_rsp,
};

/* Compound procedures, in MRT_PROC_INODELK_XOP order, with the protocol
 * version that brought each. */
static const struct {
    uint32_t proc;
    vl_fop_t op;
    struct vrpc_fop_desc desc;
    uint32_t min_proto;
} cpd_descs[] = {
    {MRT_PROC_INODELK_XOP, VL_FOP_INODELK,
     {(xdrproc_t)xdr_mrt_inodelk_xop_args, VRPC_RSP_CPD}, 8},
    {MRT_PROC_ENTRYLK_XOP, VL_FOP_ENTRYLK,
     {(xdrproc_t)xdr_mrt_entrylk_xop_args, VRPC_RSP_CPD}, 8},
    {MRT_PROC_XATTROP_UNLOCK, VL_FOP_XATTROP,
     {(xdrproc_t)xdr_mrt_xattrop_unlock_args, VRPC_RSP_CPD}, 8},
    {MRT_PROC_LOOKUP_XOP, VL_FOP_LOOKUP,
     {(xdrproc_t)xdr_mrt_lookup_xop_args, VRPC_RSP_LOOKUP_XOP}, 9},
};


int
vrpc_proc_to_fop(uint32_t proc)
{
    if (proc == 0 || proc > VL_FOP_COUNT)
        return -1;
    return (int)proc - 1;
}


const struct vrpc_fop_desc *
vrpc_fop_desc(vl_fop_t op)
{
    if ((unsigned)op >= VL_FOP_COUNT || fop_descs[op].args == NULL)
        return NULL;
    return &fop_descs[op];
}


xdrproc_t
vrpc_rsp_xdr(enum vrpc_rsp_kind kind)
{
    return rsp_xdr[kind];
}


/* cpd_descs' row of compound procedure proc, -1 if none. */
static int
cpd_row(uint32_t proc)
{
    for (size_t i = 0; i < sizeof(cpd_descs) / sizeof(cpd_descs[0]); i++)
        if (cpd_descs[i].proc == proc)
            return (int)i;
    return -1;
}


const struct vrpc_fop_desc *
vrpc_cpd_desc(uint32_t proc, vl_fop_t *op)
{
    int k = cpd_row(proc);

    if (k < 0)
        return NULL;
    *op = cpd_descs[k].op;
    return &cpd_descs[k].desc;
}


uint32_t
vrpc_cpd_min_proto(uint32_t proc)
{
    int k = cpd_row(proc);

    return k < 0 ? 0 : cpd_descs[k].min_proto;
}


uint32_t
vrpc_cpd_proc(vl_fop_t op)
{
    for (size_t i = 0; i < sizeof(cpd_descs) / sizeof(cpd_descs[0]); i++)
        if (cpd_descs[i].op == op)
            return cpd_descs[i].proc;
    return 0;
}
