#!/usr/bin/env bash
# PTY-2 measured: "waiting for input" on programs that prompt (shells, REPLs, readline,
# /dev/tty, epoll, TUIs) and on programs that do not (servers on loopback, sleeps,
# loops that print, computations, reads of a pipe), all at once through one
# supervised session. Prints the table; fails on any false "waiting" or missed prompt.
# Usage: bench/pty-waiting.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo nextest run -p wavesh --test reliability --no-capture \
    -E 'test(/pty_2_waiting_is_told_right/)'
