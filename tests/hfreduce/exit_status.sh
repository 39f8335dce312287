#!/usr/bin/env bash
# Runs a command and prints its exit status ("exit-status N"), for mpirun runs whose own exit
# status does not tell (with --enable-recovery mpirun exits 0 whatever its ranks returned).
# SPDX-License-Identifier: Apache-2.0
"$@"
rc=$?
echo "exit-status $rc"
exit $rc
