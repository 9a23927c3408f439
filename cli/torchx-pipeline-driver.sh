#!/bin/sh
# torchx-pipeline-driver: the composite driver's name before it was torchx-composite-driver, kept
# for what calls it by that name; the driver beside this script does the work.
exec "$(dirname "$(readlink -f "$0")")/torchx-composite-driver" "$@"
