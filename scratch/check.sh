#!/bin/bash
# scratch (not committed): devbench of the TMA steps, their GPU tests
timeout -k 5 300 python -m matmulstudy.devbench --chapter tensor --time 4096,8192,2048 2>&1 | tail -22
timeout -k 5 240 python -m pytest -q -m gpu -k "wgmma" -p no:cacheprovider 2>&1 | tail -3
