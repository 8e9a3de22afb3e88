#!/usr/bin/env bash
# cluster/distribute: a 50,000-entry directory over four bricks lists
# every name exactly once (plain readdir and readdirplus through ls -l),
# with link files (renames across hash ranges) never shown.
# TIMEOUT: 900
# REQUIRES: root fuse
. "$(dirname "$0")/../lib/include.rc"

TEST dist4_start
TEST mkdir "$M0/big"
TEST python3 -c "
import os
for i in range(50000):
    os.close(os.open('$M0/big/entry-%05d' % i, os.O_CREAT | os.O_WRONLY, 0o644))
for i in range(20):
    os.rename('$M0/big/entry-%05d' % i, '$M0/big/moved-%05d' % i)
"
# Some renames left link files on the bricks; they must not show.
TEST test "$(find "$T"/bricks/b*/big -maxdepth 1 -type f -perm 1000 | wc -l)" -gt 0
EXPECT "50000" sh -c "ls '$M0/big' | wc -l"
EXPECT "" sh -c "ls '$M0/big' | sort | uniq -d"
EXPECT "50000" sh -c "ls -l '$M0/big' | grep -c '^-'"
EXPECT "" sh -c "ls -l '$M0/big' | awk '{print \$NF}' | sort | uniq -d"
EXPECT "20" sh -c "ls '$M0/big' | grep -c '^moved-'"
